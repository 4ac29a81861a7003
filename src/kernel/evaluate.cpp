#include "kernel/evaluate.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "core/log.h"
#include "core/strings.h"
#include "core/yaml.h"
#include "gpu/detect.h"
#include "kernel/profile.h"

namespace magpie::kernel {

std::string kernel_eval::outcome() const {
  if (compiling.state == "FAILED") return "failed";
  if (timed_out) return "timeout";
  if (correctness.state == "FAILED") return verdict && !verdict->passed ? "incorrect" : "failed";
  if (correctness.state == "SKIPPED") return "skipped";
  return "passed";
}

namespace {

uint64_t fresh_seed() {
  uint64_t s = 0;
  int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (::read(fd, &s, sizeof s) != static_cast<ssize_t>(sizeof s)) s = 0;
    ::close(fd);
  }
  if (s == 0) s = static_cast<uint64_t>(monotonic_seconds() * 1e9) ^ static_cast<uint64_t>(getpid());
  return s;
}

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
    if (std::find(sizes.begin(), sizes.end(), t.size_index) == sizes.end()) sizes.push_back(t.size_index);
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
  MAGPIE_ASSIGN_OR_RETURN(ctx.ws, create_workspace(req.output_dir, req.mode, label));
  bool needs_gpu = false;
  for (const auto& k : req.kernels) needs_gpu = needs_gpu || k.type != kernel_type::host;
  if (req.reference) needs_gpu = needs_gpu || req.reference->type != kernel_type::host;
  if (needs_gpu) ctx.gpu_arch = gpu::detect().architecture;
  ctx.cupti = find_cupti();
  ctx.run_seed = req.correctness.seed ? *req.correctness.seed : fresh_seed();
  splitmix64 rng(ctx.run_seed);
  for (int i = 0; i < req.correctness.trials; ++i) ctx.seeds.push_back(rng.next() >> 1);
  ctx.timing_seed = rng.next() >> 1;
  ctx.pctx.gpu_arch = ctx.gpu_arch;
  ctx.pctx.build_root = ctx.ws.dir / "build";
  ctx.pctx.enable_default_compile = req.enable_default_compile;
  json snap = {{"kernels", json::array()}};
  for (const auto& k : req.kernels) snap["kernels"].push_back(k.to_json());
  if (req.reference) snap["reference"] = req.reference->to_json();
  snap["correctness"] = req.correctness.to_json();
  snap["performance"] = req.performance.to_json();
  snap["performance"]["timing"] = req.timing.to_json();
  if (req.mode == "compare") snap["compare"] = req.compare.to_json();
  snap["run_seed"] = ctx.run_seed;
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(ctx.ws.dir / "config.yaml", json_to_yaml(snap)));
  return ctx;
}

