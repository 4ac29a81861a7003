// magpie benchmark: serving benchmarks, or standalone gap analysis with --trace-dir.
#include <cstdio>

#include "cli/benchmark_hooks.h"
#include "cli/cli_common.h"

namespace magpie::cli {

void add_magpie_compat_flags(arg_parser& p) {
  const std::string m = "more Magpie flags";
  p.add_bool("--system-profiler", "", "run a local server under Nsight Systems (nsys profile; report in <workspace>/system_profile/); "
             "skipped with a warning without nsys, in docker or on AMD; run kind diagnostic", m)
      .add_value("--inferencex-path", "", "DIR", "accepted, not used: magpie launches the server and runs its own client (no InferenceX)", {}, m)
      .add_value("--benchmark-script", "", "SCRIPT", "accepted, not used: no InferenceX benchmark scripts are run", {}, m)
      .add_bool("--agentx", "", "AgentX agentic-coding recipes: not provided by magpie (the run is refused)", m)
      .add_value("--agentx-mode", "", "MODE", "accepted with --agentx only (not provided)", {"canonical", "fast"}, m);
}

status apply_magpie_compat_flags(const arg_parser& p, serve::benchmark_config& c) {
  if (p.has("--agentx"))
    return invalid_argument("--agentx: AgentX recipes (InferenceX agentic-coding workloads) are not provided by magpie; "
                            "run the workload with a benchmark config instead");
  if (p.has("--system-profiler")) c.profiler.system_profiler = true;
  for (const char* flag : {"--inferencex-path", "--benchmark-script", "--agentx-mode"})
    if (p.has(flag)) {
      if (p.value(flag).empty()) return invalid_argument("option %s needs a value", flag);
      c.warnings.push_back(std::string(flag) + " is accepted for Magpie compatibility but not used: magpie launches the "
                                               "server and runs its own load generator (no InferenceX scripts)");
    }
  return ok_status();
}

namespace {

int run_benchmark(const std::vector<std::string>& args, const global_options& g) {
  arg_parser p("magpie benchmark",
               "Benchmark an inference server (vLLM, SGLang, ATOM or any OpenAI-compatible server), or with\n"
               "--trace-dir run standalone gap analysis on existing PyTorch-profiler traces.");
  add_serving_flags(p);
  add_magpie_compat_flags(p);
  add_gap_analysis_flags(p);
  add_benchmark_ray_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  if (p.has("--trace-dir")) return run_gap_analysis(p, g);
  if (benchmark_wants_ray(p, g)) return run_benchmark_on_ray(p, args, g);
  return run_serving_benchmark(p, g);
}

}  // namespace
MAGPIE_SUBCOMMAND(benchmark, "benchmark", "benchmark inference serving, or gap-analyse traces (--trace-dir)",
                  run_benchmark);
}  // namespace magpie::cli
