// The decoders of loop_report.json's blocks (loop_report_codec_detail.h); the encoders are in
// loop_report_codec.cpp.
#include <algorithm>

#include "optimize/loop_report_codec_detail.h"

namespace magpie::optimize::loop_report_detail {

namespace {

const char* const k_metric_keys[] = {"output_throughput", "request_throughput", "total_token_throughput", "completed", "failed",
                                     "duration_s", "tpot_mean_ms", "tpot_median_ms", "ttft_mean_ms", "itl_mean_ms", "e2el_mean_ms"};

}  // namespace

status read_word_fn(const report_object& o, const char* key, const std::string& w, bool known, const std::vector<std::string>& words) {
  if (known) return ok_status();
  return o.fail(key, strprintf("unknown word '%s' (expected one of: %s)", w.c_str(), join(words, ", ").c_str()).c_str());
}

/// Each element of the array under `key` decoded by `fn` (element path "key[i]").
// ---------------------------------------------------------------- blocks: decode
status dec_stop(const report_object& o, stop_reason* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"code", "category", "message", "details"}));
  std::string category;
  MAGPIE_RETURN_IF_ERROR(o.str("code", &s->code));
  MAGPIE_RETURN_IF_ERROR(o.str("category", &category));  // derived from the code
  MAGPIE_RETURN_IF_ERROR(o.str("message", &s->message));
  return o.raw("details", &s->details);
}

status dec_metrics(const report_object& o, run_metrics* m) {
  if (!o.doc().is_object()) return o.fail("", "expected an object");
  for (auto it = o.doc().begin(); it != o.doc().end(); ++it) {
    if (std::none_of(std::begin(k_metric_keys), std::end(k_metric_keys), [&](const char* k) { return it.key() == k; }))
      return o.fail(it.key(), "unknown field");
    if (it.value().is_null()) continue;
    double x = 0;
    if (!report_object::read_num(it.value(), &x)) return o.fail(it.key(), "wrong type");
    (*m)[it.key()] = x;
  }
  return ok_status();
}

status dec_run(const report_object& o, run_record* r) {
  MAGPIE_RETURN_IF_ERROR(o.check({"workspace", "url", "server", "metrics", "fingerprint", "fingerprint_parts"}));
  MAGPIE_RETURN_IF_ERROR(o.str("workspace", &r->workspace));
  MAGPIE_RETURN_IF_ERROR(o.str("url", &r->url));
  MAGPIE_RETURN_IF_ERROR(o.str("server", &r->server));
  if (!o.has("metrics")) return o.fail("metrics", "missing");
  MAGPIE_RETURN_IF_ERROR(dec_metrics(o.child("metrics"), &r->metrics));
  MAGPIE_RETURN_IF_ERROR(o.str("fingerprint", &r->fp.total));
  if (!o.has("fingerprint_parts") || !o.value("fingerprint_parts").is_object()) return o.fail("fingerprint_parts", "expected an object");
  report_object parts = o.child("fingerprint_parts");
  for (auto it = parts.doc().begin(); it != parts.doc().end(); ++it)
    MAGPIE_RETURN_IF_ERROR(parts.str(it.key().c_str(), &r->fp.parts[it.key()]));
  return ok_status();
}

status dec_step(const std::string& name, const report_object& o, step_record* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"status", "seconds", "stop", "error", "resumed"}));
  s->name = name;
  MAGPIE_RETURN_IF_ERROR(read_word(o, "status", k_step_status_names, &s->status));
  MAGPIE_RETURN_IF_ERROR(o.optional("seconds", &s->seconds, &report_object::read_num));
  if (o.has("stop")) {
    stop_reason st;
    MAGPIE_RETURN_IF_ERROR(dec_stop(o.child("stop"), &st));
    s->stop = std::move(st);
  }
  MAGPIE_RETURN_IF_ERROR(o.optional("error", &s->error, &report_object::read_str));
  std::optional<bool> resumed;
  MAGPIE_RETURN_IF_ERROR(o.optional("resumed", &resumed, &report_object::read_bool));
  s->resumed = resumed.value_or(false);
  return ok_status();
}

