// magpie analyze: evaluate kernels independently (compile → correctness → timing → profile).
#include "cli/kernel_cli.h"

namespace magpie::cli {
namespace {
int run_analyze_cmd(const std::vector<std::string>& args, const global_options& g) {
  return run_kernel_command(args, g, false);
}
}  // namespace
MAGPIE_SUBCOMMAND(analyze, "analyze", "evaluate kernels: compile, prove correctness, time", run_analyze_cmd);
}  // namespace magpie::cli
