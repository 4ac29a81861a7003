// magpie benchmark: serving benchmarks, or standalone gap analysis with --trace-dir.
#include <cstdio>

#include "cli/benchmark_hooks.h"

namespace magpie::cli {
namespace {

int run_benchmark(const std::vector<std::string>& args, const global_options& g) {
  arg_parser p("magpie benchmark",
               "Benchmark an inference server (vLLM, SGLang, ATOM or any OpenAI-compatible server), or with\n"
               "--trace-dir run standalone gap analysis on existing PyTorch-profiler traces.");
  add_serving_flags(p);
  add_gap_analysis_flags(p);
  add_benchmark_ray_flags(p);
  if (auto st = p.parse(args); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return k_exit_usage;
  }
  if (p.help_requested()) {
    std::fputs(p.help().c_str(), stdout);
    return k_exit_ok;
  }
  if (p.has("--trace-dir")) return run_gap_analysis(p, g);
  if (benchmark_wants_ray(p, g)) return run_benchmark_on_ray(p, args, g);
  return run_serving_benchmark(p, g);
}

}  // namespace
MAGPIE_SUBCOMMAND(benchmark, "benchmark", "benchmark inference serving, or gap-analyse traces (--trace-dir)",
                  run_benchmark);
}  // namespace magpie::cli
