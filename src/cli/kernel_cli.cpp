#include "cli/kernel_cli.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>

#include "core/log.h"
#include "core/strings.h"
#include "core/yaml_json.h"
#include "gpu/detect.h"
#include "kernel/evaluate.h"
#include "kernel/spec_paths.h"
#include "cli/batch_cli.h"
#include "cli/cli_common.h"
#include "store/results_store.h"

namespace magpie::cli {
namespace {

/// True when any of `files` holds "__global__" (a CUDA/HIP kernel definition).
bool any_file_has_global(const std::vector<std::string>& files) {
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("__global__") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

void warn_type_mismatches(const kernel::eval_request& req) {
  std::vector<const kernel::kernel_spec*> specs;
  for (const auto& k : req.kernels) specs.push_back(&k);
  if (req.reference) specs.push_back(&*req.reference);
  bool gpu_kernels = false;
  for (const auto* k : specs) {
    if (k->type != kernel::kernel_type::cuda && k->type != kernel::kernel_type::hip) continue;
    gpu_kernels = true;
    const char* type = k->type == kernel::kernel_type::cuda ? "cuda" : "hip";
    if (!k->source_files.empty() && !any_file_has_global(k->source_files))
      MAGPIE_LOG_WARN("kernel '%s' has type %s but no __global__ function in its source files: it runs on the CPU as "
                      "plain C++ (use --type host / type: host for CPU code)",
                      k->id.c_str(), type);
  }
  if (gpu_kernels && !gpu::detect().detected())
    MAGPIE_LOG_WARN("no GPU found (rocminfo / nvidia-smi report none): cuda/hip kernels can be compiled here but not "
                    "run on a GPU ('magpie gpu-info' shows what was detected)");
}

void add_kernel_flags(arg_parser& p, bool compare) {
  p.add_positional("kernels", "kernel source files (each becomes one kernel entry)", true);
  p.add_value("--kernel-config", "-k", "FILE", "kernel YAML (Magpie's schema: kernel/kernels, reference, correctness, performance)");
  p.add_value("--testcase", "-t", "CMD", "testcase command for positional kernels (whitespace split, no shell)");
  p.add_value("--type", "", "TYPE", "kernel type of positional kernels and --reference (default: from the file: .cu cuda, "
              ".hip hip, .py triton|pytorch, C++ by content; else hip, as Magpie)",
              {"hip", "cuda", "pytorch", "torch", "py", "triton", "host"});
  p.add_value("--compile-cmd", "", "CMD", "compile command for positional kernels (whitespace split)");
  p.add_bool("--no-perf", "", "skip the performance stage (correctness only)");
  p.add_value("--output-dir", "-o", "DIR", "results directory; a workspace <mode>[_<label>]_<YYYYmmdd_HHMMSS>/ is made in it (default ./results)");
  if (compare) p.add_value("--baseline", "", "N", "index of the baseline kernel, speedups are relative to it (default 0)");
  const std::string c = "correctness (ours)";
  p.add_value("--reference", "", "FILE", "reference implementation source (same --type) whose outputs every kernel must match", {}, c);
  p.add_value("--seed", "", "N", "run seed for the trial inputs (default: fresh random each run; printed in the report)", {}, c);
  p.add_value("--trials", "", "N", "seeded correctness trials per kernel (default 5)", {}, c);
  p.add_value("--atol", "", "X", "absolute tolerance for every float dtype (default fp32 1e-4, fp16/bf16 1e-2)", {}, c);
  p.add_value("--rtol", "", "X", "relative tolerance for every float dtype (default fp32 1e-4, fp16/bf16 1e-2)", {}, c);
  p.add_value("--correctness-method", "", "M", "auto: compare outputs when the harness writes them; exit_code: Magpie's mode",
              {"auto", "outputs", "exit_code"}, c);
  const std::string t = "timing policy (ours, nvbench-style)";
  p.add_value("--warmup", "", "N", "untimed launches before sampling (default 10)", {}, t);
  p.add_value("--min-samples", "", "N", "minimum samples (default 10)", {}, t);
  p.add_value("--max-noise", "", "PCT", "stop when relative stdev < PCT percent (default 0.5)", {}, t);
  p.add_value("--min-time", "", "S", "measured seconds required before the noise test may stop sampling (default 0.5)", {}, t);
  p.add_value("--max-time", "", "S", "sampling budget in wall-clock seconds (default 15)", {}, t);
  p.add_bool("--hot", "", "do not flush the L2 / last-level cache before each sample (default: cold)", t);
  p.add_value("--processes", "", "N", "harness processes per implementation; the speedup interval includes the "
              "variance between them (default 2). A compare treats them as a pilot and adds processes, up to "
              "performance.timing.max_processes (default 16), when their spread asks for it (docs/statistics.md)", {}, t);
  p.add_value("--profiler", "", "BACKEND", "profiler backend (default auto: ncu for CUDA when present)",
              {"auto", "ncu", "cupti", "none", "rocprof_compute"}, t);
  p.add_bool("--json", "", "print the report JSON on stdout instead of the text summary");
  const std::string l = "Magpie latency-line flags (accepted; timing follows the policy above)";
  p.add_bool("--no-latency", "", "accepted, not used (no separate latency stage)", l);
  p.add_value("--latency-method", "", "M", "accepted, not used", {"auto", "cuda_graph", "kernel_trace", "rocprof_timestamps", "both", "none"}, l);
  p.add_value("--latency-rep-ms", "", "MS", "accepted, not used (positive integer)", {}, l);
  add_scheduler_flags(p);
  p.set_epilog(
      "Times are reported in nanoseconds in JSON (stats_ns) and with units in text. Correctness compares every\n"
      "output with the reference's (compare: the baseline, unless a 'reference:' entry is given) on fresh seeded\n"
      "inputs: |candidate - reference| <= atol + rtol*|reference| per element; shape/dtype/NaN-pattern mismatches,\n"
      "degenerate outputs and input mutation fail. Exit code: analyze 1 if any kernel is not correct; compare 0\n"
      "unless the run could not be made (as Magpie). With -e slurm (or -e ray, or a ray_config section) every\n"
      "kernel (and the reference) is evaluated in its own Slurm / Ray job and the jobs are merged into one report\n"
      "(docs/slurm.md, docs/ray.md).");
}

namespace {

status apply_framework_config(const fs::path& path, kernel::eval_request* req, sched::scheduler_options* so) {
  if (path.empty()) return ok_status();
  if (!fs::exists(path)) return ok_status();  // Magpie: a missing framework config is {}
  MAGPIE_ASSIGN_OR_RETURN(config_node root, load_yaml_file(path));
  json j = config_node_json(root);
  if (!j.is_object()) return ok_status();
  if (const config_node* s = root.get("scheduler"))
    MAGPIE_RETURN_IF_ERROR(sched::parse_scheduler_section(*s, "scheduler", so));
  if (j.contains("compiling") && j["compiling"].is_object())
    req->enable_default_compile = json_bool(j["compiling"], "enable_default_compile", req->enable_default_compile);
  if (j.contains("performance") && j["performance"].is_object()) {
    const json& p = j["performance"];
    req->performance.timeout_s = json_number(p, "timeout_seconds", req->performance.timeout_s);
    if (p.contains("ncu") && p["ncu"].is_object() && p["ncu"].contains("args") && p["ncu"]["args"].is_array())
      for (const auto& a : p["ncu"]["args"])
        if (a.is_string() && a != "--target-processes" && a != "all") req->performance.ncu_args.push_back(a);
  }
  if (j.contains("output") && j["output"].is_object()) req->output_dir = json_string(j["output"], "directory", req->output_dir.string());
  return ok_status();
}

kernel::kernel_spec spec_from_file(const std::string& file, const std::string& id, kernel::kernel_type type,
                                   const arg_parser& p) {
  kernel::kernel_spec k;
  fs::path f = absolute_path(file);
  k.id = id;
  k.type = type;
  k.source_files = {f.string()};
  k.working_dir = f.parent_path();
  if (p.has("--testcase")) k.testcase_command = command_from_string(p.value("--testcase"));
  if (p.has("--compile-cmd")) k.compile_command = command_from_string(p.value("--compile-cmd"));
  k.origin = "cli";
  return k;
}

/// Every numeric flag is range-checked: a bad value is an error naming the flag, never a
/// silent default or a harness failure later.
status apply_overrides(const arg_parser& p, kernel::eval_request* req) {
  constexpr int64_t k_int_max = std::numeric_limits<int64_t>::max();
  constexpr double k_huge = std::numeric_limits<double>::max();
  if (p.has("--seed")) {
    MAGPIE_ASSIGN_OR_RETURN(int64_t s, p.integer_in("--seed", 0, 0, k_int_max));
    req->correctness.seed = static_cast<uint64_t>(s);
  }
  MAGPIE_ASSIGN_OR_RETURN(int64_t trials, p.integer_in("--trials", req->correctness.trials, 1, 1000));
  req->correctness.trials = static_cast<int>(trials);
  MAGPIE_ASSIGN_OR_RETURN(double atol, p.number_in("--atol", -1, 0, k_huge));
  MAGPIE_ASSIGN_OR_RETURN(double rtol, p.number_in("--rtol", -1, 0, k_huge));
  for (auto* t : {&req->correctness.fp32, &req->correctness.fp16, &req->correctness.bf16, &req->correctness.fp64}) {
    if (p.has("--atol")) t->atol = atol;
    if (p.has("--rtol")) t->rtol = rtol;
  }
  std::string m = p.value("--correctness-method");
  auto method = kernel::parse_correctness_method(m);  // the parser allows only auto, outputs, exit_code
  if (method && *method != kernel::correctness_method::auto_select) req->correctness.method = *method;
  MAGPIE_ASSIGN_OR_RETURN(int64_t warmup, p.integer_in("--warmup", req->timing.warmup, 0, 1000000));
  req->timing.warmup = static_cast<int>(warmup);
  MAGPIE_ASSIGN_OR_RETURN(int64_t min_samples, p.integer_in("--min-samples", req->timing.min_samples, 1, 10000000));
  req->timing.min_samples = static_cast<int>(min_samples);
  if (p.has("--max-noise")) {
    MAGPIE_ASSIGN_OR_RETURN(double pct, p.number_in("--max-noise", 0.5, 0, 100, true));
    req->timing.max_noise = pct / 100.0;
  }
  MAGPIE_ASSIGN_OR_RETURN(req->timing.min_time_s, p.number_in("--min-time", req->timing.min_time_s, 0, 86400));
  MAGPIE_ASSIGN_OR_RETURN(req->timing.max_time_s, p.number_in("--max-time", req->timing.max_time_s, 0, 86400, true));
  if (p.has("--hot")) req->timing.cold = false;
  if (p.has("--processes")) {
    MAGPIE_ASSIGN_OR_RETURN(int64_t n, p.integer("--processes", 2));
    if (n < 1 || n > 16) return invalid_argument("--processes must be 1..16, got %lld", static_cast<long long>(n));
    req->timing.processes = static_cast<int>(n);
  }
  if (p.has("--profiler"))  // the parser accepts only the listed words
    req->performance.backend = kernel::parse_profiler_backend(p.value("--profiler")).value_or(kernel::profiler_backend::auto_select);
  if (p.has("--no-perf")) req->performance.enabled = false;
  if (p.has("--output-dir")) {
    if (p.value("--output-dir").empty()) return invalid_argument("option --output-dir needs a directory");
    req->output_dir = p.value("--output-dir");
  }
  // Magpie's latency-line flags: its latency stage is replaced by the timing policy above.
  if (p.has("--latency-rep-ms")) MAGPIE_RETURN_IF_ERROR(p.integer_in("--latency-rep-ms", 0, 1, k_int_max).get_status());
  for (const char* flag : {"--no-latency", "--latency-method", "--latency-rep-ms"})
    if (p.has(flag))
      MAGPIE_LOG_WARN("%s is accepted for Magpie compatibility but not used: kernel timing follows the timing "
                      "policy (--warmup, --min-samples, --max-noise, --max-time)", flag);
  return ok_status();
}

/// The type of a positional kernel file: --type when given, else what the file implies
/// (kernel/spec_paths.h), else Magpie's default hip.
kernel::kernel_type type_of_file(const arg_parser& p, const std::string& file) {
  kernel::kernel_type t = kernel::kernel_type::hip;
  if (p.has("--type")) {
    kernel::parse_kernel_type(p.value("--type"), &t);
    return t;
  }
  if (kernel::infer_kernel_type(file, &t) && t != kernel::kernel_type::hip)
    MAGPIE_LOG_INFO("%s: kernel type %s inferred from the file (give --type to override)", file.c_str(),
                    to_lower(kernel::kernel_type_name(t)).c_str());
  return t;
}

}  // namespace

status_or<kernel::eval_request> build_request(const arg_parser& p, const global_options& g, bool compare,
                                              sched::scheduler_options* so) {
  kernel::eval_request req;
  req.mode = compare ? kernel::run_mode::compare : kernel::run_mode::analyze;
  MAGPIE_RETURN_IF_ERROR(apply_framework_config(g.config_path, &req, so));
  if (p.has("--kernel-config")) {
    MAGPIE_RETURN_IF_ERROR(kernel::load_kernel_config(p.value("--kernel-config"), &req));
    MAGPIE_RETURN_IF_ERROR(sched::load_scheduler_sections(p.value("--kernel-config"), so));
  }
  const auto& files = p.positionals();
  for (size_t i = 0; i < files.size(); ++i) {
    if (!fs::exists(files[i])) {
      if (compare) return not_found("kernel file not found: %s", files[i].c_str());
      MAGPIE_LOG_WARN("kernel file not found, skipped: %s", files[i].c_str());
      continue;
    }
    std::string stem = fs::path(files[i]).stem().string();
    std::string id = compare ? strprintf("kernel_%zu_%s", req.kernels.size(), stem.c_str()) : stem;
    req.kernels.push_back(spec_from_file(files[i], id, type_of_file(p, files[i]), p));
  }
  if (p.has("--reference")) {
    const std::string ref = p.value("--reference");
    if (!fs::exists(ref)) return not_found("reference file not found: %s", ref.c_str());
    // The reference is evaluated as the kernels are: it takes their type (--type, or the first kernel's).
    kernel::kernel_type t = req.kernels.empty() || p.has("--type") ? type_of_file(p, ref) : req.kernels[0].type;
    req.reference = spec_from_file(ref, "reference", t, p);
  }
  if (compare && p.has("--baseline")) {
    MAGPIE_ASSIGN_OR_RETURN(int64_t b, p.integer_in("--baseline", 0, 0, std::numeric_limits<int>::max()));
    req.baseline_index = static_cast<int>(b);
  }
  MAGPIE_RETURN_IF_ERROR(apply_overrides(p, &req));
  MAGPIE_RETURN_IF_ERROR(apply_scheduler_flags(p, so));
  MAGPIE_ASSIGN_OR_RETURN(std::optional<sched::run_environment> env, sched::environment_from_flag(g.environment));
  if (env) so->environment = env;
  if (g.workers > 0) so->max_workers = g.workers;
  if (!g.docker_image.empty()) so->docker_image = g.docker_image;
  if (req.kernels.empty())
    return invalid_argument("no kernels: give kernel files or -k/--kernel-config FILE (see magpie %s --help)",
                            compare ? "compare" : "analyze");
  if (compare && req.baseline_index >= static_cast<int>(req.kernels.size()))
    return invalid_argument("option --baseline: %d is out of range (0..%zu): not a kernel index", req.baseline_index,
                            req.kernels.size() - 1);
  return req;
}

int run_kernel_command(const std::vector<std::string>& args, const global_options& g, bool compare) {
  const char* name = compare ? "magpie compare" : "magpie analyze";
  arg_parser p(name, compare ? "Rank two or more kernel implementations: identical inputs, a correctness gate against the\n"
                               "reference, interleaved timing, a verdict per candidate with a bootstrap confidence interval."
                             : "Evaluate kernels independently: compile, check correctness against a reference, time them.");
  add_kernel_flags(p, compare);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  sched::scheduler_options so;
  auto req = build_request(p, g, compare, &so);
  if (!req.ok()) {
    std::fprintf(stderr, "Error: %s\n", req.get_status().message().c_str());
    return k_exit_failure;
  }
  warn_type_mismatches(*req);
  if (auto st = sched::check_environment(so.environment); !st.ok()) {
    std::fprintf(stderr, "Error: %s\n", st.message().c_str());
    return k_exit_failure;
  }
  if (so.environment == sched::run_environment::slurm || so.environment == sched::run_environment::ray)
    return print_batch_run(sched::run_kernel_batch(*req, so), p.has("--json"));
  req->max_workers = so.max_workers;  // a local compare's workers (kernel/workers.h)
  req->gpu_devices = so.gpu_devices;
  auto out = compare ? kernel::run_compare(*req) : kernel::run_analyze(*req);
  if (!out.ok()) {
    std::fprintf(stderr, "Error: %s\n", out.get_status().message().c_str());
    return k_exit_failure;
  }
  if (!out->workspace.empty()) store::register_after_run(out->workspace);
  if (p.has("--json")) std::fputs(dump_pretty(out->report).c_str(), stdout);
  else std::fputs(out->console.c_str(), stdout);
  std::fflush(stdout);
  return out->exit_code;
}

}  // namespace magpie::cli
