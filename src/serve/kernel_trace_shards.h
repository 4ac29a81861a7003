// Magpie's TargetedKernelTrace artifacts (research magpie.md §9), schema
// "magpie.targeted-kernel-trace" 1.0.0: `targeted-trace adapt-torch` streams the kernel events of
// PyTorch-profiler traces that match target name patterns into checksummed per-(rank, pid)
// JSONL shards plus a manifest; `targeted-trace postprocess` validates shards line by line
// (sequence, chained SHA-256, end sentinel, manifest receipts) and writes a bounded summary.
//
// Byte compatibility: envelopes and checksums use Python's canonical JSON (sorted keys, compact
// separators, UTF-8, Python float repr), so Magpie's postprocessor accepts our shards and ours
// accepts Magpie's. Diagnostic only: manifests are never reward-eligible.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"

namespace magpie::serve::targeted {

inline constexpr const char* k_schema_name = "magpie.targeted-kernel-trace";
inline constexpr const char* k_schema_version = "1.0.0";

/// Python's json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).
/// Errors (invalid_argument) for NaN / infinity, as allow_nan=False does.
status_or<std::string> canonical_json(const json& v);
/// Python's json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False) (for printed summaries).
status_or<std::string> python_pretty_json(const json& v);
/// Python's repr() of a float ("1.0", "1e-05", "1e+16", "1000000000000000.0").
std::string python_float_repr(double v);
/// SHA-256 hex of canonical_json(v).
status_or<std::string> sha256_json(const json& v);
/// Magpie's stable_key: sha256(canonical({"parts": parts, "occurrence": n})).
status_or<std::string> stable_key(const json& parts, int64_t occurrence = 0);
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
  json to_json() const;
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

/// Writes <output_dir>/shards/trace_pid<P>_rank<R>.jsonl and manifest.json; returns the manifest.
status_or<json> adapt_torch_traces(const target_config& cfg, const adapt_request& req);

/// Validates a targeted-trace directory; `valid` in the summary says whether it passed. The
/// summary is also written to `output` when given.
status_or<json> postprocess_trace_dir(const fs::path& dir, const std::optional<fs::path>& output);

/// One envelope line (with its trailing '\n').
status_or<std::string> envelope_line(const std::string& record_type, int64_t sequence, const std::string& previous,
                                     const json& payload, std::string* checksum);
/// Counter consistency (seen = written + dropped, ...); "" when consistent.
std::string counters_problem(const json& counters);
/// RFC 3339 UTC with microseconds and 'Z' (Python's datetime.isoformat()).
std::string utc_now_micro();

}  // namespace magpie::serve::targeted