status dec_command(const report_object& o, command_record* c) {
  MAGPIE_RETURN_IF_ERROR(o.check({"name", "in_process", "argv", "cwd", "env", "rc", "seconds", "stdout", "stderr"}));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &c->name));
  std::optional<bool> in_process;
  MAGPIE_RETURN_IF_ERROR(o.optional("in_process", &in_process, &report_object::read_bool));
  c->in_process = in_process.value_or(false);
  MAGPIE_RETURN_IF_ERROR(o.strs("argv", &c->argv));
  MAGPIE_RETURN_IF_ERROR(o.integer("rc", &c->rc));
  MAGPIE_RETURN_IF_ERROR(o.num("seconds", &c->seconds));
  MAGPIE_RETURN_IF_ERROR(o.optional("stdout", &c->stdout_log, &report_object::read_str));
  if (c->in_process) return ok_status();
  MAGPIE_RETURN_IF_ERROR(o.nullable("cwd", &c->cwd, &report_object::read_str));
  MAGPIE_RETURN_IF_ERROR(o.str("stderr", &c->stderr_log.emplace()));
  if (!c->stdout_log) return o.fail("stdout", "missing");
  if (!o.has("env") || !o.value("env").is_object()) return o.fail("env", "expected an object");
  report_object env = o.child("env");
  for (auto it = env.doc().begin(); it != env.doc().end(); ++it) {
    std::string v;
    MAGPIE_RETURN_IF_ERROR(env.str(it.key().c_str(), &v));
    c->env.emplace_back(it.key(), v);
  }
  return ok_status();
}

status dec_info(const report_object& o, const char* key, server_info* info) {
  if (!o.has(key) || !o.value(key).is_object()) return o.fail(key, "expected an object");
  info->document = o.value(key);
  return ok_status();
}

status dec_server(const report_object& o, server_record* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"tag", "variant", "url", "argv", "log", "ready_s", "info", "exit"}));
  MAGPIE_RETURN_IF_ERROR(o.str("tag", &s->tag));
  MAGPIE_RETURN_IF_ERROR(o.str("variant", &s->variant));
  MAGPIE_RETURN_IF_ERROR(o.str("url", &s->url));
  MAGPIE_RETURN_IF_ERROR(o.strs("argv", &s->argv));
  MAGPIE_RETURN_IF_ERROR(o.str("log", &s->log));
  MAGPIE_RETURN_IF_ERROR(o.num("ready_s", &s->ready_s));
  MAGPIE_RETURN_IF_ERROR(dec_info(o, "info", &s->info));
  return o.nullable("exit", &s->exit, &report_object::read_str);
}

status dec_warmup(const std::string& tag, const report_object& o, warmup_record* w) {
  MAGPIE_RETURN_IF_ERROR(o.check({"workspace", "num_prompts", "duration_s", "output_throughput"}));
  w->tag = tag;
  MAGPIE_RETURN_IF_ERROR(o.str("workspace", &w->workspace));
  MAGPIE_RETURN_IF_ERROR(o.integer("num_prompts", &w->num_prompts));
  MAGPIE_RETURN_IF_ERROR(o.nullable("duration_s", &w->duration_s, &report_object::read_num));
  return o.nullable("output_throughput", &w->output_throughput, &report_object::read_num);
}

status dec_ranked(const report_object& o, ranked_kernel* k) {
  MAGPIE_RETURN_IF_ERROR(o.check({"rank", "name", "calls", "total_us", "avg_us", "pct_total", "kind", "category",
                                  "source_resolution", "source_error", "source_file", "file", "line", "confidence",
                                  "candidates", "registry_symbol", "op", "input_shapes", "disposition", "why"}));
  MAGPIE_RETURN_IF_ERROR(o.integer("rank", &k->rank));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &k->name));
  MAGPIE_RETURN_IF_ERROR(o.integer("calls", &k->calls));
  MAGPIE_RETURN_IF_ERROR(o.num("total_us", &k->total_us));
  MAGPIE_RETURN_IF_ERROR(o.num("avg_us", &k->avg_us));
  MAGPIE_RETURN_IF_ERROR(o.num("pct_total", &k->pct_total));
  for (auto [key, dst] : {std::pair{"kind", &k->kind}, {"category", &k->category}, {"source_resolution", &k->source_resolution},
                          {"source_error", &k->source_error}, {"source_file", &k->source_file}, {"file", &k->file},
                          {"registry_symbol", &k->symbol}, {"op", &k->op}, {"input_shapes", &k->input_shapes}, {"why", &k->why}})
    MAGPIE_RETURN_IF_ERROR(o.str(key, dst));
  MAGPIE_RETURN_IF_ERROR(o.integer("line", &k->line));
  MAGPIE_RETURN_IF_ERROR(o.nullable("confidence", &k->confidence, &report_object::read_num));
  MAGPIE_RETURN_IF_ERROR(o.strs("candidates", &k->candidates));
  std::string w;
  MAGPIE_RETURN_IF_ERROR(o.str("disposition", &w));
  auto d = parse_disposition(w);
  MAGPIE_RETURN_IF_ERROR(read_word_fn(o, "disposition", w, d.has_value(),
                                      {"ours", "external", "ambiguous", "low_confidence", "disagrees"}));
  k->disposition = *d;
  return ok_status();
}

