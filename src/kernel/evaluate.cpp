#include "kernel/evaluate.h"

#include <algorithm>
#include <thread>

#include "core/log.h"
#include "core/stats.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "core/yaml.h"
#include "gpu/detect.h"
#include "gpu/specs.h"
#include "kernel/config_snapshot_printer.h"
#include "kernel/cupti_printer.h"
#include "kernel/profile.h"
#include "kernel/stage_printer.h"

namespace magpie::kernel {

kernel_outcome kernel_eval::outcome() const {
  if (compiling.state == stage_state::failed) return kernel_outcome::failed;
  if (timed_out) return kernel_outcome::timeout;
  if (correctness.state == stage_state::failed)
    return verdict && !verdict->passed ? kernel_outcome::incorrect : kernel_outcome::failed;
  if (correctness.state == stage_state::skipped) return kernel_outcome::skipped;
  return kernel_outcome::passed;
}

namespace {

bool any_timed_out(const correctness_run& r) {
  for (const auto& x : r.runs)
    if (x.timed_out) return true;
  return false;
}

// The checks that apply to the reference entry itself (and to candidates without a reference).
void check_own_manifest(const manifest& m, size_t n_seeds, kernel_eval& k) {
  if (m.trials.size() != n_seeds)
    k.correctness.errors.push_back(strprintf("the harness ran %zu trials, %zu were requested", m.trials.size(), n_seeds));
  for (const auto& t : m.trials) {
    if (!t.ok) k.correctness.errors.push_back(strprintf("trial %d (%s): launch failed: %s", t.index, t.size.c_str(), t.error.c_str()));
    if (t.outputs.empty()) k.correctness.errors.push_back(strprintf("trial %d wrote no outputs", t.index));
  }
  std::vector<int> sizes;
  for (const auto& t : m.trials)
    if (!t.check && std::find(sizes.begin(), sizes.end(), t.size_index) == sizes.end()) sizes.push_back(t.size_index);
  k.correctness_info["harness"] = m.harness;
  k.correctness_info["device"] = m.device;
  k.correctness_info["n_sizes"] = m.n_sizes;
  k.correctness_info["timed_size"] = m.timed_size;
  k.correctness_info["sizes_checked"] = sizes;
  if (std::find(sizes.begin(), sizes.end(), m.timed_size) == sizes.end())
    k.correctness.errors.push_back("the timed size was not among the checked trials (raise correctness.trials)");
}

}  // namespace

status_or<eval_context> make_context(const eval_request& req, const std::string& label) {
  eval_context ctx;
  ctx.req = req;
  MAGPIE_ASSIGN_OR_RETURN(ctx.ws, create_workspace(req.output_dir, run_mode_name(req.mode), label));
  note_run_in_progress(ctx.ws.dir);  // an interruption marks it INCOMPLETE (core/workspace.h)
  bool needs_gpu = false;
  for (const auto& k : req.kernels) needs_gpu = needs_gpu || k.type != kernel_type::host;
  if (req.reference) needs_gpu = needs_gpu || req.reference->type != kernel_type::host;
  if (needs_gpu) ctx.gpu_arch = gpu::detect().architecture;
  ctx.cupti = find_cupti();
  ctx.run_seed = req.correctness.seed ? *req.correctness.seed : fresh_seed();
  splitmix64 rng(ctx.run_seed);
  for (int i = 0; i < req.correctness.trials; ++i) ctx.seeds.push_back(rng.next() >> 1);
  ctx.timing_seed = rng.next() >> 1;
  splitmix64 secret(fresh_seed());
  if (req.mode != run_mode::reference)  // a scale-out reference job: its files are shared, so no secrets in them
    for (int i = 0; i < std::max(req.timing.checked_samples, 0); ++i) ctx.check_seeds.push_back(secret.next() >> 1);
  ctx.order_seed = secret.next() >> 1;
  ctx.pctx.gpu_arch = ctx.gpu_arch;
  ctx.pctx.build_root = ctx.ws.dir / "build";
  ctx.pctx.enable_default_compile = req.enable_default_compile;
  MAGPIE_RETURN_IF_ERROR(write_config_snapshot(ctx.ws.dir, config_snapshot(req, req.mode == run_mode::compare, ctx.run_seed)));
  return ctx;
}

void compile_all(const std::vector<kernel_eval*>& ks, const eval_context& ctx) {
  prepare_context pc = ctx.pctx;
  pc.log_commands = false;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  run_on_workers(ks.size(), static_cast<int>(std::min(8u, cores)), [&](size_t i, int) {
    ks[i]->prepared = prepare_kernel(ks[i]->spec, pc, &ks[i]->compiling);
    ks[i]->compiled = true;
  });
  for (const kernel_eval* k : ks) {
    const json& cmds = json_value(k->compiling.detail, "commands");
    if (!cmds.is_array() || cmds.empty()) continue;
    for (const auto& c : cmds) MAGPIE_LOG_INFO("[%s] compile: %s", k->spec.id.c_str(), c.get<std::string>().c_str());
    MAGPIE_LOG_INFO("[%s] compile: %s in %.1f s%s", k->spec.id.c_str(), stage_state_name(k->compiling.state),
                    json_number(k->compiling.detail, "duration_s", 0),
                    k->compiling.errors.empty() ? "" : (" — " + k->compiling.errors.front()).c_str());
  }
}

std::optional<reference_inputs> python_reference_inputs(const kernel_spec& ref) {
  if (!is_python(ref.type)) return std::nullopt;
  reference_inputs ri;
  ri.reference_id = ref.id;
  ri.module = !ref.inputs_from.empty() ? ref.inputs_from
              : !ref.source_files.empty() ? ref.source_files[0]
              : ref.target ? ref.target->module : "";
  if (ri.module.empty()) return std::nullopt;
  ri.get_inputs = ref.target && !ref.target->get_inputs.empty() ? ref.target->get_inputs : ref.get_inputs_func;
  ri.get_init_inputs = ref.get_init_inputs_func;
  return ri;
}

namespace {

bool default_python_harness(const kernel_spec& s) {
  if (!is_python(s.type)) return false;
  if (s.testcase_command.empty()) return true;
  for (const auto& argv : s.testcase_command)
    for (const auto& a : argv)
      if (a == "magpie_bench" || ends_with(a, "/magpie_bench")) return true;
  return false;
}

// Python kernels take their inputs (and sizes, and constructor arguments) from the reference's
// module: the harness reads MAGPIE_BENCH_INPUTS_FROM over its own --inputs-from.
void use_reference_inputs(kernel_eval& k, const eval_context& ctx) {
  if (!is_python(k.spec.type)) return;
  if (!ctx.ref_inputs) {
    k.integrity.set("reference_inputs", check_status::skipped, "no python reference: inputs come from the kernel's own module");
    return;
  }
  const auto& ri = *ctx.ref_inputs;
  k.prepared.env.emplace_back("MAGPIE_BENCH_INPUTS_FROM", ri.module);
  k.prepared.env.emplace_back("MAGPIE_BENCH_GET_INPUTS", ri.get_inputs);
  k.prepared.env.emplace_back("MAGPIE_BENCH_GET_INIT_INPUTS", ri.get_init_inputs);
  std::string own = k.spec.inputs_from.empty() ? (k.spec.source_files.empty() ? "" : k.spec.source_files[0]) : k.spec.inputs_from;
  k.integrity.set("reference_inputs", check_status::pass,
                  "inputs, sizes and constructor arguments come from the reference's " + ri.get_inputs + "() in " + ri.module,
                  {{"module", ri.module}, {"get_inputs", ri.get_inputs}, {"reference", ri.reference_id},
                   {"kernel_own_inputs_ignored", own != ri.module && !own.empty()}});
}

// Decides the correctness method when the kernel wrote no manifest. Returns true when the
// exit code may stand in (legacy testcase, nothing to compare against, user did not forbid it).
bool judge_missing_manifest(kernel_eval& k, const correctness_policy& p, bool have_reference) {
  bool python = default_python_harness(k.spec);
  if (p.method == correctness_method::auto_select && !have_reference && !python) return true;
  k.basis = correctness_basis::outputs;
  std::string why = p.method == correctness_method::outputs ? "correctness.method is outputs"
                    : python ? "the magpie_bench harness always writes one"
                             : "a reference is configured, so every kernel must write one";
  k.correctness.errors.push_back("the testcase wrote no manifest.json (" + why +
                                 "): an exit code alone proves nothing (pass --correctness-method exit_code to accept it)");
  k.integrity.set("manifest", check_status::fail, "the testcase exited without writing its manifest" +
                                           (k.run->error.empty() ? std::string(" (exit code 0)") : " (" + k.run->error + ")"));
  return false;
}

// The held reference as reference_outputs' data shows it.
check_data held_reference_data(const held_reference& r) {
  return {{"id", r.id}, {"trials", r.trials.size()}, {"check_trials", r.checks.size()}, {"files_removed", r.files_removed},
          {"output_bytes_in_memory", r.bytes_held}};
}

// A compare worker's GPU: every later process of the kernel (correctness, ncu) runs there.
void append_binding(kernel_eval& k) {
  if (k.device_env.empty()) return;
  k.prepared.env.insert(k.prepared.env.end(), k.device_env.begin(), k.device_env.end());
  json b = json::object();
  for (const auto& [var, value] : k.device_env) b[var] = value;
  k.correctness_info["bound_to"] = b;
}

}  // namespace

void evaluate_correctness(kernel_eval& k, eval_context& ctx, const held_reference* reference, bool is_reference) {
  if (!k.compiled) k.prepared = prepare_kernel(k.spec, ctx.pctx, &k.compiling);
  k.compiled = true;
  append_binding(k);
  if (k.compiling.state == stage_state::failed) {
    k.correctness.state = stage_state::skipped;
    return;
  }
  if (k.prepared.testcase.empty()) {
    k.correctness.state = stage_state::failed;
    k.correctness.errors.push_back("no testcase_command (and no source_files to build a default one from)");
    return;
  }
  if (!is_reference) use_reference_inputs(k, ctx);
  auto dir = make_temp_dir(ctx.ws.dir / "correctness", sanitize_label(k.spec.id) + "-");
  hide_from_candidates(ctx.ws.dir / "correctness");
  if (!dir.ok()) {
    k.correctness.state = stage_state::failed;
    k.correctness.errors.push_back(dir.get_status().message());
    return;
  }
  const std::vector<uint64_t> no_checks;
  auto run = run_correctness(k.prepared, ctx.seeds, is_reference ? ctx.check_seeds : no_checks, *dir,
                             ctx.req.correctness.timeout_s);
  if (!run.ok()) {
    k.correctness.state = stage_state::failed;
    k.correctness.errors.push_back(run.get_status().message());
    return;
  }
  k.run = std::move(run).value();
  k.timed_out = any_timed_out(*k.run);
  k.correctness_info["run_seed"] = ctx.run_seed;
  k.correctness_info["seeds"] = ctx.seeds;
  k.correctness_info["output_dir"] = dir->string();
  if (!k.run->exit_ok) k.correctness.errors.push_back(k.run->error);
  const correctness_policy& pol = ctx.req.correctness;
  bool has_manifest = k.run->result.has_value();
  if (pol.method == correctness_method::exit_code) {
    k.basis = correctness_basis::exit_code;
    k.correctness_info["note"] = "correctness.method exit_code (asked for): only the exit code was checked, "
                                 "numerical correctness is not proven";
    k.integrity.set("correctness_method", check_status::warn, "exit code only, as asked (--correctness-method exit_code)");
  } else if (!has_manifest) {
    if (judge_missing_manifest(k, pol, reference != nullptr)) {
      k.basis = correctness_basis::exit_code;
      k.correctness_info["note"] = "the testcase does not speak the magpie harness protocol and no reference "
                                   "manifest exists: only its exit code was checked, numerical correctness is not proven";
      k.integrity.set("correctness_method", check_status::warn, "exit code only: no manifest and nothing to compare against");
    }
  } else if (is_reference) {
    k.basis = correctness_basis::reference;
    check_own_manifest(*k.run->result, ctx.seeds.size() + ctx.check_seeds.size(), k);
  } else if (!reference) {
    k.basis = correctness_basis::none;
    check_own_manifest(*k.run->result, ctx.seeds.size(), k);
    k.correctness_info["note"] = "no reference configured (add a 'reference:' entry): outputs were not compared, "
                                 "numerical correctness is not proven";
  } else {
    k.basis = correctness_basis::outputs;
    check_own_manifest(*k.run->result, ctx.seeds.size(), k);
    k.correctness_info["reference"] = reference->id;
    k.verdict = compare_to_reference(*reference, *k.run->result, pol, true);
    for (const auto& e : k.verdict->errors) k.correctness.errors.push_back(e);
  }
  k.correctness.state = k.correctness.errors.empty() ? stage_state::success : stage_state::failed;
  bool gpu_only = k.spec.type == kernel_type::hip || k.spec.type == kernel_type::cuda || k.spec.type == kernel_type::triton;
  if (!k.run->exit_ok && gpu_only && ctx.gpu_arch.empty())  // the likely reason first (compare's one-line reason)
    k.correctness.errors.insert(k.correctness.errors.begin(),
                                std::string("no GPU detected (nvidia-smi / rocminfo found none): a ") +
                                    kernel_type_name(k.spec.type) + " testcase cannot run on this machine");
  if (has_manifest) {
    size_t want = ctx.seeds.size() + (is_reference ? ctx.check_seeds.size() : 0), got = k.run->result->trials.size();
    bool outputs = std::all_of(k.run->result->trials.begin(), k.run->result->trials.end(),
                               [](const manifest_trial& t) { return !t.ok || !t.outputs.empty(); });
    k.integrity.set("manifest", got == want && outputs ? check_status::pass : check_status::fail,
                    got == want && outputs ? "manifest complete: every requested trial is in it"
                                           : strprintf("short manifest: %zu of %zu trials%s", got, want,
                                                       outputs ? "" : ", some without outputs"),
                    {{"trials", got}, {"requested", want}});
  }
  if (reference && !is_reference)
    k.integrity.set("reference_outputs", reference->files_removed ? check_status::pass : check_status::warn,
                    reference->files_removed
                        ? "the reference's outputs are held by the supervisor; its files were deleted before any "
                          "candidate ran, and this kernel ran in its own fresh directory"
                        : "the reference's files come from another job's shared directory and stay readable",
                    {{"reference", held_reference_data(*reference)}, {"directory", dir->string()}});
  if (is_reference && has_manifest && k.correctness.state == stage_state::success) {
    // A scale-out reference job leaves its files for the batch's candidate jobs (docs/slurm.md).
    const bool shared = ctx.req.mode == run_mode::reference;
    k.held = hold_reference(k.spec.id, *k.run->result, !shared);
    std::error_code ec;
    if (!shared) fs::remove(*dir / "manifest.json", ec);  // it names the secret check seeds
  } else if (has_manifest && !k.verdict) {
    remove_manifest_files(*k.run->result);
  }
  if (k.verdict) k.correctness.detail["comparison"] = correctness_verdict_json(*k.verdict);
  MAGPIE_LOG_INFO("[%s] correctness (%s): %s%s", k.spec.id.c_str(), correctness_basis_name(k.basis), stage_state_name(k.correctness.state),
                  k.correctness.errors.empty() ? "" : (" — " + k.correctness.errors.front()).c_str());
}

namespace {

json perf_summary(const timing_result& t) {
  auto e = [](double v, const char* unit) { return json{{"value", v}, {"unit", unit}}; };
  return {{"kernel_time_median", e(t.stats.median / 1e3, "us")}, {"kernel_time_mean", e(t.stats.mean / 1e3, "us")},
          {"kernel_time_min", e(t.stats.min / 1e3, "us")}, {"kernel_time_stdev", e(t.stats.stdev / 1e3, "us")},
          {"kernel_time_iqr", e(t.stats.iqr / 1e3, "us")}, {"samples", e(static_cast<double>(t.stats.n), "count")}};
}

// ncu cross-check: per kernel name, CUPTI median vs ncu median.
json cross_check_ncu(const timing_result& t, const json& ncu_kernels) {
  json out = json::array();
  if (!ncu_kernels.is_array()) return out;
  for (const auto& ck : t.cupti_kernels) {
    for (const auto& nk : ncu_kernels) {
      if (nk["kernel_name"] != ck.mangled_name && nk["kernel_name"] != ck.kernel_name) continue;
      double c = ck.median_ns;
      double n = json_number(json_value(nk, "duration_ns"), "median", 0);
      out.push_back({{"kernel", ck.kernel_name}, {"cupti_median_ns", c}, {"ncu_median_ns", n},
                     {"diff_pct", n > 0 ? (c - n) / n * 100.0 : 0.0}});
    }
  }
  return out;
}

bool want_ncu(const kernel_eval& k, const eval_context& ctx) {
  const profiler_backend b = ctx.req.performance.backend;
  if (b == profiler_backend::ncu) return true;
  if (b != profiler_backend::auto_select) return false;  // cupti / none / AMD backends
  return uses_cuda(k.spec.type) && starts_with(ctx.gpu_arch, "sm_") && !find_executable("ncu").empty();
}

void performance_without_protocol(kernel_eval& k, eval_context& ctx) {
  const auto& p = ctx.req.performance;
  fs::path dir = ctx.ws.dir / "performance" / sanitize_label(k.spec.id);
  if (want_ncu(k, ctx)) k.performance = run_ncu(k.prepared, p, ctx.req.timing, ctx.timing_seed, false);
  else if (uses_cuda(k.spec.type) && !ctx.cupti.injection_lib.empty() && p.backend != profiler_backend::none)
    k.performance = run_cupti_summary(k.prepared, ctx.cupti, dir, p.timeout_s);
  else {
    k.performance.state = stage_state::skipped;
    k.performance.errors.push_back(
        "not timed: the testcase does not speak the harness protocol and no profiler backend applies");
  }
}

}  // namespace

namespace {

// Bytes every correct implementation must read from device memory on the timed size (inputs
// after a cold flush) ÷ the GPU's datasheet bandwidth: no kernel can be faster.
double physical_floor_ns(const held_reference* ref, const timing_result& t, const timing_policy& p, check_data* info) {
  if (!ref || t.source != timing_source::cupti || !p.cold) return 0;
  const held_trial* tr = !ref->checks.empty() ? &ref->checks.front() : nullptr;
  for (const auto& x : ref->trials)
    if (!tr && x.meta.size_index == ref->timed_size) tr = &x;
  if (!tr) return 0;
  double bytes = 0;
  for (const auto& in : tr->meta.inputs) {
    double n = 1;
    for (int64_t d : in.shape) n *= static_cast<double>(d);
    bytes += n * static_cast<double>(dtype_size(in.type));
  }
  auto table = gpu::load_default_spec_table();
  if (!table.ok()) return 0;
  const gpu::spec_entry* e = gpu::match_spec(*table, t.ready ? t.ready->device : "");
  if (!e) return 0;
  double bw = gpu::resolve_spec(*e, false).mem_bw_gbps;  // GB/s = bytes per ns
  if (bw <= 0 || bytes <= 0) return 0;
  *info = {{"input_bytes", bytes}, {"peak_bandwidth_gbps", bw}, {"gpu", e->name}, {"floor_ns", bytes / bw}};
  return bytes / bw;
}

// Applies the timing stage's integrity findings: wrong outputs of a timed sample fail
// correctness; other failures reject the timing; the floor marks the kernel implausible.
void apply_timing_integrity(kernel_eval& k, const timing_result& t, double floor, const check_data& floor_info,
                            double baseline_median) {
  for (const auto& c : t.integrity.checks) k.integrity.set(c.name, c.status, c.detail, c.data);
  if (floor > 0 && t.ok) {
    check_data info = floor_info;
    info.set("median_ns", t.stats.median);
    if (baseline_median > 0 && baseline_median < floor * 0.97)
      k.integrity.set("physical_floor", check_status::skipped, "the baseline itself is below the input-bytes floor: this problem "
                                                   "does not read all of its inputs", info);
    else if (t.stats.median < floor * 0.97)
      k.integrity.set("physical_floor", check_status::fail,
                      strprintf("implausible: median %.2f us is below the physical floor of %.2f us (%.0f input bytes / "
                                "%.0f GB/s)", t.stats.median / 1e3, floor / 1e3, info.number("input_bytes", 0),
                                info.number("peak_bandwidth_gbps", 0)), info);
    else
      k.integrity.set("physical_floor", check_status::pass, "above the physical floor", info);
  }
  const integrity_check* out = k.integrity.find("timed_outputs");
  if (out && out->status == check_status::fail) {
    k.correctness.state = stage_state::failed;
    k.correctness.errors.push_back(out->detail);
    k.performance.state = stage_state::failed;
    k.performance.errors.push_back("rejected: " + out->detail);
    return;
  }
  for (const auto& c : k.integrity.checks)
    if (c.status == check_status::fail && c.name != "physical_floor") {
      k.performance.state = stage_state::failed;
      k.performance.errors.push_back("rejected: " + c.detail);
      return;
    }
}

}  // namespace

void evaluate_performance(const std::vector<kernel_eval*>& ks, eval_context& ctx, const held_reference* reference) {
  std::vector<kernel_eval*> timed;
  measure_request mr;
  int base = -1;
  for (kernel_eval* k : ks) {
    if (!ctx.req.performance.enabled || k->correctness.state != stage_state::success) continue;
    if (!k->spec.prof_command.empty()) {
      k->performance = run_prof_command(k->prepared, ctx.req.performance.timeout_s);
      continue;
    }
    if (!k->speaks_protocol()) {
      performance_without_protocol(*k, ctx);
      continue;
    }
    if (ctx.req.mode == run_mode::compare && k == ks[static_cast<size_t>(ctx.req.baseline_index)])
      base = static_cast<int>(timed.size());
    timed.push_back(k);
    mr.kernels.push_back(&k->prepared);
  }
  if (timed.empty()) return;
  const timing_policy& tp = ctx.req.timing;
  MAGPIE_LOG_INFO("timing %zu kernel(s) in %d processes each%s: warm-up %d, ≥%d samples, noise < %.2f%%, budget %.1f s, %s",
                  timed.size(), tp.processes, timed.size() * static_cast<size_t>(tp.processes) > 1 ? ", interleaved" : "",
                  tp.warmup, tp.min_samples, tp.max_noise * 100, tp.max_time_s, tp.cold ? "cold (cache flushed)" : "hot");
  mr.policy = tp;
  mr.seed = ctx.timing_seed;
  // Timed outputs are checked against the reference's, made with the correctness runs' weights
  // (on an H200 every KernelBench Model with random weights failed its checked samples before).
  mr.init_seed = model_init_seed(ctx.seeds);
  mr.order_seed = ctx.order_seed;
  mr.check_seeds = ctx.check_seeds;
  mr.reference = reference;
  mr.tolerances = ctx.req.correctness;
  mr.cupti = ctx.cupti;
  mr.plan = ctx.req.mode == run_mode::compare;
  mr.baseline = base;
  mr.same_tolerance = ctx.req.compare.same_tolerance;
  mr.confidence = ctx.req.compare.confidence;
  measure_outcome mo = ctx.workers.bound() ? measure_on_devices(mr, ctx.workers, base) : measure_interleaved(mr);
  ctx.timing_order = mo.order;
  check_timing_integrity(mo.results, base, tp);
  double base_median = base >= 0 && mo.results[static_cast<size_t>(base)].ok ? mo.results[static_cast<size_t>(base)].stats.median : 0;
  for (size_t i = 0; i < timed.size(); ++i) {
    kernel_eval& k = *timed[i];
    const timing_result& t = mo.results[i];
    k.timing = t;
    k.performance.state = t.ok ? stage_state::success : stage_state::failed;
    if (!t.ok) k.performance.errors.push_back("timing failed: " + t.error);
    check_data floor_info;
    double floor = physical_floor_ns(reference, t, tp, &floor_info);
    apply_timing_integrity(k, t, floor, floor_info, static_cast<int>(i) == base ? 0 : base_median);
    k.performance.detail["backend"] = t.source;
    k.performance.detail["summary"] = perf_summary(t);
    k.performance.detail["kernels"] = cupti_kernels_json(t.cupti_kernels);
    if (t.ok && want_ncu(k, ctx)) {
      stage_result n = run_ncu(k.prepared, ctx.req.performance, tp, ctx.timing_seed, true);
      json nj = stage_result_json(n);
      if (nj.is_null()) nj = json::object();
      nj["state"] = n.state;
      if (n.success()) nj["cross_check"] = cross_check_ncu(t, n.detail["kernels"]);
      k.performance.detail["ncu"] = nj;
    }
  }
}

void compute_score(kernel_eval& k) {
  if (k.compiling.state == stage_state::failed) {
    k.score = 0;
    return;
  }
  double s = 0;
  if (k.correctness.state == stage_state::success) s += 0.5;
  if (k.performance.state == stage_state::success) s += 0.5;
  if (k.performance.state == stage_state::skipped && k.correctness.state == stage_state::success) s = 1.0;
  k.score = s;
}

}  // namespace magpie::kernel
