// magpie gpu-info: the detected GPUs, as text (Magpie's --gpu-info block) or JSON.
#include <cstdio>

#include "cli/subcommand.h"
#include "core/args.h"
#include "gpu/detect.h"

namespace magpie::cli {
namespace {

int run_gpu_info(const std::vector<std::string>& args, const global_options&) {
  arg_parser p("magpie gpu-info", "Detect GPUs with rocminfo / nvidia-smi and print vendor, architecture, tools.");
  p.add_bool("--json", "", "print JSON on stdout instead of text");
  if (auto st = p.parse(args); !st.ok()) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return k_exit_usage;
  }
  if (p.help_requested()) {
    std::fputs(p.help().c_str(), stdout);
    return k_exit_ok;
  }
  gpu::gpu_info g = gpu::detect();
  if (p.has("--json")) std::puts(dump_pretty(g.to_json()).c_str());
  else std::fputs(gpu::format_gpu_info(g).c_str(), stdout);
  return k_exit_ok;
}

}  // namespace
MAGPIE_SUBCOMMAND(gpu_info, "gpu-info", "show the detected GPU, compiler and profiler", run_gpu_info);
}  // namespace magpie::cli