status dec_candidate(const report_object& o, candidate_result* c) {
  MAGPIE_RETURN_IF_ERROR(o.check({"id", "outcome", "correctness_method", "verdict", "speedup", "ci_low", "ci_high", "median_ns",
                                  "samples", "reason", "errors"}));
  MAGPIE_RETURN_IF_ERROR(o.str("id", &c->id));
  std::string w;
  MAGPIE_RETURN_IF_ERROR(o.str("outcome", &w));
  auto oc = parse_kernel_outcome(w);
  MAGPIE_RETURN_IF_ERROR(read_word_fn(o, "outcome", w, oc.has_value(), kernel_outcome_names()));
  c->outcome = *oc;
  MAGPIE_RETURN_IF_ERROR(o.str("correctness_method", &w));
  auto b = parse_correctness_basis(w);
  MAGPIE_RETURN_IF_ERROR(read_word_fn(o, "correctness_method", w, b.has_value(), correctness_basis_names()));
  c->basis = *b;
  MAGPIE_RETURN_IF_ERROR(o.str("verdict", &w));
  if (!w.empty()) {
    c->verdict = parse_verdict_kind(w);
    MAGPIE_RETURN_IF_ERROR(read_word_fn(o, "verdict", w, c->verdict.has_value(), verdict_kind_names()));
  }
  for (auto [key, dst] : {std::pair{"speedup", &c->speedup}, {"ci_low", &c->ci_low}, {"ci_high", &c->ci_high}, {"median_ns", &c->median_ns}})
    MAGPIE_RETURN_IF_ERROR(o.nullable(key, dst, &report_object::read_num));
  MAGPIE_RETURN_IF_ERROR(o.integer("samples", &c->samples));
  MAGPIE_RETURN_IF_ERROR(o.str("reason", &c->reason));
  return o.strs("errors", &c->errors);
}

status dec_gate(const report_object& o, gate_result* g) {
  MAGPIE_RETURN_IF_ERROR(o.check({"baseline_id", "reference", "kernels", "winner", "impl", "speedup", "ci_low", "ci_high",
                                  "baseline_median_ns", "winner_median_ns"}));
  MAGPIE_RETURN_IF_ERROR(o.str("baseline_id", &g->baseline_id));
  std::optional<std::string> ref;
  MAGPIE_RETURN_IF_ERROR(o.nullable("reference", &ref, &report_object::read_str));
  g->reference = ref.value_or("");
  MAGPIE_RETURN_IF_ERROR(read_array<candidate_result>(o, "kernels", &g->kernels, dec_candidate));
  if (!o.has("winner")) return ok_status();
  winner w;
  MAGPIE_RETURN_IF_ERROR(o.str("winner", &w.id));
  MAGPIE_RETURN_IF_ERROR(o.str("impl", &w.impl));
  MAGPIE_RETURN_IF_ERROR(o.num("speedup", &w.speedup));
  MAGPIE_RETURN_IF_ERROR(o.num("ci_low", &w.ci_low));
  MAGPIE_RETURN_IF_ERROR(o.num("ci_high", &w.ci_high));
  MAGPIE_RETURN_IF_ERROR(o.nullable("baseline_median_ns", &w.baseline_median_ns, &report_object::read_num));
  MAGPIE_RETURN_IF_ERROR(o.nullable("winner_median_ns", &w.winner_median_ns, &report_object::read_num));
  g->win = std::move(w);
  return ok_status();
}

