// magpie targeted-trace adapt-torch | postprocess: Magpie's TargetedKernelTrace CLI
// (research magpie.md §2.5, §9; src/serve/kernel_trace_shards.h).
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/subcommand.h"
#include "core/args.h"
#include "core/strings.h"
#include "serve/kernel_trace_shards.h"

namespace magpie::cli {
namespace {

constexpr const char* k_targeted_usage =
    "usage: magpie targeted-trace {adapt-torch,postprocess} [options]\n"
    "  adapt-torch   stream the kernel events of Torch-profiler traces that match target name patterns into\n"
    "                checksummed shards (<output-dir>/shards/trace_pid<P>_rank<R>.jsonl) and manifest.json\n"
    "  postprocess   validate shards (sequence, SHA-256 chain, end sentinel, manifest receipts) and print a summary\n"
    "Diagnostic artifacts only (never reward-eligible). Run 'magpie targeted-trace <command> --help' for options.\n";

/// Prints Magpie's "Error: <msg>" (on stdout, as Magpie does; also on stderr) and returns 1.
int targeted_fail(const std::string& msg) {
  std::printf("Error: %s\n", msg.c_str());
  std::fprintf(stderr, "magpie targeted-trace: %s\n", msg.c_str());
  return k_exit_failure;
}

int run_adapt(const std::vector<std::string>& args) {
  arg_parser p("magpie targeted-trace adapt-torch",
               "Convert PyTorch-profiler traces (*.json, *.json.gz) into TargetedKernelTrace shards: every kernel\n"
               "event whose name matches a target's name_patterns (fnmatch globs) becomes one record (shapes,\n"
               "grid/block, stream, duration, rank/stage context); sampling is deterministic (sha256 of run_seed\n"
               "and the event key). Prints the manifest JSON. Exit 0, or 1 when nothing could be converted.");
  p.add_multi("--trace", "", "FILE", "a trace file (repeatable)")
      .add_value("--trace-dir", "", "DIR", "find *.json / *.json.gz traces below DIR (recursive)")
      .add_value("--target-config", "", "YAML", "targets: a mapping with `targets:` (or a `targeted_trace:` block)")
      .add_value("--output-dir", "-o", "DIR", "where shards/ and manifest.json are written (a fresh directory)")
      .add_value("--run-id", "", "ID", "run identifier recorded in every record")
      .add_value("--framework", "", "NAME", "serving framework recorded in every record (vllm, sglang, ...)")
      .add_value("--framework-version", "", "V", "framework version (provenance)")
      .add_value("--image", "", "IMAGE", "container image (provenance)");
  if (auto rc = parse_or_exit(p, args)) return *rc;
  for (const char* req : {"--target-config", "--output-dir", "--run-id", "--framework"})
    if (!p.has(req) || p.value(req).empty()) {
      std::fprintf(stderr, "magpie targeted-trace adapt-torch: option %s is required\n", req);
      return k_exit_usage;
    }
  auto cfg = serve::targeted::load_target_config(p.value("--target-config"));
  if (!cfg.ok()) return targeted_fail(cfg.get_status().message());
  serve::targeted::adapt_request req;
  for (const auto& t : p.values("--trace")) req.traces.emplace_back(t);
  req.trace_dir = p.value("--trace-dir");
  req.output_dir = p.value("--output-dir");
  req.run_id = p.value("--run-id");
  req.framework = p.value("--framework");
  if (p.has("--framework-version")) req.framework_version = p.value("--framework-version");
  if (p.has("--image")) req.image = p.value("--image");
  auto adapted = serve::targeted::adapt_torch_traces(*cfg, req);
  if (!adapted.ok()) return targeted_fail(adapted.get_status().message());
  std::printf("%s\n", adapted->manifest_text.c_str());
  return k_exit_ok;
}

int run_postprocess(const std::vector<std::string>& args) {
  arg_parser p("magpie targeted-trace postprocess",
               "Validate a targeted-trace directory line by line (envelope schema, sequence, SHA-256 chain, end\n"
               "sentinel, manifest receipts and coverage) and print the summary JSON. Exit 0 iff valid.");
  p.add_value("--trace-dir", "", "DIR", "directory holding manifest.json and shards/")
      .add_value("--output", "-o", "FILE", "also write the summary JSON here")
      .add_bool("--strict", "", "any issue is an error (exit 1 with the issues, after writing --output)");
  if (auto rc = parse_or_exit(p, args)) return *rc;
  if (!p.has("--trace-dir") || p.value("--trace-dir").empty()) {
    std::fprintf(stderr, "magpie targeted-trace postprocess: option --trace-dir is required\n");
    return k_exit_usage;
  }
  std::optional<fs::path> out;
  if (p.has("--output")) out = p.value("--output");
  auto checked = serve::targeted::postprocess_trace_dir(p.value("--trace-dir"), out);
  if (!checked.ok()) return targeted_fail(checked.get_status().message());
  if (p.has("--strict") && !checked->issues.empty()) return targeted_fail(join(checked->issues, "; "));
  std::printf("%s\n", checked->summary_text.c_str());
  return checked->valid ? k_exit_ok : k_exit_failure;
}

int run_targeted_trace(const std::vector<std::string>& args, const global_options&) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::fputs(k_targeted_usage, args.empty() ? stderr : stdout);
    return args.empty() ? k_exit_usage : k_exit_ok;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "adapt-torch") return run_adapt(rest);
  if (args[0] == "postprocess") return run_postprocess(rest);
  return unknown_action("magpie targeted-trace", args[0], {"adapt-torch", "postprocess"}, k_targeted_usage);
}

}  // namespace
MAGPIE_SUBCOMMAND(targeted_trace, "targeted-trace", "TargetedKernelTrace: adapt-torch (traces → shards), postprocess",
                  run_targeted_trace);
}  // namespace magpie::cli