void evaluate_correctness(kernel_eval& k, eval_context& ctx, const manifest* reference, const std::string& reference_id,
                          bool is_reference) {
  k.prepared = prepare_kernel(k.spec, ctx.pctx, &k.compiling);
  if (k.compiling.state == "FAILED") {
    k.correctness.state = "SKIPPED";
    return;
  }
  if (k.prepared.testcase.empty()) {
    k.correctness.state = "FAILED";
    k.correctness.errors.push_back("no testcase_command (and no source_files to build a default one from)");
    return;
  }
  fs::path dir = ctx.ws.dir / "correctness" / sanitize_label(k.spec.id);
  auto run = run_correctness(k.prepared, ctx.seeds, dir, ctx.req.correctness.timeout_s);
  if (!run.ok()) {
    k.correctness.state = "FAILED";
    k.correctness.errors.push_back(run.get_status().message());
    return;
  }
  k.run = std::move(run).value();
  k.timed_out = any_timed_out(*k.run);
  k.correctness_info["run_seed"] = ctx.run_seed;
  k.correctness_info["seeds"] = ctx.seeds;
  k.correctness_info["output_dir"] = dir.string();
  if (!k.run->exit_ok) k.correctness.errors.push_back(k.run->error);
  correctness_method m = ctx.req.correctness.method;
  bool has_manifest = k.run->result.has_value();
  if (m == correctness_method::exit_code || (m == correctness_method::auto_select && !has_manifest)) {
    k.correctness_method = "exit_code";
    k.correctness_info["note"] = has_manifest ? "method exit_code: outputs were written but not compared"
                                              : "the testcase does not speak the magpie harness protocol: only its exit "
                                                "code was checked, numerical correctness is not proven";
  } else if (!has_manifest) {
    k.correctness_method = "outputs";
    k.correctness.errors.push_back("correctness.method is outputs but the testcase wrote no manifest.json "
                                   "(build it with include/magpie/bench.hpp or run it through magpie_bench)");
  } else if (is_reference) {
    k.correctness_method = "reference";
    check_own_manifest(*k.run->result, ctx.seeds.size(), k);
  } else if (!reference) {
    k.correctness_method = "exit_code";
    check_own_manifest(*k.run->result, ctx.seeds.size(), k);
    k.correctness_info["note"] = "no reference configured (add a 'reference:' entry): outputs were not compared, "
                                 "numerical correctness is not proven";
  } else {
    k.correctness_method = "outputs";
    check_own_manifest(*k.run->result, ctx.seeds.size(), k);
    k.correctness_info["reference"] = reference_id;
    k.verdict = compare_to_reference(*reference, *k.run->result, ctx.req.correctness);
    for (const auto& e : k.verdict->errors) k.correctness.errors.push_back(e);
  }
  k.correctness.state = k.correctness.errors.empty() ? "SUCCESS" : "FAILED";
  if (k.verdict) k.correctness.detail["comparison"] = k.verdict->to_json();
  MAGPIE_LOG_INFO("[%s] correctness (%s): %s%s", k.spec.id.c_str(), k.correctness_method.c_str(), k.correctness.state.c_str(),
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
  if (!t.cupti_kernels.is_array() || !ncu_kernels.is_array()) return out;
  for (const auto& ck : t.cupti_kernels) {
    for (const auto& nk : ncu_kernels) {
      if (nk["kernel_name"] != ck["mangled_name"] && nk["kernel_name"] != ck["kernel_name"]) continue;
      double c = ck["duration_ns"]["median"].get<double>(), n = nk["duration_ns"]["median"].get<double>();
      out.push_back({{"kernel", ck["kernel_name"]}, {"cupti_median_ns", c}, {"ncu_median_ns", n},
                     {"diff_pct", n > 0 ? (c - n) / n * 100.0 : 0.0}});
    }
  }
  return out;
}

bool want_ncu(const kernel_eval& k, const eval_context& ctx) {
  const std::string& b = ctx.req.performance.backend;
  if (b == "ncu") return true;
  if (!b.empty()) return false;  // cupti / none / AMD backends
  return uses_cuda(k.spec.type) && starts_with(ctx.gpu_arch, "sm_") && !find_executable("ncu").empty();
}

void performance_without_protocol(kernel_eval& k, eval_context& ctx) {
  const auto& p = ctx.req.performance;
  fs::path dir = ctx.ws.dir / "performance" / sanitize_label(k.spec.id);
  if (want_ncu(k, ctx)) k.performance = run_ncu(k.prepared, p, ctx.req.timing, ctx.timing_seed, false);
  else if (uses_cuda(k.spec.type) && !ctx.cupti.injection_lib.empty() && p.backend != "none")
    k.performance = run_cupti_summary(k.prepared, ctx.cupti, dir, p.timeout_s);
  else {
    k.performance.state = "SKIPPED";
    k.performance.errors.push_back(
        "not timed: the testcase does not speak the harness protocol and no profiler backend applies");
  }
}

}  // namespace

void evaluate_performance(const std::vector<kernel_eval*>& ks, eval_context& ctx) {
  std::vector<kernel_eval*> timed;
  std::vector<const prepared_kernel*> prepared;
  for (kernel_eval* k : ks) {
    if (!ctx.req.performance.enabled || k->correctness.state != "SUCCESS") continue;
    if (!k->spec.prof_command.empty()) {
      k->performance = run_prof_command(k->prepared, ctx.req.performance.timeout_s);
      continue;
    }
    if (!k->speaks_protocol()) {
      performance_without_protocol(*k, ctx);
      continue;
    }
    timed.push_back(k);
    prepared.push_back(&k->prepared);
  }
  if (timed.empty()) return;
  MAGPIE_LOG_INFO("timing %zu kernel(s)%s: warm-up %d, ≥%d samples, noise < %.2f%%, budget %.1f s, %s", timed.size(),
                  timed.size() > 1 ? " interleaved" : "", ctx.req.timing.warmup, ctx.req.timing.min_samples,
                  ctx.req.timing.max_noise * 100, ctx.req.timing.max_time_s, ctx.req.timing.cold ? "cold (cache flushed)" : "hot");
  auto results = measure_interleaved(prepared, ctx.req.timing, ctx.timing_seed, ctx.cupti, ctx.ws.dir / "timing");
  for (size_t i = 0; i < timed.size(); ++i) {
    kernel_eval& k = *timed[i];
    k.timing = results[i];
    k.performance.state = results[i].ok ? "SUCCESS" : "FAILED";
    if (!results[i].ok) k.performance.errors.push_back("timing failed: " + results[i].error);
    k.performance.detail["backend"] = results[i].source;
    k.performance.detail["summary"] = perf_summary(results[i]);
    k.performance.detail["kernels"] = results[i].cupti_kernels.is_array() ? results[i].cupti_kernels : json::array();
    k.performance.detail["workload_dir"] = (ctx.ws.dir / "timing" / k.spec.id).string();
    if (results[i].ok && want_ncu(k, ctx)) {
      stage_result n = run_ncu(k.prepared, ctx.req.performance, ctx.req.timing, ctx.timing_seed, true);
      json nj = n.to_json();
      if (nj.is_null()) nj = json::object();
      nj["state"] = n.state;
      if (n.success()) nj["cross_check"] = cross_check_ncu(results[i], n.detail["kernels"]);
      k.performance.detail["ncu"] = nj;
    }
  }
}