status dec_metric_change(const std::string& name, const report_object& o, std::pair<std::string, metric_change>* out) {
  out->first = name;
  metric_change& c = out->second;
  MAGPIE_RETURN_IF_ERROR(o.boolean("tested", &c.tested));
  int64_t nb = 0, na = 0;
  MAGPIE_RETURN_IF_ERROR(o.integer("n_before", &nb));
  MAGPIE_RETURN_IF_ERROR(o.integer("n_after", &na));
  c.n_before = static_cast<size_t>(nb), c.n_after = static_cast<size_t>(na);
  if (!c.tested) return o.check({"tested", "n_before", "n_after"});
  MAGPIE_RETURN_IF_ERROR(o.check({"tested", "before_mean", "before_std", "before_min", "before_max", "before_spread_pct", "after_mean",
                                  "after_std", "after_min", "after_max", "change_pct", "welch_t", "welch_df", "p_value",
                                  "beyond_noise", "better", "mde_pct", "n_before", "n_after"}));
  for (auto [key, dst] : {std::pair{"before_mean", &c.before_mean}, {"before_std", &c.before_std}, {"before_min", &c.before_min},
                          {"before_max", &c.before_max}, {"before_spread_pct", &c.before_spread_pct}, {"after_mean", &c.after_mean},
                          {"after_std", &c.after_std}, {"after_min", &c.after_min}, {"after_max", &c.after_max},
                          {"change_pct", &c.change_pct}, {"welch_t", &c.welch_t}, {"welch_df", &c.welch_df},
                          {"p_value", &c.p_value}, {"mde_pct", &c.mde_pct}})
    MAGPIE_RETURN_IF_ERROR(o.num(key, dst));
  MAGPIE_RETURN_IF_ERROR(o.boolean("beyond_noise", &c.beyond_noise));
  return o.nullable("better", &c.better, &report_object::read_bool);
}

status dec_external(const report_object& o, external_verdict* v) {
  MAGPIE_RETURN_IF_ERROR(o.check({"name", "beyond_noise", "verdict", "change_pct", "basis"}));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &v->name));
  MAGPIE_RETURN_IF_ERROR(o.nullable("beyond_noise", &v->beyond_noise, &report_object::read_bool));
  MAGPIE_RETURN_IF_ERROR(o.str("verdict", &v->verdict));
  MAGPIE_RETURN_IF_ERROR(o.num("change_pct", &v->change_pct));
  return o.str("basis", &v->basis);
}

status dec_e2e(const report_object& o, e2e_record* e) {
  MAGPIE_RETURN_IF_ERROR(o.check({"metrics", "primary_metric", "decision_metrics", "alpha", "results_compare_error",
                                  "magpie_results_compare", "magpie_results_compare_all", "store_hash_warning"}));
  std::vector<std::pair<std::string, metric_change>> ms;
  using named_change = std::pair<std::string, metric_change>;
  MAGPIE_RETURN_IF_ERROR(read_members<named_change>(o, "metrics", &ms, dec_metric_change));
  for (auto& [k, c] : ms) e->metrics[k] = c;
  MAGPIE_RETURN_IF_ERROR(o.str("primary_metric", &e->primary_metric));
  MAGPIE_RETURN_IF_ERROR(o.strs("decision_metrics", &e->decision_metrics));
  MAGPIE_RETURN_IF_ERROR(o.num("alpha", &e->alpha));
  MAGPIE_RETURN_IF_ERROR(o.optional("results_compare_error", &e->results_compare_error, &report_object::read_str));
  MAGPIE_RETURN_IF_ERROR(o.optional("store_hash_warning", &e->store_hash_warning, &report_object::read_str));
  if (e->results_compare_error) return ok_status();
  if (!o.has("magpie_results_compare")) return o.fail("magpie_results_compare", "missing");  // derived from _all
  using named_verdict = std::pair<std::string, external_verdict>;
  std::vector<named_verdict> all;
  MAGPIE_RETURN_IF_ERROR(read_members<named_verdict>(
      o, "magpie_results_compare_all", &all, [](const std::string& k, const report_object& f, named_verdict* v) {
        v->first = k;
        return dec_external(f, &v->second);
      }));
  e->results_compare = std::move(all);
  return ok_status();
}

