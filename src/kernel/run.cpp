// analyze and compare runs: workspaces, ordering of the stages, verdicts, reports.
#include <algorithm>
#include <thread>

#include "core/log.h"
#include "core/progress.h"
#include "core/stats.h"
#include "core/strings.h"
#include "core/utf8.h"
#include "core/workspace.h"
#include "kernel/compare.h"
#include "kernel/evaluate.h"
#include "kernel/report_printer.h"
#include "kernel/verdict.h"

namespace magpie::kernel {

namespace {

kernel_eval evaluate_reference(eval_context& ctx, const kernel_spec& spec) {
  kernel_eval ref;
  ref.spec = spec;
  ref.device_env = ctx.workers.bind(0);
  evaluate_correctness(ref, ctx, nullptr, true);
  compute_score(ref);
  return ref;
}

void fail_for_reference(kernel_eval& k, const kernel_eval& ref) {
  k.correctness.state = stage_state::failed;
  std::string why = ref.correctness.errors.empty() ? stage_state_name(ref.compiling.state) : ref.correctness.errors.front();
  if (ref.compiling.state == stage_state::failed && !ref.compiling.errors.empty()) why = ref.compiling.errors.front();
  k.correctness.errors.push_back("the reference '" + ref.spec.id + "' failed, so correctness cannot be judged: " + why);
}

const held_reference* held_of(const kernel_eval& k) {
  return k.correctness.success() && k.held ? &*k.held : nullptr;
}

// The reference of a scale-out batch, evaluated in another job: its manifest becomes the gate.
kernel_eval external_reference_eval(const external_reference& ext, const eval_request& req) {
  kernel_eval ref;
  if (req.reference) ref.spec = *req.reference;
  ref.spec.id = ext.id;
  ref.basis = ext.basis;
  ref.correctness.state = stage_state::success;
  if (!ext.failure.empty()) {
    ref.correctness.state = stage_state::failed;
    ref.correctness.errors.push_back(ext.failure);
  } else if (!ext.manifest_dir.empty()) {
    auto m = read_manifest(ext.manifest_dir);
    if (!m.ok()) {
      ref.correctness.state = stage_state::failed;
      ref.correctness.errors.push_back("reference manifest: " + m.get_status().message());
    } else {
      ref.run = correctness_run{};
      ref.run->dir = ext.manifest_dir;
      ref.run->exit_ok = true;
      ref.run->result = std::move(m).value();
      // Another job's files on the shared directory: read, not removed (the batch's other
      // candidate jobs compare against them too).
      ref.held = hold_reference(ext.id, *ref.run->result, false);
    }
  }
  return ref;
}

status write_report(const eval_context& ctx, const char* name, const json& report, run_outcome* out) {
  out->report = report;
  out->workspace = ctx.ws.dir;
  out->report_path = ctx.ws.dir / name;
  MAGPIE_RETURN_IF_ERROR(write_json_file(out->report_path, report));
  note_run_finished(ctx.ws.dir);  // from here an interruption no longer marks it INCOMPLETE
  return ok_status();
}

}  // namespace

status_or<run_outcome> run_analyze(const eval_request& req_in) {
  eval_request req = req_in;
  req.mode = run_mode::analyze;
  if (req.kernels.empty()) return invalid_argument("no kernels to analyze");
  MAGPIE_ASSIGN_OR_RETURN(eval_context ctx, make_context(req, req.kernels[0].id));
  if (req.reference) ctx.ref_inputs = python_reference_inputs(*req.reference);
  std::optional<kernel_eval> ref;
  if (req.external_ref) ref = external_reference_eval(*req.external_ref, req);
  else if (req.reference) ref = evaluate_reference(ctx, *req.reference);
  std::vector<kernel_eval> evals;
  progress_bar bar("analyze", req.kernels.size());
  for (const auto& spec : req.kernels) {
    bar.set_note(spec.id);
    kernel_eval k;
    k.spec = spec;
    if (ref && !held_of(*ref)) {
      k.prepared = prepare_kernel(k.spec, ctx.pctx, &k.compiling);
      fail_for_reference(k, *ref);
    } else {
      evaluate_correctness(k, ctx, ref ? held_of(*ref) : nullptr, false);
      evaluate_performance({&k}, ctx, ref ? held_of(*ref) : nullptr);
    }
    compute_score(k);
    evals.push_back(std::move(k));
    bar.advance();
  }
  bar.finish();
  run_outcome out;
  json report = report_header(ctx);
  report["reference"] = ref ? reference_json(*ref, ctx) : json(nullptr);
  if (req.external_ref) report["external_reference"] = external_reference_json(*req.external_ref);
  report["summary"] = json::array();
  report["results"] = json::array();
  for (const auto& k : evals) {
    report["summary"].push_back(summary_row(k));
    report["results"].push_back(kernel_eval_json(k, ctx));
    out.console += kernel_eval_text(k);
    if (k.correctness.state != stage_state::success) out.exit_code = 1;
  }
  MAGPIE_RETURN_IF_ERROR(write_report(ctx, "analyze_report.json", report, &out));
  out.console += "Workspace: " + ctx.ws.dir.string() + "\n";
  return out;
}

namespace {

// The typed inputs of the verdict builder (kernel/verdict.h) for one evaluated kernel.
// rounds_shared: the processes of every implementation were sampled in the same rounds (one
// interleaved sampler; not with compare workers, whose GPUs each run their own rounds).
verdict_input verdict_input_of(const kernel_eval& k, bool rounds_shared) {
  verdict_input v;
  v.id = k.spec.id;
  v.correct = k.correctness.state == stage_state::success;
  const bool timing_ok = k.timing && k.timing->ok;
  bool rejected = false;
  for (const auto& c : k.integrity.checks)
    if (c.status == check_status::fail && c.name != "physical_floor") rejected = true;
  v.timed = timing_ok && !rejected;
  v.not_timed_reason = !timing_ok ? "no timing for this kernel" : "rejected: " + k.integrity.reason();
  const integrity_check* fl = k.integrity.find("physical_floor");
  v.implausible = fl && fl->status == check_status::fail;
  v.floor_ns = fl ? fl->data.number("floor_ns", 0) : 0;
  const integrity_check* tm = k.integrity.find("timer");
  v.trusted_timer = !(tm && tm->status == check_status::warn);
  if (timing_ok)
    for (const auto& p : k.timing->processes) {
      v.samples.processes.push_back(p.samples_ns);
      if (rounds_shared) v.samples.rounds.push_back(p.rounds);
    }
  return v;
}

// A multi-line error (a command's output, a Python traceback) as one line of at most 240
// characters: its first line, then its last non-empty line (where a traceback names the
// exception, e.g. "ModuleNotFoundError: No module named 'torch'"), which is never cut.
std::string one_line_reason(const std::string& text) {
  std::vector<std::string> lines;
  for (const auto& l : split(text, '\n'))
    if (!trim(l).empty()) lines.emplace_back(trim(l));
  if (lines.empty()) return "";
  std::string last = lines.back().size() > 200 ? utf8_prefix(lines.back(), 197) + "..." : lines.back();
  if (lines.size() == 1) return last;
  std::string head = lines.front();
  size_t room = last.size() + 5 < 240 ? 240 - last.size() - 5 : 0;
  if (head.size() > room) head = utf8_prefix(head, room > 3 ? room - 3 : 0) + "...";
  return head + " ... " + last;
}

// One line saying why a kernel was rejected ("" when it was not): the first failed integrity
// check, else the first correctness error.
std::string rejection_line(const kernel_eval& k) {
  std::string why = k.integrity.reason();
  const auto& ce = k.correctness.errors;
  if (why.empty() && k.correctness.state == stage_state::failed && !ce.empty()) {
    why = ce.front();
    if (starts_with(why, "no GPU detected") && ce.size() > 1) return "no GPU detected; " + one_line_reason(ce[1]);
  }
  if (why.empty() && k.compiling.state == stage_state::failed && !k.compiling.errors.empty()) why = k.compiling.errors.front();
  return one_line_reason(why);
}

// A kernel of the local compare as the compare builder sees it.
compare_kernel compare_kernel_of(const kernel_eval& k, const verdict& v) {
  compare_kernel c;
  c.id = k.spec.id;
  c.correct = k.correctness.state == stage_state::success;
  c.exit_code_only = k.basis == correctness_basis::exit_code;
  c.v = v;
  c.median_ns = k.timing && k.timing->ok ? k.timing->stats.median : 0;
  if (k.timing && k.timing->ok) {
    c.noise = k.timing->stats.rel_stdev;
    c.samples = k.timing->stats.n;
  }
  c.expect_incorrect = k.spec.expect_incorrect;
  c.rejected = k.integrity.rejected();
  c.not_ranked_why = !c.correct ? kernel_outcome_name(k.outcome()) : c.rejected ? "rejected" : "not timed";
  c.detail = rejection_line(k);
  if (!c.detail.empty()) c.detail = "rejected: " + c.detail;
  return c;
}


// The implementation every other is judged against: a separate reference (a local `reference:`
// or another job's, req.external_ref) or the baseline kernel.
struct compare_reference {
  std::optional<kernel_eval> separate;  ///< empty: the baseline kernel is the reference
  const kernel_eval* eval = nullptr;
  const held_reference* held = nullptr;
};

// Every implementation (and a local reference) is compiled first, in parallel (compile_all).
void compile_compare(std::vector<kernel_eval>& ks, compare_reference& ref, const eval_context& ctx) {
  const eval_request& req = ctx.req;
  if (req.reference && !req.external_ref) {
    ref.separate.emplace();
    ref.separate->spec = *req.reference;
  }
  std::vector<kernel_eval*> to_compile;
  if (ref.separate) to_compile.push_back(&*ref.separate);
  for (auto& k : ks) to_compile.push_back(&k);
  compile_all(to_compile, ctx);
}

// The reference's correctness run, alone and first (its outputs become the gate).
void evaluate_compare_reference(std::vector<kernel_eval>& ks, compare_reference& ref, eval_context& ctx) {
  const eval_request& req = ctx.req;
  kernel_eval* r = nullptr;
  if (req.external_ref) {
    ref.separate = external_reference_eval(*req.external_ref, req);
    r = &*ref.separate;
  } else if (req.reference) {
    r = &*ref.separate;
    r->device_env = ctx.workers.bind(0);
    evaluate_correctness(*r, ctx, nullptr, true);
    compute_score(*r);
  } else {
    r = &ks[static_cast<size_t>(req.baseline_index)];
    r->device_env = ctx.workers.bind(0);
    evaluate_correctness(*r, ctx, nullptr, true);
  }
  ref.eval = r;
  ref.held = held_of(*r);
}

// Candidates are independent once the reference is held: their correctness runs (compile
// included) go in parallel, up to half the cores or one per compare worker, whichever is more
// (each writes only its own kernel_eval). With workers bound to GPUs, thread t's processes run
// on worker (t mod workers)'s GPU (kernel/workers.h).
void evaluate_candidates(std::vector<kernel_eval>& ks, const compare_reference& ref, eval_context& ctx) {
  const int b = ctx.req.baseline_index;
  const bool baseline_is_reference = !ref.separate;
  progress_bar bar("correctness", static_cast<uint64_t>(ks.size()));
  std::vector<size_t> todo;
  for (size_t i = 0; i < ks.size(); ++i) {
    if (baseline_is_reference && static_cast<int>(i) == b) {
      bar.advance();
      continue;
    }
    todo.push_back(i);
  }
  const int cpu_width = static_cast<int>(std::max<unsigned>(1, std::min<unsigned>(8, std::thread::hardware_concurrency() / 2)));
  run_on_workers(
      todo.size(), std::max(cpu_width, ctx.workers.workers),
      [&](size_t j, int slot) {
        auto& k = ks[todo[j]];
        // An explicit reference that failed (whatever its method) fails every candidate: a candidate
        // that writes no manifest must not pass on its exit code because the reference could not run.
        // A baseline kernel judged by its own exit code (upstream Magpie's form, no reference:) is just
        // another kernel: its failure leaves the others to their own testcases, as in upstream Magpie.
        const bool ref_failed = !ref.eval->correctness.success() && !baseline_is_reference;
        if (!ref.held && (ref_failed || ref.eval->basis != correctness_basis::exit_code)) {
          fail_for_reference(k, *ref.eval);
        } else {
          k.device_env = ctx.workers.bind(slot % ctx.workers.workers);
          evaluate_correctness(k, ctx, ref.held, false);
        }
      },
      [&](size_t j) {
        bar.set_note(ks[todo[j]].spec.id);
        bar.advance();
      });
  bar.finish();
}

// Scores, verdicts against the baseline and the compare result (rankings, winner).
compare_result judge_compare(std::vector<kernel_eval>& ks, const eval_context& ctx) {
  for (auto& k : ks) compute_score(k);
  std::vector<verdict_input> vin;
  for (const auto& k : ks) vin.push_back(verdict_input_of(k, !ctx.workers.bound()));
  std::vector<verdict> vs = build_verdicts(vin, ctx.req.baseline_index, ctx.req.compare, ctx.run_seed);
  std::vector<compare_kernel> cks;
  for (size_t i = 0; i < ks.size(); ++i) cks.push_back(compare_kernel_of(ks[i], vs[i]));
  return build_compare_result(std::move(cks), ctx.req.baseline_index);
}

}  // namespace

status_or<run_outcome> run_compare(const eval_request& req_in) {
  eval_request req = req_in;
  req.mode = run_mode::compare;
  if (req.kernels.size() < 2) return invalid_argument("compare needs at least 2 kernels, got %zu", req.kernels.size());
  int n = static_cast<int>(req.kernels.size());
  if (req.baseline_index < 0 || req.baseline_index >= n)
    return invalid_argument("--baseline %d is out of range (0..%d)", req.baseline_index, n - 1);
  const double t_start = monotonic_seconds();
  MAGPIE_ASSIGN_OR_RETURN(eval_context ctx, make_context(req, ""));
  MAGPIE_ASSIGN_OR_RETURN(ctx.workers, plan_compare_workers(req));
  std::vector<kernel_eval> ks(req.kernels.size());
  for (size_t i = 0; i < ks.size(); ++i) ks[i].spec = req.kernels[i];
  ctx.ref_inputs = python_reference_inputs(req.reference ? *req.reference : req.kernels[static_cast<size_t>(req.baseline_index)]);
  // Compile everything, then correctness (the reference first), then timing, each phase alone
  // on the machine.
  compare_reference ref;
  const double t_compile = monotonic_seconds();
  compile_compare(ks, ref, ctx);
  const double t_correct = monotonic_seconds();
  evaluate_compare_reference(ks, ref, ctx);
  evaluate_candidates(ks, ref, ctx);
  std::vector<kernel_eval*> all;
  for (auto& k : ks) all.push_back(&k);
  const double t_timing = monotonic_seconds();
  evaluate_performance(all, ctx, ref.held);
  const double t_timed = monotonic_seconds();

  compare_run cr{&ks, ref.eval, ref.separate.has_value(), judge_compare(ks, ctx), {}};
  const double t_end = monotonic_seconds();
  cr.phases = {t_correct - t_compile, t_timing - t_correct, t_timed - t_timing, (t_end - t_start) - (t_timed - t_compile),
               t_end - t_start};
  MAGPIE_LOG_INFO("compare phases: compile %.1f s, correctness %.1f s, timing %.1f s, other %.1f s (total %.1f s)",
                  cr.phases.compile_s, cr.phases.correctness_s, cr.phases.timing_s, cr.phases.other_s, cr.phases.total_s);
  run_outcome out;
  MAGPIE_RETURN_IF_ERROR(write_report(ctx, "compare_report.json", compare_report_json(ctx, cr), &out));
  out.console = compare_console(cr.result, ctx.ws.dir);
  return out;
}

status_or<run_outcome> run_reference_only(const eval_request& req_in) {
  eval_request req = req_in;
  kernel_spec spec;
  if (req.reference) {
    spec = *req.reference;
  } else {
    int n = static_cast<int>(req.kernels.size());
    if (req.baseline_index < 0 || req.baseline_index >= n)
      return invalid_argument("no reference: --baseline %d is out of range (0..%d)", req.baseline_index, n - 1);
    spec = req.kernels[static_cast<size_t>(req.baseline_index)];
  }
  req.mode = run_mode::reference;
  req.external_ref.reset();
  MAGPIE_ASSIGN_OR_RETURN(eval_context ctx, make_context(req, spec.id));
  kernel_eval ref = evaluate_reference(ctx, spec);
  run_outcome out;
  json report = report_header(ctx);
  report["reference"] = kernel_eval_json(ref, ctx);
  const held_reference* m = held_of(ref);
  report["manifest_dir"] = m ? json(ref.run->dir.string()) : json(nullptr);
  report["seeds"] = ctx.seeds;
  report["timing_seed"] = ctx.timing_seed;
  MAGPIE_RETURN_IF_ERROR(write_report(ctx, "reference_report.json", report, &out));
  out.console = kernel_eval_text(ref) + "Workspace: " + ctx.ws.dir.string() + "\n";
  out.exit_code = ref.correctness.success() ? 0 : 1;
  return out;
}

}  // namespace magpie::kernel
