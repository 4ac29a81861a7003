// Multi-rank trace discovery, in Magpie's order (GapAnalyzer.detect_trace_files plus the newer
// sub-directory layouts):
//   1. <dir>/*-rank-*.pt.trace.json.gz with rank from "-rank-(\d+)\." in the file name;
//   2. else <dir>/*-rank-*.pt.trace.json the same way;
//   3. else sub-directories rank_<N>/ (also rank<N>, rank-<N>) and vLLM's pp<i>_dp<j>_tp<N>/
//      (rank = N), each contributing its trace files found by these same rules;
//   4. else every *.json.gz then every *.json (names sorted; names containing "_docker.log" or
//      "async_llm" skipped) whose head looks like a trace (root list, or a "traceEvents" key),
//      rank from "rank[-_]?(\d+)" in the name, else the file's position.
// The result is sorted by rank (stable). A directory holding torch_trace/ is descended first.
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
  std::string rule;               ///< which rule matched: rank_gz, rank_json, subdirs, fallback
  std::vector<std::string> skipped;  ///< fallback candidates rejected (not a trace)
};

/// Resolves `dir` (descending into torch_trace/ when present) and finds the rank traces.
discovery discover_rank_traces(const fs::path& dir);
/// Rank from "-rank-(\d+)\." in a file name, or -1.
int rank_from_magpie_name(const std::string& file_name);
/// True when the first bytes (decompressed when gzip) look like a trace document.
bool looks_like_trace(const fs::path& file);

}  // namespace magpie::trace
