// magpie compare: rank kernels with a correctness gate and interleaved timing.
#include "cli/kernel_cli.h"

namespace magpie::cli {
namespace {
int run_compare_cmd(const std::vector<std::string>& args, const global_options& g) {
  return run_kernel_command(args, g, true);
}
}  // namespace
MAGPIE_SUBCOMMAND(compare, "compare", "rank kernel implementations against a baseline", run_compare_cmd);
}  // namespace magpie::cli