status dec_summary_kernel(const report_object& o, summary_kernel* k) {
  MAGPIE_RETURN_IF_ERROR(o.check({"name", "calls", "total_us", "category", "bound", "pct_roofline"}));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &k->name));
  for (auto [key, dst] : {std::pair{"calls", &k->calls}, {"total_us", &k->total_us}, {"category", &k->category}, {"bound", &k->bound},
                          {"pct_roofline", &k->pct_roofline}})
    MAGPIE_RETURN_IF_ERROR(o.raw(key, dst));
  return ok_status();
}

status dec_summary_op(const report_object& o, summary_op* p) {
  MAGPIE_RETURN_IF_ERROR(o.check({"name", "category", "kernel_time_us_sum", "bound", "pct_roofline_mean"}));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &p->name));
  for (auto [key, dst] : {std::pair{"category", &p->category}, {"kernel_time_us_sum", &p->kernel_time_us_sum}, {"bound", &p->bound},
                          {"pct_roofline_mean", &p->pct_roofline_mean}})
    MAGPIE_RETURN_IF_ERROR(o.raw(key, dst));
  return ok_status();
}

status dec_summary_stage(const std::string& name, const report_object& o, summary_stage* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"step", "why", "error", "roofline_csv", "top"}));
  s->stage = name;
  MAGPIE_RETURN_IF_ERROR(o.raw("step", &s->step));
  MAGPIE_RETURN_IF_ERROR(o.raw("why", &s->why));
  MAGPIE_RETURN_IF_ERROR(o.raw("error", &s->error));
  MAGPIE_RETURN_IF_ERROR(o.str("roofline_csv", &s->roofline_csv));
  using row = std::vector<std::pair<std::string, std::string>>;
  return read_array<row>(o, "top", &s->top, [](const report_object& r, row* out) {
    if (!r.doc().is_object()) return r.fail("", "expected an object");
    for (auto it = r.doc().begin(); it != r.doc().end(); ++it) {
      std::string v;
      MAGPIE_RETURN_IF_ERROR(r.str(it.key().c_str(), &v));
      out->emplace_back(it.key(), v);
    }
    return ok_status();
  });
}

status dec_summary(const report_object& o, analysis_summary* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"gap_csv", "gpu_spec", "gpu_timeline", "top_kernels", "top_ops", "report_error", "stages",
                                  "stages_errors", "sources_summary", "trace"}));
  MAGPIE_RETURN_IF_ERROR(o.str("gap_csv", &s->gap_csv));
  MAGPIE_RETURN_IF_ERROR(o.raw("gpu_spec", &s->gpu_spec));
  MAGPIE_RETURN_IF_ERROR(o.raw("gpu_timeline", &s->gpu_timeline));
  MAGPIE_RETURN_IF_ERROR(read_array<summary_kernel>(o, "top_kernels", &s->top_kernels, dec_summary_kernel));
  MAGPIE_RETURN_IF_ERROR(read_array<summary_op>(o, "top_ops", &s->top_ops, dec_summary_op));
  if (o.has("report_error")) s->report_error = o.value("report_error");
  MAGPIE_RETURN_IF_ERROR(read_members<summary_stage>(o, "stages", &s->stages, dec_summary_stage));
  MAGPIE_RETURN_IF_ERROR(o.raw("stages_errors", &s->stages_errors));
  if (!s->stages_errors.is_array()) return o.fail("stages_errors", "expected an array");
  MAGPIE_RETURN_IF_ERROR(o.raw("sources_summary", &s->sources_summary));
  return o.optional("trace", &s->trace, &report_object::read_str);
}

status dec_analysis(const report_object& o, analysis_record* a) {
  MAGPIE_RETURN_IF_ERROR(o.check({"trace", "window_pct", "window_widened", "gap_csv", "sources_json", "summary"}));
  MAGPIE_RETURN_IF_ERROR(o.str("trace", &a->trace));
  const json w = o.has("window_pct") ? o.value("window_pct") : json();
  if (!w.is_array() || w.size() != 2 || !w[0].is_number() || !w[1].is_number()) return o.fail("window_pct", "expected [start, end]");
  a->window_lo = w[0].get<double>(), a->window_hi = w[1].get<double>();
  MAGPIE_RETURN_IF_ERROR(o.boolean("window_widened", &a->window_widened));
  MAGPIE_RETURN_IF_ERROR(o.str("gap_csv", &a->gap_csv));
  MAGPIE_RETURN_IF_ERROR(o.str("sources_json", &a->sources_json));
  if (!o.has("summary")) return o.fail("summary", "missing");
  return dec_summary(o.child("summary"), &a->summary);
}

