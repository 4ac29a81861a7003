// The state words of reports, as enums: upstream Magpie's per-stage states (kernel evaluations, serving
// runs) and the one-word outcome of an evaluated kernel. Reports spell them "SUCCESS" /
// "passed" and so on; state_codec.cpp is the only place that maps between the two. They live in
// core because every module reads them from reports (mcp and store from child processes' files).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"

namespace magpie {

/// Upstream Magpie's compiling_state / correctness_state / performance_state / latency_state.
enum class stage_state { success, failed, skipped };

/// One word per evaluated kernel (kernel outcomes are data, not errors): compile failed or the
/// harness broke (failed), a stage ran out of time (timeout), outputs differ from the
/// reference's (incorrect), correctness not checked (skipped), else passed.
enum class kernel_outcome { passed, incorrect, failed, timeout, skipped };

/// How a kernel's correctness was established (its report's correctness_method): its outputs
/// checked against the reference's (outputs), its exit code alone (exit_code), it is the
/// reference others are checked against (reference), or not at all (none).
enum class correctness_basis { none, outputs, exit_code, reference };

/// A compare candidate against the baseline: faster / slower / same / ambiguous by the interval;
/// not_ranked (incorrect, or not timed) and implausible (below the physical floor) never rank.
/// Computed by kernel/verdict.cpp; here because optimize and mcp read compare reports back.
enum class verdict_kind { baseline, faster, slower, same, ambiguous, not_ranked, implausible };

/// Upstream Magpie's words for a background task (its ray_task_* tools; our batches and run handles).
enum class task_status { submitted, pending, running, succeeded, failed, stopped, unknown };

/// "SUCCESS", "FAILED", "SKIPPED".
const char* stage_state_name(stage_state s);
std::optional<stage_state> parse_stage_state(std::string_view s);
/// "passed", "incorrect", "failed", "timeout", "skipped".
const char* kernel_outcome_name(kernel_outcome o);
std::optional<kernel_outcome> parse_kernel_outcome(std::string_view s);
/// "none", "outputs", "exit_code", "reference".
const char* correctness_basis_name(correctness_basis b);
std::optional<correctness_basis> parse_correctness_basis(std::string_view s);
/// "baseline", "faster", "slower", "same", "ambiguous", "not_ranked", "implausible".
const char* verdict_kind_name(verdict_kind k);
std::optional<verdict_kind> parse_verdict_kind(std::string_view word);
/// "SUBMITTED", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "STOPPED", "UNKNOWN".
const char* task_status_name(task_status s);
/// Also Ray's job status words (upstream Magpie took its words from Ray's Jobs API).
std::optional<task_status> parse_task_status(std::string_view s);

/// nlohmann-json writes the enums as their report words, never as integers (json j = state).
inline void to_json(json& j, stage_state s) { j = stage_state_name(s); }
inline void to_json(json& j, kernel_outcome o) { j = kernel_outcome_name(o); }
inline void to_json(json& j, task_status s) { j = task_status_name(s); }
inline void to_json(json& j, correctness_basis b) { j = correctness_basis_name(b); }
inline void to_json(json& j, verdict_kind k) { j = verdict_kind_name(k); }

/// Every spelling, in enum order (the enums of MCP output schemas).
std::vector<std::string> stage_state_names();
std::vector<std::string> kernel_outcome_names();
std::vector<std::string> correctness_basis_names();
std::vector<std::string> verdict_kind_names();
std::vector<std::string> task_status_names(std::initializer_list<task_status> which);

}  // namespace magpie
