#include "optimize/decide_printer.h"

namespace magpie::optimize {

namespace {

json opt(const std::optional<double>& v) { return v ? json_finite(*v) : json(nullptr); }

}  // namespace

json stop_reason_json(const stop_reason& s) {
  return {{"code", s.code}, {"category", stop_category(s.code)}, {"message", s.message}, {"details", s.details}};
}

json ranked_kernel_json(const ranked_kernel& k) {
  return {{"rank", k.rank}, {"name", k.name}, {"calls", k.calls}, {"total_us", k.total_us}, {"avg_us", k.avg_us},
          {"pct_total", k.pct_total}, {"kind", k.kind}, {"category", k.category}, {"source_resolution", k.source_resolution},
          {"source_error", k.source_error}, {"source_file", k.source_file}, {"file", k.file}, {"line", k.line},
          {"confidence", opt(k.confidence)}, {"candidates", k.candidates}, {"registry_symbol", k.symbol}, {"op", k.op},
          {"input_shapes", k.input_shapes}, {"disposition", k.disposition}, {"why", k.why}};
}

json candidate_result_json(const candidate_result& c) {
  return {{"id", c.id}, {"outcome", c.outcome}, {"correctness_method", c.basis},
          {"verdict", c.verdict ? json(*c.verdict) : json("")}, {"speedup", opt(c.speedup)}, {"ci_low", opt(c.ci_low)},
          {"ci_high", opt(c.ci_high)}, {"median_ns", opt(c.median_ns)}, {"samples", c.samples}, {"reason", c.reason},
          {"errors", c.errors}};
}

json gate_result_json(const gate_result& g) {
  json ks = json::array();
  for (const auto& k : g.kernels) ks.push_back(candidate_result_json(k));
  json j = {{"baseline_id", g.baseline_id}, {"reference", g.reference.empty() ? json(nullptr) : json(g.reference)}, {"kernels", ks}};
  if (g.win) {
    j["winner"] = g.win->id;
    j["impl"] = g.win->impl;
    j["speedup"] = g.win->speedup;
    j["ci_low"] = g.win->ci_low;
    j["ci_high"] = g.win->ci_high;
    j["baseline_median_ns"] = opt(g.win->baseline_median_ns);
    j["winner_median_ns"] = opt(g.win->winner_median_ns);
  }
  return j;
}

json fingerprint_json(const fingerprint& f) {
  json p = json::object();
  for (const auto& [k, v] : f.parts) p[k] = v;
  return {{"total", f.total}, {"parts", p}};
}

json metric_change_json(const metric_change& c) {
  if (!c.tested) return {{"tested", false}, {"n_before", c.n_before}, {"n_after", c.n_after}};
  return {{"tested", true},
          {"before_mean", c.before_mean}, {"before_std", c.before_std}, {"before_min", c.before_min},
          {"before_max", c.before_max}, {"before_spread_pct", c.before_spread_pct},
          {"after_mean", c.after_mean}, {"after_std", c.after_std}, {"after_min", c.after_min}, {"after_max", c.after_max},
          {"change_pct", c.change_pct}, {"welch_t", c.welch_t}, {"welch_df", c.welch_df}, {"p_value", c.p_value},
          {"beyond_noise", c.beyond_noise}, {"better", c.better ? json(*c.better) : json(nullptr)},
          {"mde_pct", c.mde_pct}, {"n_before", c.n_before}, {"n_after", c.n_after}};
}

json external_verdict_json(const external_verdict& v) {
  return {{"name", v.name}, {"beyond_noise", v.beyond_noise ? json(*v.beyond_noise) : json(nullptr)}, {"verdict", v.verdict},
          {"change_pct", v.change_pct}, {"basis", v.basis}};
}

json kernel_prediction_json(const kernel_prediction& p) {
  auto pair = [](const std::pair<double, double>& v) { return json::array({v.first, v.second}); };
  return {{"op_share_of_gpu_time_pct", p.op_share_pct},
          {"kernel_speedup", p.speedup},
          {"kernel_speedup_ci", pair(p.speedup_ci)},
          {"gpu_time_change_pct", p.gpu_time_change_pct},
          {"gpu_time_change_pct_ci", pair(p.gpu_time_change_pct_ci)},
          {"throughput_change_pct_if_gpu_bound", p.throughput_change_pct},
          {"throughput_change_pct_if_gpu_bound_ci", pair(p.throughput_change_pct_ci)},
          {"formula", "share x (1 - 1/speedup) of GPU time saved; throughput 1/(1 - saved) - 1 when the server is GPU-bound"}};
}

}  // namespace magpie::optimize
