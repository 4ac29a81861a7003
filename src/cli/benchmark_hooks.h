// `magpie benchmark` has two halves that share one flag set (as in Magpie):
// standalone gap analysis (--trace-dir, src/cli/benchmark_gap.cpp) and serving benchmarks
// (src/cli/benchmark_serve.cpp). Each half adds its flags and runs when selected.
#pragma once

#include "cli/subcommand.h"
#include "core/args.h"
#include "serve/bench_config.h"

namespace magpie::cli {

/// Adds --trace-dir, --top-k, --start-pct, ... (gap analysis flags).
void add_gap_analysis_flags(arg_parser& p);
/// Runs standalone gap analysis; called when --trace-dir is given.
int run_gap_analysis(const arg_parser& p, const global_options& g);

/// Adds the framework positional and serving flags (-b, -m, -p, --tp, --concurrency, ...).
void add_serving_flags(arg_parser& p);
/// Runs a serving benchmark (orchestrated or --base-url client only).
int run_serving_benchmark(const arg_parser& p, const global_options& g);

/// Magpie's remaining benchmark flags (--system-profiler, --inferencex-path, --benchmark-script,
/// --agentx, --agentx-mode; src/cli/benchmark.cpp) and their effect on a built config.
void add_magpie_compat_flags(arg_parser& p);
status apply_magpie_compat_flags(const arg_parser& p, serve::benchmark_config& c);

/// Adds --ray-address (src/cli/benchmark_ray.cpp).
void add_benchmark_ray_flags(arg_parser& p);
/// True with -e ray, or a -b YAML whose benchmark.run_mode is ray (and no --run-mode flag).
bool benchmark_wants_ray(const arg_parser& p, const global_options& g);
/// Submits the benchmark as one Ray job (`magpie benchmark ARGS --run-mode local`) and collects it.
int run_benchmark_on_ray(const arg_parser& p, const std::vector<std::string>& args, const global_options& g);

}  // namespace magpie::cli
