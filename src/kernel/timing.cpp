#include "kernel/timing.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

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

namespace {

constexpr int k_pings = 16;

struct live_session {
  size_t impl = 0;
  std::unique_ptr<timing_session> s;
  stopping_criterion crit;
  bool active = false;
  int fresh_unchecked = 0;  ///< samples given fresh inputs that are not compared
  explicit live_session(const timing_policy& p) : crit(p) {}
};

struct impl_state {
  timing_result result;
  bool failed = false;
};

void fail_impl(impl_state& st, const std::string& why) {
  if (!st.failed) {
    st.failed = true;
    st.result.error = why;
    st.result.stop_reason = "error";
  }
}

// Spawns every process first (they initialise in parallel), then waits for each to be ready
// and warms it up.
std::vector<std::unique_ptr<live_session>> start_all(const measure_request& req, std::vector<impl_state>& st) {
  std::vector<std::unique_ptr<live_session>> live;
  for (size_t k = 0; k < req.kernels.size(); ++k) {
    for (int p = 0; p < req.policy.processes; ++p) {
      auto ls = std::make_unique<live_session>(req.policy);
      ls->impl = k;
      auto s = timing_session::spawn(*req.kernels[k], req.policy, req.seed, req.init_seed, req.cupti, req.first_process + p);
      if (!s.ok()) fail_impl(st[k], s.get_status().message());
      else ls->s = std::move(s).value();
      live.push_back(std::move(ls));
    }
  }
  for (auto& ls : live) {
    if (!ls->s || st[ls->impl].failed) continue;
    status r = ls->s->await_ready();
    if (r.ok()) r = ls->s->ping(k_pings);
    if (r.ok()) r = ls->s->warmup(req.policy.warmup);
    if (!r.ok()) fail_impl(st[ls->impl], r.message());
    else ls->active = true;
  }
  for (auto& ls : live)
    if (st[ls->impl].failed) ls->active = false;
  return live;
}

// One sample of one process. Every sample is the same `sample <id>` command, after which the
// harness copies its outputs into the exchange memory; some samples get fresh inputs first
// (`inputs <seed>`): every checked one (a secret seed the reference ran) and, at random, about
// as many others (a secret seed nobody ran), so the harness cannot tell which are checked. Only
// after the reply does the supervisor decide to read a checked sample's outputs itself (the
// harness's processes stopped) and compare them completely. A fresh sample's whole time
// (inputs, re-poisoning, the read) goes to `overhead_s`, not the budget: on an H200 a checked
// 16M-element sample took ~25 ms against ~1 ms unchecked. Returns false when the process failed.
bool one_sample(live_session& ls, impl_state& st, const measure_request& req, uint64_t id, int round,
                const uint64_t* check_seed, splitmix64& rng, double* overhead_s) {
  timing_session& s = *ls.s;
  status r = ok_status();
  const double t_in = monotonic_seconds();
  // Unchecked fresh samples cost an input generation each (100+ ms for large inputs): at most
  // checked_samples of them per process, at random rounds, as many as the checked ones.
  bool fresh = check_seed != nullptr;
  if (!fresh && ls.fresh_unchecked < req.policy.checked_samples && rng.below(8) == 0) {
    fresh = true;
    ++ls.fresh_unchecked;
  }
  const uint64_t seed = check_seed ? *check_seed : rng.next();
  if (fresh) {
    double bracket = 0, cpu = 0;
    r = s.inputs(seed, &bracket, &cpu);
    if (r.ok()) {
      st.result.inputs_bracket_ns.push_back(bracket);
      st.result.inputs_cpu_ns.push_back(cpu);
    }
  }
  if (r.ok() && req.policy.cold) r = s.flush();
  status_or<sample_record> smp = r.ok() ? s.sample(id, round, check_seed != nullptr, fresh) : status_or<sample_record>(r);
  if (!smp.ok()) {
    fail_impl(st, smp.get_status().message());
    return false;
  }
  if (check_seed) {
    auto got = s.read_outputs();
    if (!got.ok()) {
      fail_impl(st, got.get_status().with_context(s.spec().id + ": reading the outputs of a checked sample").message());
      return false;
    }
    check_outcome c = judge_outputs(req.reference, *check_seed, s.exchange().outputs(), *got, req.tolerances);
    c.sample_id = id;
    c.process = s.process();
    st.result.checks.push_back(c);
  }
  if (fresh) *overhead_s += monotonic_seconds() - t_in;
  double v = s.cupti_active() ? (smp->has_gpu ? smp->gpu_ns : smp->harness_ns) : smp->harness_ns;
  ls.crit.add(v);
  return true;
}

std::vector<int> checked_rounds(const measure_request& req, splitmix64& rng) {
  std::vector<int> rounds;
  const int middle = std::max(req.policy.checked_samples - 2, 0);
  const int span = std::max(2 * req.policy.min_samples, middle + 1);
  while (static_cast<int>(rounds.size()) < middle) {
    int r = 1 + static_cast<int>(rng.below(static_cast<uint64_t>(span)));
    if (std::find(rounds.begin(), rounds.end(), r) == rounds.end()) rounds.push_back(r);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds;
}

std::string stop_or(const stopping_criterion& c) {
  std::string why;
  return c.finished(&why) ? why : "";
}


// GPU work launched between the previous sample's window and a fresh sample's window: the
// harness's own (flush, output copies, input uploads) plus whatever a kernel launched while its
// inputs were generated. Kernels and GPU time (every operation), mean per fresh sample.
void work_before_fresh(const timing_session& s, double* kernels, double* gpu_ns) {
  const auto& w = s.cupti().windows();
  double count = 0, ns = 0;
  int n = 0;
  uint64_t prev_end = 0;
  for (const auto& r : s.samples()) {
    auto it = w.find(r.id);
    if (it == w.end()) continue;
    if (r.fresh && prev_end) {
      for (const auto& o : s.cupti().ops())
        if (o.sample == -1 && o.launch_ts > prev_end && o.launch_ts < it->second.begin_ts) {
          count += o.op == "kernel";
          ns += static_cast<double>(o.end > o.start ? o.end - o.start : 0);
        }
      ++n;
    }
    prev_end = it->second.end_ts;
  }
  *kernels = n ? count / n : 0;
  *gpu_ns = n ? ns / n : 0;
}

process_result finalize_process(timing_session& s, timing_result& r, const timing_policy& p) {
  process_result pr;
  pr.index = s.process();
  std::vector<double> harness, excess, observed, unclaimed;
  for (const auto& smp : s.samples()) {
    double v = s.cupti_active() ? smp.gpu_ns : smp.harness_ns;
    harness.push_back(smp.harness_ns);
    double ex = std::max(0.0, smp.bracket_ns - median(s.rtt_ns()));
    excess.push_back(ex / p.batch);
    // Scheduling delays inflate the wall-clock bracket but not the CPU time; several threads
    // inflate the CPU time but not the bracket: the smaller one bounds the work from above.
    observed.push_back((std::isnan(smp.cpu_ns) ? ex : std::min(ex, smp.cpu_ns)) / p.batch);
    // The harness cannot have spent longer than passed between our send and its reply.
    if (smp.harness_ns * p.batch > smp.bracket_ns * 1.05 + 20000) ++pr.harness_over_bracket;
    r.gap_cpu_ns += smp.gap_cpu_ns;
    ++r.gap_samples;
    if (std::isnan(v)) continue;
    // Not minus the ping round trip: measured once, at start-up, it can be inflated by the
    // other processes' start (under load, a 1 ms round trip made one process's overhead
    // negative); the round trip is part of every implementation's overhead anyway.
    unclaimed.push_back(smp.bracket_ns / p.batch - v);
    pr.samples_ns.push_back(v);
    (smp.fresh ? r.fresh_ns : r.reused_ns).push_back(v);
  }
  pr.median_ns = pr.samples_ns.empty() ? 0 : median(pr.samples_ns);
  pr.rtt_median_ns = s.rtt_ns().empty() ? 0 : median(s.rtt_ns());
  pr.bracket_excess_ns = excess.empty() ? 0 : median(excess);
  pr.observed_ns = observed.empty() ? 0 : median(observed);
  pr.unclaimed_ns = unclaimed.empty() ? 0 : median(unclaimed);
  pr.harness_median_ns = harness.empty() ? 0 : median(harness);
  pr.findings = s.findings();
  r.gpu_ops_under_host_timer += s.gpu_ops_under_host_timer();
  if (s.cupti_active()) {
    const cupti_log& log = s.cupti();
    double ns = 0;
    r.stray_ops += log.stray_ops(s.first_sample_ts(), s.harness_tid(), &ns);
    r.stray_gpu_ns += ns;
    for (const auto& o : log.ops()) r.unmatched_ops += o.sample == -2 && o.start >= s.first_sample_ts();
    r.cupti_bad_macs += log.bad_macs();
    r.cupti_sequence_errors += log.sequence_errors();
    r.cupti_records += log.records();
    r.cupti_hello = r.cupti_hello && log.hello();
    double kernels = 0, gpu_ns = 0;
    work_before_fresh(s, &kernels, &gpu_ns);
    r.kernels_per_checked_gap = std::max(r.kernels_per_checked_gap, kernels);
    r.gpu_ns_per_fresh_gap = std::max(r.gpu_ns_per_fresh_gap, gpu_ns);
    if (log.dropped()) r.warnings.push_back(strprintf("CUPTI dropped %llu records", static_cast<unsigned long long>(log.dropped())));
  }
  return pr;
}

std::vector<timing_result> finalize_all(std::vector<std::unique_ptr<live_session>>& live, std::vector<impl_state>& st,
                                        const measure_request& req, double wall) {
  std::vector<std::vector<double>> harness(st.size());
  for (auto& ls : live) {
    if (!ls->s) continue;
    timing_result& r = st[ls->impl].result;
    run_result rr = ls->s->finish();
    if (!rr.success() && !st[ls->impl].failed)
      r.warnings.push_back(strprintf("process %d did not exit cleanly after 'stop': %s %s", ls->s->process(),
                                     rr.describe().c_str(), rr.output_tail(300).c_str()));
    if (r.ready.is_null()) {
      r.ready = ls->s->ready();
      r.source = ls->s->cupti_active() ? "cupti" : json_string(r.ready, "timer", "harness");
      if (ls->s->cupti_active()) r.cupti_kernels = ls->s->cupti().summary(true, true);
    }
    for (const auto& w : ls->s->warnings()) r.warnings.push_back("harness: " + w);
    process_result pr = finalize_process(*ls->s, r, req.policy);
    for (const auto& smp : ls->s->samples()) harness[ls->impl].push_back(smp.harness_ns);
    r.samples_ns.insert(r.samples_ns.end(), pr.samples_ns.begin(), pr.samples_ns.end());
    r.processes.push_back(std::move(pr));
  }
  std::vector<timing_result> out;
  for (size_t k = 0; k < st.size(); ++k) {
    timing_result& r = st[k].result;
    r.wall_s = wall;
    r.stats = summarize(r.samples_ns);
    r.harness_stats = summarize(harness[k]);
    r.harness_samples_ns = harness[k];
    r.ok = !st[k].failed && !r.samples_ns.empty();
    if (!st[k].failed && r.samples_ns.empty()) r.error = "no sample was timed";
    if (r.ok && static_cast<int>(r.stats.n) < req.policy.min_samples * req.policy.processes)
      r.warnings.push_back(strprintf("only %zu samples (min_samples %d per process) before the budget ended", r.stats.n,
                                     req.policy.min_samples));
    std::sort(r.warnings.begin(), r.warnings.end());
    r.warnings.erase(std::unique(r.warnings.begin(), r.warnings.end()), r.warnings.end());
    MAGPIE_LOG_INFO("[%s] timing: %zu samples in %zu processes, median %s (%s), stop: %s", req.kernels[k]->spec.id.c_str(),
                    r.samples_ns.size(), r.processes.size(), format_duration_ns(r.stats.median).c_str(), r.source.c_str(),
                    r.stop_reason.c_str());
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

measure_outcome measure_interleaved(const measure_request& req) {
  std::vector<impl_state> st(req.kernels.size());
  auto live = start_all(req, st);
  splitmix64 rng(req.order_seed);
  std::vector<int> middle = checked_rounds(req, rng);
  const auto& seeds = req.check_seeds;
  measure_outcome out;
  out.order = {{"policy", "seeded shuffle of every process each round"}, {"processes_per_kernel", req.policy.processes},
               {"seed", req.order_seed}, {"checked_rounds", middle}, {"first_rounds", json::array()}};
  std::optional<progress_bar> bar;
  if (req.progress) bar.emplace("timing", static_cast<uint64_t>(req.policy.max_time_s * 10));
  double t0 = monotonic_seconds(), overhead_s = 0;  // input generation and probes do not use the budget
  uint64_t next_id = req.first_sample_id;
  int round = 0;
  bool closing = false;
  for (;;) {
    std::vector<size_t> order;
    for (size_t i = 0; i < live.size(); ++i)
      if (live[i]->active) order.push_back(i);
    if (order.empty()) break;
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    if (round < 3) {
      json names = json::array();
      for (size_t i : order) names.push_back(strprintf("%s#%d", live[i]->s->spec().id.c_str(), live[i]->s->process()));
      out.order["first_rounds"].push_back(names);
    }
    const uint64_t* check = nullptr;
    if (!seeds.empty()) {
      auto it = std::find(middle.begin(), middle.end(), round);
      if (round == 0) check = &seeds.front();
      else if (closing) check = &seeds.back();
      else if (it != middle.end() && static_cast<size_t>(it - middle.begin()) + 1 < seeds.size() - 1)
        check = &seeds[static_cast<size_t>(it - middle.begin()) + 1];
    }
    bool all_done = true;
    for (size_t i : order) {
      live_session& ls = *live[i];
      if (!ls.active) continue;
      if (!one_sample(ls, st[ls.impl], req, next_id++, round, check, rng, &overhead_s)) {
        for (auto& other : live)
          if (other->impl == ls.impl) other->active = false;
        continue;
      }
      if (stop_or(ls.crit).empty()) all_done = false;
    }
    double wall = monotonic_seconds() - t0 - overhead_s;
    if (bar) bar->set(static_cast<uint64_t>(wall * 10));
    ++round;
    if (closing) break;
    if (all_done || wall >= req.policy.max_time_s) {
      for (auto& ls : live)
        if (ls->active && st[ls->impl].result.stop_reason.empty())
          st[ls->impl].result.stop_reason = all_done ? stop_or(ls->crit) : "time_budget";
      closing = !seeds.empty();  // one closing round of checked samples
      if (!closing) break;
    }
  }
  if (bar) bar->finish();
  double wall = monotonic_seconds() - t0;
  out.results = finalize_all(live, st, req, wall);
  return out;
}

}  // namespace magpie::kernel
