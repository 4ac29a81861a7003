// The TargetedKernelTrace format's JSON (kernel_trace_shards.h): Python's canonical and pretty
// JSON encodings (byte-compatible with upstream Magpie's shards and checksums), the chained
// envelope lines, the coverage-counter check and a target's manifest entry. Implemented in
// kernel_trace_shards_codec.cpp with the target config's YAML reader.
#pragma once

#include <cstdint>
#include <string>

#include "core/json.h"
#include "core/status.h"
#include "serve/kernel_trace_shards.h"

namespace magpie::serve::targeted {

/// Python's json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).
/// Errors (invalid_argument) for NaN / infinity, as allow_nan=False does.
status_or<std::string> canonical_json(const json& v);
/// Python's json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False) (for printed summaries).
status_or<std::string> python_pretty_json(const json& v);
/// Python's repr() of a float ("1.0", "1e-05", "1e+16", "1000000000000000.0").
std::string python_float_repr(double v);
/// SHA-256 hex of canonical_json(v).
status_or<std::string> sha256_json(const json& v);
/// upstream Magpie's stable_key: sha256(canonical({"parts": parts, "occurrence": n})).
status_or<std::string> stable_key(const json& parts, int64_t occurrence = 0);

/// One envelope line (with its trailing '\n').
status_or<std::string> envelope_line(const std::string& record_type, int64_t sequence, const std::string& previous,
                                     const json& payload, std::string* checksum);
/// Counter consistency (seen = written + dropped, ...); "" when consistent.
std::string counters_problem(const json& counters);

/// The manifest's entry of a target {target_id, name_patterns, variant_id, package, source,
/// source_hashes, provenance_hashes}.
json target_spec_json(const target_spec& t);

}  // namespace magpie::serve::targeted
