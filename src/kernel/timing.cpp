#include "kernel/timing.h"

#include <cmath>
#include <memory>

#include "core/log.h"
#include "core/progress.h"
#include "core/strings.h"

namespace magpie::kernel {

void stopping_criterion::add(double ns) {
  ++m_n;
  m_sum += ns;
  m_sum_sq += ns * ns;
  m_total_s += ns * 1e-9;
  double mean = m_sum / static_cast<double>(m_n);
  if (m_n >= 2 && mean > 0) {
    double var = (m_sum_sq - m_sum * mean) / static_cast<double>(m_n - 1);
    double rel = std::sqrt(std::max(var, 0.0)) / mean;
    if (std::isfinite(rel)) {
      m_noise.push_back(rel);
      if (m_noise.size() > 64) m_noise.pop_front();
    }
  }
}

bool stopping_criterion::finished(std::string* reason) const {
  if (static_cast<int64_t>(m_n) >= m_p.max_samples) {
    *reason = "max_samples";
    return true;
  }
  if (static_cast<int>(m_n) < m_p.min_samples || m_total_s < m_p.min_time_s || m_noise.empty()) return false;
  if (m_noise.back() < m_p.max_noise) {
    *reason = "noise_target_met";
    return true;
  }
  if (m_noise.size() >= 64 && m_n % 16 == 0) {
    double cur = m_noise.back(), acc = 0;
    for (double x : m_noise) acc += (x - cur) * (x - cur);
    double rel = std::sqrt(acc / static_cast<double>(m_noise.size() - 1)) / cur;
    if (rel < 0.05) {
      *reason = "noise_converged";
      return true;
    }
  }
  return false;
}

json timing_result::to_json(const timing_policy& p) const {
  json j;
  j["success"] = ok;
  j["error"] = error.empty() ? json(nullptr) : json(error);
  j["policy"] = p.to_json();
  j["source"] = source;
  j["stop_reason"] = stop_reason;
  j["samples"] = samples_ns.size();
  j["wall_seconds"] = wall_s;
  j["stats_ns"] = summary_to_json(stats);
  j["harness_stats_ns"] = summary_to_json(harness_stats);
  if (source == "cupti" && harness_stats.median > 0 && stats.median > 0)
    j["cross_check"] = {{"harness_median_ns", harness_stats.median}, {"cupti_median_ns", stats.median},
                        {"harness_over_cupti", harness_stats.median / stats.median}};
  j["harness"] = ready;
  j["cupti_kernels"] = cupti_kernels.is_null() ? json::array() : cupti_kernels;
  j["warnings"] = warnings;
  return j;
}

namespace {

struct live_session {
  const prepared_kernel* k = nullptr;
  std::unique_ptr<timing_session> s;
  stopping_criterion crit;
  timing_result result;
  bool active = false;
  double first_sample_t = 0;
  explicit live_session(const timing_policy& p) : crit(p) {}
};

void finalize(live_session& ls, const timing_policy& p) {
  timing_result& r = ls.result;
  if (!ls.s) return;
  run_result rr = ls.s->finish();
  if (!rr.success() && r.error.empty())
    r.warnings.push_back("the harness did not exit cleanly after 'stop': " + rr.describe() + " " + rr.output_tail(300));
  r.ready = ls.s->ready();
  for (const auto& w : ls.s->warnings()) r.warnings.push_back("harness: " + w);
  std::vector<double> harness, cupti;
  for (const auto& smp : ls.s->samples()) {
    harness.push_back(smp.harness_ns);
    if (!std::isnan(smp.cupti_span_ns)) cupti.push_back(smp.cupti_span_ns);
  }
  r.harness_stats = summarize(harness);
  std::string timer = json_string(r.ready, "timer", "harness");
  if (ls.s->cupti_active()) {
    r.cupti_kernels = ls.s->cupti().summary(true, true);
    if (ls.s->cupti().dropped()) r.warnings.push_back(strprintf("CUPTI dropped %llu records",
                                                              static_cast<unsigned long long>(ls.s->cupti().dropped())));
  }
  if (!harness.empty() && cupti.size() * 10 >= harness.size() * 9) {
    r.source = "cupti";
    r.samples_ns = cupti;
  } else {
    if (ls.s->cupti_active())
      r.warnings.push_back(strprintf("CUPTI timed %zu of %zu samples; using the harness timer (%s)", cupti.size(),
                                     harness.size(), timer.c_str()));
    r.source = timer;
    r.samples_ns = harness;
  }
  r.stats = summarize(r.samples_ns);
  r.ok = r.error.empty() && !r.samples_ns.empty();
  if (r.ok && static_cast<int>(r.samples_ns.size()) < p.min_samples)
    r.warnings.push_back(strprintf("only %zu samples (min_samples %d) before the budget ended", r.samples_ns.size(), p.min_samples));
}

}  // namespace

std::vector<timing_result> measure_interleaved(const std::vector<const prepared_kernel*>& kernels,
                                               const timing_policy& p, uint64_t seed, const cupti_setup& cupti,
                                               const fs::path& work_dir) {
  std::vector<std::unique_ptr<live_session>> live;
  for (const auto* k : kernels) {
    auto ls = std::make_unique<live_session>(p);
    ls->k = k;
    auto s = timing_session::start(*k, p, seed, cupti, work_dir / k->spec.id);
    if (!s.ok()) {
      ls->result.error = s.get_status().message();
      ls->result.stop_reason = "error";
    } else {
      ls->s = std::move(s).value();
      if (auto st = ls->s->warmup(p.warmup); !st.ok()) {
        ls->result.error = st.message();
        ls->result.stop_reason = "error";
      } else {
        ls->active = true;
      }
    }
    live.push_back(std::move(ls));
  }
  progress_bar bar("timing", static_cast<uint64_t>(p.max_time_s * 10));
  double t0 = monotonic_seconds();
  uint64_t next_id = 1;
  for (;;) {
    bool any = false, all_done = true;
    for (auto& ls : live) {
      if (!ls->active) continue;
      any = true;
      auto smp = ls->s->sample(next_id++);
      if (!smp.ok()) {
        ls->result.error = smp.get_status().message();
        ls->result.stop_reason = "error";
        ls->active = false;
        continue;
      }
      double v = std::isnan(smp->cupti_span_ns) ? smp->harness_ns : smp->cupti_span_ns;
      ls->crit.add(v);
      std::string why;
      if (!ls->crit.finished(&why)) all_done = false;
      else ls->result.stop_reason = why;
    }
    double wall = monotonic_seconds() - t0;
    bar.set(static_cast<uint64_t>(wall * 10));
    if (!any) break;
    if (all_done) break;  // every active session met its criterion: stop together
    if (wall >= p.max_time_s) {
      for (auto& ls : live)
        if (ls->active) ls->result.stop_reason = "time_budget";
      break;
    }
  }
  bar.finish();
  double wall = monotonic_seconds() - t0;
  std::vector<timing_result> out;
  for (auto& ls : live) {
    ls->result.wall_s = wall;
    finalize(*ls, p);
    MAGPIE_LOG_INFO("[%s] timing: %zu samples, median %s (%s), stop: %s", ls->k->spec.id.c_str(),
                    ls->result.samples_ns.size(), format_duration_ns(ls->result.stats.median).c_str(),
                    ls->result.source.c_str(), ls->result.stop_reason.c_str());
    out.push_back(std::move(ls->result));
  }
  return out;
}

}  // namespace magpie::kernel
