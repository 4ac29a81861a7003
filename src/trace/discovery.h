// Multi-rank trace discovery, in upstream Magpie's order (GapAnalyzer.detect_trace_files plus the newer
// sub-directory layouts):
//   1+2. <dir>/*-rank-*.pt.trace.json.gz and <dir>/*-rank-*.pt.trace.json with the rank from
//      "-rank-(\d+)\." in the file name (upstream Magpie takes the .json files only when there is no
//      .json.gz; magpie takes both, so a rank-0 .json beside a rank-3 .json.gz is not lost);
//   3. else sub-directories rank_<N>/ (also rank<N>, rank-<N>) and vLLM's pp<i>_dp<j>_tp<N>/
//      (rank = N), each contributing its trace files found by these same rules;
//   4. else every *.json.gz then every *.json (names sorted; names containing "_docker.log" or
//      "async_llm" skipped) whose head looks like a trace (root list, or a "traceEvents" key),
//      rank from "rank[-_]?(\d+)" in the name, else the file's position.
// The result is sorted by rank (stable). A directory holding torch_trace/ is descended first.
// Several files claiming one rank are not guessed between: the rank is listed in `duplicates`
// unless one of its files is named in `prefer` (the --rank-file choice).
#pragma once

#include <string>
#include <vector>

#include "core/fs.h"

namespace magpie::trace {

struct rank_trace {
  int rank = 0;
  fs::path path;
};

struct discovery {
  fs::path trace_dir;             ///< the directory searched (after torch_trace/ descent)
  std::vector<rank_trace> files;  ///< sorted by rank
  std::string rule;               ///< which rule matched: rank_gz, rank_json, rank_gz+json, subdirs, fallback
  std::vector<std::string> skipped;  ///< fallback candidates rejected (not a trace)
  /// Ranks claimed by several files (none of them preferred): "rank N: a, b". Their files are
  /// left out of `files`.
  std::vector<std::string> duplicates;
  std::vector<std::string> notes;  ///< choices made (preferred files), for the log and reports
  /// "Found N trace file(s) in DIR (rule): rank 0 a.json, rank 3 b.json.gz".
  std::string summary() const;
};

/// Resolves `dir` (descending into torch_trace/ when present) and finds the rank traces.
/// `prefer`: file paths or names that win where several files claim the same rank.
discovery discover_rank_traces(const fs::path& dir, const std::vector<std::string>& prefer = {});
/// Rank from "-rank-(\d+)\." in a file name, or -1.
int rank_from_magpie_name(const std::string& file_name);
/// True when the first bytes (decompressed when gzip) look like a trace document.
bool looks_like_trace(const fs::path& file);

}  // namespace magpie::trace