status dec_chosen(const report_object& o, chosen_kernel* c) {
  MAGPIE_RETURN_IF_ERROR(o.check({"kernel", "rank", "op", "source_file", "file", "path", "line", "confidence", "total_us", "pct_total",
                                  "calls", "op_share_pct", "op_share_of_ranked_pct", "skipped_above"}));
  for (auto [key, dst] : {std::pair{"kernel", &c->kernel}, {"op", &c->op}, {"source_file", &c->source_file}, {"file", &c->file},
                          {"path", &c->path}})
    MAGPIE_RETURN_IF_ERROR(o.str(key, dst));
  MAGPIE_RETURN_IF_ERROR(o.integer("rank", &c->rank));
  MAGPIE_RETURN_IF_ERROR(o.integer("line", &c->line));
  MAGPIE_RETURN_IF_ERROR(o.nullable("confidence", &c->confidence, &report_object::read_num));
  for (auto [key, dst] : {std::pair{"total_us", &c->total_us}, {"pct_total", &c->pct_total}, {"op_share_pct", &c->op_share_pct},
                          {"op_share_of_ranked_pct", &c->op_share_of_ranked_pct}})
    MAGPIE_RETURN_IF_ERROR(o.num(key, dst));
  MAGPIE_RETURN_IF_ERROR(o.integer("calls", &c->calls));
  return read_array<skipped_kernel>(o, "skipped_above", &c->skipped_above, [](const report_object& f, skipped_kernel* k) {
    MAGPIE_RETURN_IF_ERROR(f.check({"rank", "name", "why"}));
    MAGPIE_RETURN_IF_ERROR(f.integer("rank", &k->rank));
    MAGPIE_RETURN_IF_ERROR(f.str("name", &k->name));
    return f.str("why", &k->why);
  });
}

status dec_design(const report_object& o, loop_design* d) {
  MAGPIE_RETURN_IF_ERROR(o.check({"order", "servers", "sequence", "pairs", "server_starts", "power_history", "seconds",
                                  "max_series_s", "budget_stop"}));
  MAGPIE_RETURN_IF_ERROR(o.str("order", &d->order));
  MAGPIE_RETURN_IF_ERROR(o.str("servers", &d->servers));
  MAGPIE_RETURN_IF_ERROR(o.strs("sequence", &d->sequence));
  MAGPIE_RETURN_IF_ERROR(o.integer("pairs", &d->pairs));
  MAGPIE_RETURN_IF_ERROR(o.integer("server_starts", &d->server_starts));
  MAGPIE_RETURN_IF_ERROR(read_array<power_step>(o, "power_history", &d->power.history, [](const report_object& f, power_step* p) {
    MAGPIE_RETURN_IF_ERROR(f.check({"pairs", "mde_pct"}));
    MAGPIE_RETURN_IF_ERROR(f.integer("pairs", &p->pairs));
    return f.num("mde_pct", &p->mde_pct);
  }));
  MAGPIE_RETURN_IF_ERROR(o.num("seconds", &d->seconds));
  MAGPIE_RETURN_IF_ERROR(o.num("max_series_s", &d->max_series_s));
  return o.optional("budget_stop", &d->power.budget_stop, &report_object::read_str);
}

using named_value = std::pair<std::string, double>;

status dec_power(const report_object& o, power_statement* p) {
  MAGPIE_RETURN_IF_ERROR(o.check({"alpha", "power", "n_per_side", "target_mde_pct", "mde_pct", "reached"}));
  MAGPIE_RETURN_IF_ERROR(o.num("alpha", &p->alpha));
  MAGPIE_RETURN_IF_ERROR(o.num("power", &p->power));
  MAGPIE_RETURN_IF_ERROR(o.integer("n_per_side", &p->n_per_side));
  MAGPIE_RETURN_IF_ERROR(o.num("target_mde_pct", &p->target_mde_pct));
  if (o.has("mde_pct"))
    MAGPIE_RETURN_IF_ERROR(read_members<named_value>(
        o, "mde_pct", &p->mde_pct, [](const std::string& k, const report_object& f, named_value* v) {
          v->first = k;
          return report_object::read_num(f.doc(), &v->second) ? ok_status() : f.fail("", "wrong type");
        }));
  return o.boolean("reached", &p->reached);
}

