// TRANSIENT placeholder, replaced by the trace work (issue 3): flags are Magpie's.
#include <cstdio>

#include "cli/benchmark_hooks.h"

namespace magpie::cli {

void add_gap_analysis_flags(arg_parser& p) {
  const std::string g = "gap analysis (standalone, with --trace-dir)";
  p.add_value("--trace-dir", "", "PATH", "directory of PyTorch-profiler traces (a workspace with torch_trace/ is descended)", {}, g);
}

int run_gap_analysis(const arg_parser&, const global_options&) {
  std::fprintf(stderr, "magpie benchmark --trace-dir: not built yet\n");
  return k_exit_failure;
}

}  // namespace magpie::cli