void compute_score(kernel_eval& k) {
  if (k.compiling.state == "FAILED") {
    k.score = 0;
    return;
  }
  double s = 0;
  if (k.correctness.state == "SUCCESS") s += 0.5;
  if (k.performance.state == "SUCCESS") s += 0.5;
  if (k.performance.state == "SKIPPED" && k.correctness.state == "SUCCESS") s = 1.0;
  k.score = s;
}

json kernel_eval_json(const kernel_eval& k, const eval_context& ctx) {
  json j;
  j["compiling_state"] = k.compiling.state;
  j["correctness_state"] = k.correctness.state;
  j["performance_state"] = k.performance.state;
  j["latency_state"] = "SKIPPED";
  std::vector<std::string> errors;
  for (const auto* st : {&k.compiling, &k.correctness, &k.performance})
    if (st->state == "FAILED") errors.insert(errors.end(), st->errors.begin(), st->errors.end());
  j["errors"] = errors;
  j["score"] = k.score;
  j["compiling_result"] = k.compiling.to_json();
  j["correctness_result"] = k.correctness.state == "SKIPPED" && k.correctness.errors.empty()
                                ? json(nullptr)
                                : json{{"success", k.correctness.success()},
                                       {"errors", k.correctness.errors.empty() ? json(nullptr) : json(k.correctness.errors)}};
  json perf = k.performance.to_json();
  if (perf.is_object() && !perf.contains("command")) perf["command"] = nullptr;
  j["performance_result"] = perf;
  j["latency_result"] = nullptr;
  j["extra"] = {{"kernel_id", k.spec.id}, {"kernel_type", kernel_type_name(k.spec.type)}};
  j["outcome"] = k.outcome();
  j["correctness_method"] = k.correctness_method;
  json c = k.correctness_info;
  c["method"] = k.correctness_method;
  c["policy"] = ctx.req.correctness.to_json();
  if (k.verdict) c["comparison"] = k.verdict->to_json();
  if (!k.correctness.errors.empty()) c["failures"] = k.correctness.errors;
  j["correctness"] = c;
  j["timing"] = k.timing ? k.timing->to_json(ctx.req.timing) : json(nullptr);
  j["kernel_config"] = k.spec.to_json();
  return j;
}

std::string kernel_eval_text(const kernel_eval& k) {
  std::string sep(60, '=');
  std::string out = sep + "\n";
  out += "Kernel: " + k.spec.id + "\n";
  out += std::string("Type: ") + kernel_type_name(k.spec.type) + "\n";
  out += "Compiling: " + k.compiling.state + "\n";
  out += "Correctness: " + k.correctness.state + " (" + k.correctness_method + ")\n";
  out += "Performance: " + k.performance.state;
  if (k.timing && k.timing->ok)
    out += strprintf(" (median %s, IQR %s, %zu samples, %s, %s)", format_duration_ns(k.timing->stats.median).c_str(),
                     format_duration_ns(k.timing->stats.iqr).c_str(), k.timing->stats.n, k.timing->source.c_str(),
                     k.timing->stop_reason.c_str());
  out += "\n";
  out += strprintf("Score: %.2f\n", k.score);
  std::vector<std::string> errs;
  for (const auto* st : {&k.compiling, &k.correctness, &k.performance})
    if (st->state == "FAILED") errs.insert(errs.end(), st->errors.begin(), st->errors.end());
  if (!errs.empty()) {
    out += "Errors:\n";
    for (size_t i = 0; i < errs.size() && i < 8; ++i) out += "  - " + errs[i] + "\n";
    if (errs.size() > 8) out += strprintf("  ... and %zu more (see the report)\n", errs.size() - 8);
  }
  out += sep + "\n";
  return out;
}

}  // namespace magpie::kernel
