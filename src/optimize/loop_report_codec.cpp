// Decodes the loop's document (loop_report.json) into optimize::loop_report. Values are read as
// the report printers always read them (a missing or mistyped number prints "-"); state words
// (outcome, verdict, disposition) must be known ones.
#include "core/enum_names.h"
#include "core/strings.h"
#include "optimize/loop_report_codec.h"

namespace magpie::optimize {

namespace {

constexpr std::pair<loop_result, const char*> k_loop_result_names[] = {{loop_result::improved, "improved"},
                                                                         {loop_result::stopped, "stopped"},
                                                                         {loop_result::failed, "failed"},
                                                                         {loop_result::paused, "paused"}};

/// The object under `key`; an empty object when absent or not an object.
const json& obj(const json& r, const char* key) {
  static const json empty = json::object();
  return r.is_object() && r.contains(key) && r[key].is_object() ? r[key] : empty;
}

std::optional<double> num(const json& o, const char* key) { return json_as_number(json_value(o, key)); }

status unknown_word(const std::string& where, const std::string& field, const std::string& word,
                    const std::vector<std::string>& known) {
  return error(status_code::parse_error, "%s: field '%s': unknown word '%s' (expected one of: %s)", where.c_str(), field.c_str(), word.c_str(),
                          join(known, ", ").c_str());
}

std::vector<loop_run_row> runs(const json& doc, const char* key) {
  std::vector<loop_run_row> out;
  const json v = json_value(doc, key);
  if (!v.is_array()) return out;
  for (const auto& r : v) {
    const json& m = obj(r, "metrics");
    out.push_back({json_string(r, "server"), json_string(r, "workspace"), num(m, "output_throughput"), num(m, "tpot_mean_ms")});
  }
  return out;
}

status decode_gate(const json& k, const std::string& where, gate_result* g) {
  g->baseline_id = json_string(k, "baseline_id");
  g->reference = json_string(k, "reference");
  const json ks = json_value(k, "kernels");
  for (size_t i = 0; ks.is_array() && i < ks.size(); ++i) {
    const json& c = ks[i];
    candidate_result r;
    r.id = json_string(c, "id");
    const std::string field = strprintf("kernel.kernels[%zu]", i);
    if (std::string w = json_string(c, "outcome"); !w.empty()) {
      auto o = parse_kernel_outcome(w);
      if (!o) return unknown_word(where, field + ".outcome", w, {"passed", "incorrect", "failed", "timeout", "skipped"});
      r.outcome = *o;
    }
    if (std::string w = json_string(c, "verdict"); !w.empty()) {
      r.verdict = parse_verdict_kind(w);
      if (!r.verdict)
        return unknown_word(where, field + ".verdict", w,
                            {"baseline", "faster", "slower", "same", "ambiguous", "not_ranked", "implausible"});
    }
    r.speedup = num(c, "speedup");
    r.ci_low = num(c, "ci_low");
    r.ci_high = num(c, "ci_high");
    r.median_ns = num(c, "median_ns");
    r.reason = json_string(c, "reason");
    g->kernels.push_back(std::move(r));
  }
  if (k.contains("winner")) {
    winner w;
    w.id = json_string(k, "winner");
    w.impl = json_string(k, "impl");
    w.speedup = json_number(k, "speedup", 0);
    w.ci_low = json_number(k, "ci_low", 0);
    w.ci_high = json_number(k, "ci_high", 0);
    g->win = w;
  }
  return ok_status();
}

metric_change decode_metric(const json& m) {
  metric_change c;
  c.tested = json_bool(m, "tested", false);
  c.before_mean = json_number(m, "before_mean", 0);
  c.before_std = json_number(m, "before_std", 0);
  c.before_min = json_number(m, "before_min", 0);
  c.before_max = json_number(m, "before_max", 0);
  c.after_mean = json_number(m, "after_mean", 0);
  c.after_std = json_number(m, "after_std", 0);
  c.after_min = json_number(m, "after_min", 0);
  c.after_max = json_number(m, "after_max", 0);
  c.change_pct = json_number(m, "change_pct", 0);
  c.p_value = json_number(m, "p_value", 1);
  c.beyond_noise = json_bool(m, "beyond_noise", false);
  c.mde_pct = json_number(m, "mde_pct", 0);
  return c;
}

status decode_ranking(const json& doc, const std::string& where, std::vector<ranked_kernel>* out) {
  const json v = json_value(doc, "ranking");
  for (size_t i = 0; v.is_array() && i < v.size(); ++i) {
    const json& r = v[i];
    ranked_kernel k;
    k.rank = static_cast<int>(json_number(r, "rank", 0));
    k.name = json_string(r, "name");
    k.calls = static_cast<int64_t>(json_number(r, "calls", 0));
    k.total_us = json_number(r, "total_us", 0);
    k.pct_total = json_number(r, "pct_total", 0);
    std::string w = json_string(r, "disposition");
    auto d = parse_disposition(w);
    if (!d)
      return unknown_word(where, strprintf("ranking[%zu].disposition", i), w,
                          {"ours", "external", "ambiguous", "low_confidence", "disagrees"});
    k.disposition = *d;
    k.why = json_string(r, "why");
    out->push_back(std::move(k));
  }
  return ok_status();
}

}  // namespace

const char* loop_result_name(loop_result r) { return enum_name(k_loop_result_names, r, "failed"); }
std::optional<loop_result> parse_loop_result(std::string_view word) { return enum_parse(k_loop_result_names, word); }

status_or<loop_report> decode_loop_report(const json& doc, const std::string& where) {
  loop_report r;
  if (std::string w = json_string(doc, "outcome"); !w.empty()) {
    r.outcome = parse_loop_result(w);
    if (!r.outcome) return unknown_word(where, "outcome", w, enum_words(k_loop_result_names));
  }
  if (doc.contains("control_result")) r.control_result = json_string(doc, "control_result");
  r.num_prompts = num(doc, "num_prompts");
  r.concurrency = num(obj(doc, "benchmark"), "concurrency");
  const json& warm = obj(doc, "warmups");
  for (auto it = warm.begin(); it != warm.end(); ++it)
    r.warmups.push_back({it.key(), num(it.value(), "num_prompts"), num(it.value(), "duration_s")});
  if (const json& d = obj(doc, "design"); !d.empty()) {
    loop_design ds;
    ds.order = json_string(d, "order");
    ds.servers = json_string(d, "servers");
    ds.pairs = num(d, "pairs");
    ds.server_starts = num(d, "server_starts");
    ds.sequence = json_strings(d, "sequence");
    if (d.contains("budget_stop")) ds.budget_stop = json_string(d, "budget_stop");
    r.design = std::move(ds);
  }
  r.initial_runs = runs(doc, "initial_runs");
  r.after_runs = runs(doc, "after_runs");
  if (doc.contains("baseline_runs")) r.baseline_runs = runs(doc, "baseline_runs");
  MAGPIE_RETURN_IF_ERROR(decode_ranking(doc, where, &r.ranking));
  if (const json& ch = obj(doc, "chosen"); !ch.empty())
    r.chosen = loop_chosen{json_string(ch, "kernel"), json_string(ch, "op"), json_string(ch, "file"),
                           num(ch, "rank"), num(ch, "pct_total"), num(ch, "line"), num(ch, "confidence")};
  if (const json& k = obj(doc, "kernel"); !k.empty()) {
    gate_result g;
    MAGPIE_RETURN_IF_ERROR(decode_gate(k, where, &g));
    r.kernel = std::move(g);
  }
  const json& metrics = obj(obj(doc, "e2e"), "metrics");
  for (auto it = metrics.begin(); it != metrics.end(); ++it) r.e2e[it.key()] = decode_metric(it.value());
  if (const json& p = obj(doc, "prediction"); !p.empty())
    r.prediction = loop_prediction{num(p, "op_share_of_gpu_time_pct"), json_number(p, "kernel_speedup", 0),
                                   json_number(p, "gpu_time_change_pct", 0),
                                   json_number(p, "throughput_change_pct_if_gpu_bound", 0),
                                   json_number(p, "measured_change_pct", 0)};
  if (const json& s = obj(doc, "stop"); !s.empty()) r.stop = stop_reason{json_string(s, "code"), json_string(s, "message"), json::object()};
  r.error = json_string(doc, "error");
  const json& steps = obj(doc, "steps");
  for (auto it = steps.begin(); it != steps.end(); ++it)
    r.steps.push_back({it.key(), json_string(it.value(), "status"), json_bool(it.value(), "resumed", false),
                       num(it.value(), "seconds")});
  return r;
}

}  // namespace magpie::optimize
