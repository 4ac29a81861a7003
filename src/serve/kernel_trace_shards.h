// Magpie's TargetedKernelTrace artifacts (research magpie.md §9), schema
// "magpie.targeted-kernel-trace" 1.0.0: `targeted-trace adapt-torch` streams the kernel events of
// PyTorch-profiler traces that match target name patterns into checksummed per-(rank, pid)
// JSONL shards plus a manifest; `targeted-trace postprocess` validates shards line by line
// (sequence, chained SHA-256, end sentinel, manifest receipts) and writes a bounded summary.
//
// Byte compatibility: envelopes and checksums use Python's canonical JSON (sorted keys, compact
// separators, UTF-8, Python float repr), so Magpie's postprocessor accepts our shards and ours
// accepts Magpie's. Diagnostic only: manifests are never reward-eligible. The JSON encoding, the
// envelopes and the target list's JSON are kernel_trace_shards_codec.h's; callers get typed
// results and the printed documents.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"

namespace magpie::serve::targeted {

inline constexpr const char* k_schema_name = "magpie.targeted-kernel-trace";
inline constexpr const char* k_schema_version = "1.0.0";

/// Deterministic sampling from sha256(run_seed + "\0" + key) (first 8 bytes, big-endian).
bool should_sample(const std::string& run_seed, const std::string& key, double sample_rate);

struct target_spec {
  std::string target_id;
  std::vector<std::string> name_patterns;  ///< fnmatch globs, case-sensitive
  std::string variant_id = "baseline";
  std::optional<std::string> package;
  json source = nullptr;                   ///< {path, line, function, sha256} or null
  json source_hashes = json::object(), provenance_hashes = json::object();
  bool matches(const std::string& symbol) const;
};

struct target_config {
  std::string run_seed = "magpie-targeted-trace";
  double sample_rate = 1.0;
  int64_t max_records_per_shard = 100000;
  std::vector<target_spec> targets;
};

/// A YAML file whose root (or its `targeted_trace:` block) holds backend, run_seed, sample_rate,
/// max_records_per_shard and targets; errors name file:line and field.
status_or<target_config> load_target_config(const fs::path& path);

struct adapt_request {
  std::vector<fs::path> traces;  ///< --trace (repeatable)
  fs::path trace_dir;            ///< --trace-dir: *.json / *.json.gz, recursive
  fs::path output_dir;
  std::string run_id, framework;
  std::optional<std::string> framework_version, image;
};

/// What adapt-torch wrote.
struct adapt_result {
  fs::path manifest_path;     ///< <output_dir>/manifest.json (canonical JSON)
  std::string manifest_text;  ///< the manifest as `targeted-trace adapt-torch` prints it (python_pretty_json)
};
/// Writes <output_dir>/shards/trace_pid<P>_rank<R>.jsonl and manifest.json.
status_or<adapt_result> adapt_torch_traces(const target_config& cfg, const adapt_request& req);

/// What postprocess found in a targeted-trace directory.
struct postprocess_result {
  bool valid = false;               ///< the summary's `valid`: no issue and every shard valid
  std::vector<std::string> issues;  ///< the summary's `issues`
  std::string summary_text;         ///< the summary as printed and written (python_pretty_json)
};
/// Validates a targeted-trace directory. The summary is also written to `output` when given.
status_or<postprocess_result> postprocess_trace_dir(const fs::path& dir, const std::optional<fs::path>& output);

/// RFC 3339 UTC with microseconds and 'Z' (Python's datetime.isoformat()).
std::string utc_now_micro();

}  // namespace magpie::serve::targeted