status dec_pair(const report_object& o, const char* key, std::pair<double, double>* out) {
  const json w = o.has(key) ? o.value(key) : json();
  if (!w.is_array() || w.size() != 2 || !w[0].is_number() || !w[1].is_number()) return o.fail(key, "expected [low, high]");
  *out = {w[0].get<double>(), w[1].get<double>()};
  return ok_status();
}

status dec_prediction(const report_object& o, loop_prediction* p) {
  MAGPIE_RETURN_IF_ERROR(o.check({"op_share_of_gpu_time_pct", "kernel_speedup", "kernel_speedup_ci", "gpu_time_change_pct",
                                  "gpu_time_change_pct_ci", "throughput_change_pct_if_gpu_bound",
                                  "throughput_change_pct_if_gpu_bound_ci", "formula", "measured_change_pct",
                                  "measured_tpot_change_pct"}));
  kernel_prediction& k = p->predicted;
  std::string formula;
  MAGPIE_RETURN_IF_ERROR(o.num("op_share_of_gpu_time_pct", &k.op_share_pct));
  MAGPIE_RETURN_IF_ERROR(o.num("kernel_speedup", &k.speedup));
  MAGPIE_RETURN_IF_ERROR(dec_pair(o, "kernel_speedup_ci", &k.speedup_ci));
  MAGPIE_RETURN_IF_ERROR(o.num("gpu_time_change_pct", &k.gpu_time_change_pct));
  MAGPIE_RETURN_IF_ERROR(dec_pair(o, "gpu_time_change_pct_ci", &k.gpu_time_change_pct_ci));
  MAGPIE_RETURN_IF_ERROR(o.num("throughput_change_pct_if_gpu_bound", &k.throughput_change_pct));
  MAGPIE_RETURN_IF_ERROR(dec_pair(o, "throughput_change_pct_if_gpu_bound_ci", &k.throughput_change_pct_ci));
  MAGPIE_RETURN_IF_ERROR(o.str("formula", &formula));  // a constant sentence
  MAGPIE_RETURN_IF_ERROR(o.num("measured_change_pct", &p->measured_change_pct));
  return o.num("measured_tpot_change_pct", &p->measured_tpot_change_pct);
}

status dec_switch(const report_object& o, switch_record* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"variant", "control", "servers", "server", "baseline_server", "kernel_spec"}));
  MAGPIE_RETURN_IF_ERROR(o.str("variant", &s->variant));
  MAGPIE_RETURN_IF_ERROR(o.str("control", &s->control));
  MAGPIE_RETURN_IF_ERROR(o.str("servers", &s->servers));
  MAGPIE_RETURN_IF_ERROR(dec_info(o, "server", &s->server));
  if (o.has("baseline_server")) MAGPIE_RETURN_IF_ERROR(dec_info(o, "baseline_server", &s->baseline_server.emplace()));
  if (!o.has("kernel_spec")) return o.fail("kernel_spec", "missing");  // derived from server
  return ok_status();
}

status dec_benchmark(const report_object& o, loop_benchmark* b) {
  if (!o.doc().is_object()) return o.fail("", "expected an object");
  MAGPIE_RETURN_IF_ERROR(o.integer("concurrency", &b->concurrency));
  MAGPIE_RETURN_IF_ERROR(o.num("target_s", &b->target_s));
  MAGPIE_RETURN_IF_ERROR(o.integer("warmup_prompts", &b->warmup_prompts));
  MAGPIE_RETURN_IF_ERROR(o.integer("profile_prompts", &b->profile_prompts));
  b->client = json::object();
  for (auto it = o.doc().begin(); it != o.doc().end(); ++it)
    if (it.key() != "concurrency" && it.key() != "target_s" && it.key() != "warmup_prompts" && it.key() != "profile_prompts")
      b->client[it.key()] = it.value();
  return ok_status();
}

/// Decodes the block `key` of the report when it is there.
}  // namespace magpie::optimize::loop_report_detail
