#include "kernel/stage_printer.h"

namespace magpie::kernel {

json tensor_diff_json(const tensor_diff& d) {
  json j = {{"name", d.name}, {"dtype", d.dtype}, {"shape", d.shape}, {"numel", d.numel}, {"mismatches", d.mismatches},
            {"nan_pattern_mismatches", d.nan_mismatch}, {"max_abs_err", d.max_abs}, {"mean_abs_err", d.mean_abs},
            {"max_rel_err", d.max_rel}, {"mean_rel_err", d.mean_rel}, {"atol", d.atol}, {"rtol", d.rtol}};
  if (d.first_bad >= 0) j["first_mismatch"] = {{"index", d.first_bad}, {"reference", json_finite(d.first_ref)}, {"candidate", json_finite(d.first_got)}};
  return j;
}

json trial_verdict_json(const trial_verdict& t) {
  json o = json::array();
  for (const auto& d : t.outputs) o.push_back(tensor_diff_json(d));
  return {{"index", t.index}, {"seed", t.seed}, {"size", t.size}, {"passed", t.passed}, {"failures", t.failures}, {"outputs", o}};
}

json correctness_verdict_json(const correctness_verdict& v) {
  json t = json::array();
  for (const auto& x : v.trials) t.push_back(trial_verdict_json(x));
  return {{"passed", v.passed}, {"max_abs_err", v.max_abs}, {"max_rel_err", v.max_rel}, {"mean_abs_err", v.mean_abs},
          {"mean_rel_err", v.mean_rel}, {"trials", t}};
}

json stage_result_json(const stage_result& s) {
  if (s.state == stage_state::skipped && s.detail.empty() && s.errors.empty()) return nullptr;
  json j = {{"success", s.state == stage_state::success}, {"errors", s.errors.empty() ? json(nullptr) : json(s.errors)}};
  for (auto it = s.detail.begin(); it != s.detail.end(); ++it) j[it.key()] = it.value();
  return j;
}

json worker_plan_json(const worker_plan& w) {
  json devices = json::array();
  for (int i = 0; i < w.workers && static_cast<size_t>(i) < w.pool.ids.size(); ++i) devices.push_back(w.pool.ids[static_cast<size_t>(i)]);
  return {{"requested", w.requested},
          {"workers", w.workers},
          {"devices", devices},
          {"variable", w.pool.ids.empty() ? json(nullptr) : json(w.pool.variable)},
          {"source", w.pool.source.empty() ? json(nullptr) : json(w.pool.source)},
          {"notes", w.pool.notes},
          {"reason", w.reason.empty() ? json(nullptr) : json(w.reason)},
          {"policy", "correctness processes in parallel, one worker per GPU; timing processes split into one group "
                     "per GPU identically for every implementation, so speedups compare processes on the same GPU"}};
}

}  // namespace magpie::kernel
