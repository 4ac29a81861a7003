// Field readers and checks shared by the benchmark-config parser (bench_config.cpp) and its
// validation (bench_config_checks.cpp). Every YAML error names file:line:col and the field.
#pragma once

#include "core/config.h"
#include "serve/bench_config.h"

namespace magpie::serve::detail {

/// An integer / finite number field within [lo, hi] ((lo, hi] with lo_open).
status read_int_in(field_reader& r, const char* key, int64_t lo, int64_t hi, int64_t* out);
status read_double_in(field_reader& r, const char* key, double lo, double hi, bool lo_open, double* out);
/// Magpie's AgentX capture keys of profiler.torch_profiler.
status read_agentx_profile_keys(field_reader& t, benchmark_config& c);
/// benchmark.envs: keys upper-cased, known values checked (check_env_value).
status read_envs(const config_node& n, benchmark_config& c);
/// Value checks of the blocks other modules interpret (gap_analysis: trace_*_pct in [0, 100],
/// start < end, top_k >= 1, min_duration_us >= 0; tracelens: export_format, analysis_mode).
status check_gap_analysis(const config_node& g);
status check_tracelens(const config_node& t);
/// benchmark.server_lifecycle.
status read_lifecycle(const config_node& node, lifecycle_settings& l);

}  // namespace magpie::serve::detail
