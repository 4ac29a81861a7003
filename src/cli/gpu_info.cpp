// magpie gpu-info: the detected GPUs, as text (Magpie's --gpu-info block) or JSON; with
// --select N, the idle-GPU choice that serving benchmarks (gpu_selection) and compare workers make.
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/subcommand.h"
#include "core/args.h"
#include "core/strings.h"
#include "gpu/detect.h"
#include "gpu/gpu_printer.h"
#include "gpu/select.h"

namespace magpie::cli {
namespace {

// Prints the idle-GPU choice; exit 1 when fewer than N GPUs are idle.
int print_selection(const arg_parser& p) {
  auto count = p.integer_in("--select", 1, 1, 1024);
  auto min_free = p.number_in("--min-free-gb", 8.0, 0, 1e6);
  if (!count.ok() || !min_free.ok()) {
    std::fprintf(stderr, "%s\n", (!count.ok() ? count.get_status() : min_free.get_status()).message().c_str());
    return k_exit_usage;
  }
  gpu::selection_request req;
  req.count = static_cast<int>(*count);
  req.min_free_memory_gb = *min_free;
  auto sel = gpu::select_idle_gpus(req);
  if (!sel.ok()) {
    std::fprintf(stderr, "Error: %s\n", sel.get_status().message().c_str());
    return k_exit_failure;
  }
  if (p.has("--json")) {
    std::puts(dump_pretty(gpu::selection_json(*sel)).c_str());
    return k_exit_ok;
  }
  std::vector<std::string> ids, env;
  for (int i : sel->indices) ids.push_back(std::to_string(i));
  for (const auto& [k, v] : sel->env) env.push_back(k + "=" + v);
  std::printf("Selected GPU(s): %s\nEnvironment: %s\nBusy: %s\n", join(ids, ",").c_str(), join(env, " ").c_str(),
              sel->busy.empty() ? "none" : join(sel->busy, ", ").c_str());
  return k_exit_ok;
}

int run_gpu_info(const std::vector<std::string>& args, const global_options&) {
  arg_parser p("magpie gpu-info", "Detect GPUs with rocminfo / nvidia-smi and print vendor, architecture, tools.");
  p.add_bool("--json", "", "print JSON on stdout instead of text");
  p.add_value("--select", "", "N", "choose N idle GPUs as gpu_selection does (no compute process, enough free memory, "
                                   "utilization below 10%; least used memory first) and print them; exit 1 when fewer "
                                   "are idle");
  p.add_value("--min-free-gb", "", "GIB", "with --select: free memory a GPU needs, in GiB (default 8)");
  p.add_bool("--require", "", "exit 1 (with a message on stderr) when no GPU is found");
  p.set_epilog("Without a GPU the text says \"no GPU found\" and the exit code is 0, or 1 with --require.\n"
               "'magpie --gpu-info' prints Magpie's block (Vendor: UNKNOWN, Architecture: None) instead.");
  if (auto rc = parse_or_exit(p, args)) return *rc;
  if (p.has("--select")) return print_selection(p);
  if (p.has("--min-free-gb")) {
    std::fprintf(stderr, "option --min-free-gb needs --select\n");
    return k_exit_usage;
  }
  gpu::gpu_info g = gpu::detect();
  if (p.has("--json")) {
    std::puts(dump_pretty(gpu::gpu_info_json(g)).c_str());
  } else if (!g.detected()) {
    std::printf("no GPU found (neither rocminfo nor nvidia-smi reports one)\n");
    if (!g.compiler.empty()) std::printf("  Compiler: %s (kernels can be compiled, not run)\n", g.compiler.c_str());
    if (!g.profiler.empty()) std::printf("  Profiler: %s\n", g.profiler.c_str());
  } else {
    std::fputs(gpu::format_gpu_info(g).c_str(), stdout);
  }
  if (!g.detected() && p.has("--require")) {
    std::fprintf(stderr, "magpie gpu-info: no GPU found (--require)\n");
    return k_exit_failure;
  }
  return k_exit_ok;
}

}  // namespace
MAGPIE_SUBCOMMAND(gpu_info, "gpu-info", "show the detected GPU, compiler and profiler", run_gpu_info);
}  // namespace magpie::cli
