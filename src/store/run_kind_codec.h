// The run kinds of the results store (what a workspace holds: analyze_report.json,
// compare_report.json, benchmark_report.json, or an interrupted optimize loop) and their words,
// as the store's `mode` column and the workspace names spell them.
#pragma once

#include <optional>
#include <string_view>

namespace magpie::store {

enum class run_kind { analyze, compare, benchmark, optimize };
constexpr run_kind k_run_kinds[] = {run_kind::benchmark, run_kind::compare, run_kind::analyze, run_kind::optimize};

/// analyze | compare | benchmark | optimize
const char* run_kind_name(run_kind k);
/// nullopt for any other word (the caller names the column or file).
std::optional<run_kind> parse_run_kind(std::string_view word);
/// analyze and compare runs measure kernels (and may be compared with each other).
inline bool is_kernel_run(run_kind k) { return k == run_kind::analyze || k == run_kind::compare; }

}  // namespace magpie::store
