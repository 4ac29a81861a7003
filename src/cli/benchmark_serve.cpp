// TRANSIENT placeholder, replaced by the serving work (issue 4).
#include <cstdio>

#include "cli/benchmark_hooks.h"

namespace magpie::cli {

void add_serving_flags(arg_parser& p) { p.add_positional("framework", "vllm | sglang | atom", false); }

int run_serving_benchmark(const arg_parser&, const global_options&) {
  std::fprintf(stderr, "magpie benchmark: serving benchmarks are not built yet\n");
  return k_exit_failure;
}

}  // namespace magpie::cli
