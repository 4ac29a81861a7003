#include "kernel/timing.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "core/log.h"
#include "core/progress.h"
#include "core/strings.h"
#include "kernel/verdict.h"

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
  int batch = 1;
  bool active = false;
  int fresh_unchecked = 0;  ///< samples given fresh inputs that are not compared
  bool retired = false;     ///< a pilot process stopped for a new batch: its samples do not count
  int from_round = 0;       ///< its samples of record start at this round (the plan's first, when it added processes)
  explicit live_session(const timing_policy& p) : crit(p), batch(p.batch) {}
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

// Spawns `count` processes per implementation, numbered from `first`, in interleaved order
// (A#0 B#0 C#0 A#1 ...: no implementation gets all the early or all the late placements), all
// before waiting for any (they initialise in parallel); then waits for each and warms it up.
void start_processes(const measure_request& req, const timing_policy& policy, int first, int count,
                     std::vector<impl_state>& st, std::vector<std::unique_ptr<live_session>>& live) {
  const size_t from = live.size();
  for (int p = 0; p < count; ++p) {
    for (size_t k = 0; k < req.kernels.size(); ++k) {
      if (st[k].failed) continue;
      auto ls = std::make_unique<live_session>(policy);
      ls->impl = k;
      auto s = timing_session::spawn(*req.kernels[k], policy, req.seed, req.init_seed, req.cupti, req.first_process + first + p);
      if (!s.ok()) fail_impl(st[k], s.get_status().message());
      else ls->s = std::move(s).value();
      live.push_back(std::move(ls));
    }
  }
  for (size_t i = from; i < live.size(); ++i) {
    auto& ls = live[i];
    if (!ls->s || st[ls->impl].failed) continue;
    status r = ls->s->await_ready();
    if (r.ok()) r = ls->s->ping(k_pings);
    if (r.ok()) r = ls->s->warmup(req.policy.warmup);
    if (!r.ok()) fail_impl(st[ls->impl], r.message());
    else ls->active = true;
  }
  for (auto& ls : live)
    if (st[ls->impl].failed) ls->active = false;
}

// A fresh sample's partner: a plain sample on the current inputs, issued before the `inputs`
// are sent. Not a sample of record (every process keeps one per round); its time is overhead.
bool partner_sample(timing_session& s, impl_state& st, uint64_t* next_id, int round, double* overhead_s) {
  const double t0 = monotonic_seconds();
  status_or<sample_record> partner = s.sample((*next_id)++, round, false, false, true);
  if (!partner.ok()) {
    fail_impl(st, partner.get_status().message());
    return false;
  }
  const double dt = monotonic_seconds() - t0;
  s.add_sample_cost(dt * 1e9, 0);
  *overhead_s += dt;
  return true;
}

// One sample of one process. Every sample is the same `sample <id>` command, after which the
// harness copies its outputs into the exchange memory; some samples get fresh inputs first
// (`inputs <seed>`): every checked one (a secret seed the reference ran) and, at random, about
// as many others (a secret seed nobody ran), so the harness cannot tell which are checked. Only
// after the reply does the supervisor decide to read a checked sample's outputs itself (the
// harness's processes stopped) and compare them completely. Right before a fresh sample's
// `inputs` the same process gets one more sample on its current inputs (its *partner*): when it
// runs, nothing tells it from any other repeated sample (the `inputs` that follow are not sent
// yet), and it runs a moment before the fresh one under the same load, so input_reuse and
// fresh_overhead compare each fresh sample with its own partner (docs/harness-protocol.md). A
// fresh sample's whole time (its partner, inputs, re-poisoning, the read) goes to `overhead_s`,
// not the budget: on an H200 a checked 16M-element sample took ~25 ms against ~1 ms unchecked.
// Returns false when the process failed.
bool one_sample(live_session& ls, impl_state& st, const measure_request& req, uint64_t* next_id, int round,
                const uint64_t* check_seed, splitmix64& rng, double* overhead_s) {
  timing_session& s = *ls.s;
  status r = ok_status();
  // Unchecked fresh samples cost an input generation each (100+ ms for large inputs): at most
  // checked_samples of them per process, at random rounds, as many as the checked ones.
  bool fresh = check_seed != nullptr;
  if (!fresh && ls.fresh_unchecked < req.policy.checked_samples && rng.below(8) == 0) {
    fresh = true;
    ++ls.fresh_unchecked;
  }
  const uint64_t seed = check_seed ? *check_seed : rng.next();
  if (fresh && ls.crit.count() > 0 && !partner_sample(s, st, next_id, round, overhead_s)) return false;
  const uint64_t id = (*next_id)++;
  const double t_in = monotonic_seconds();
  if (fresh) {
    double bracket = 0, cpu = 0;
    r = s.inputs(seed, &bracket, &cpu);
    if (r.ok()) {
      st.result.inputs_bracket_ns.push_back(bracket);
      st.result.inputs_cpu_ns.push_back(cpu);
    }
  }
  if (r.ok() && req.policy.cold) r = s.flush();
  status_or<sample_record> smp = r.ok() ? s.sample(id, round, check_seed != nullptr, fresh, false) : status_or<sample_record>(r);
  if (!smp.ok()) {
    fail_impl(st, smp.get_status().message());
    return false;
  }
  const double t_out = monotonic_seconds();
  if (check_seed) {
    status got = s.read_outputs();
    if (!got.ok()) {
      fail_impl(st, got.with_context(s.spec().id + ": reading the outputs of a checked sample").message());
      return false;
    }
    check_outcome c = judge_outputs(req.reference, *check_seed, s.exchange().outputs(), s.outputs(), req.tolerances);
    if (s.left_group() && c.passed) {  // what it wrote after the reply cannot be told from the rest
      c.passed = false;
      c.failure = strprintf("process %d of the harness's tree had left its process group: the stop that comes with "
                            "the reply did not reach it, so it could write the outputs after the sample ended",
                            static_cast<int>(s.left_group()));
    }
    c.sample_id = id;
    c.process = s.process();
    st.result.checks.push_back(c);
  }
  const double t_end = monotonic_seconds();
  s.add_sample_cost((t_end - t_in) * 1e9, (t_end - t_out) * 1e9);
  if (fresh) *overhead_s += t_end - t_in;
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

process_result finalize_process(timing_session& s, timing_result& r, int batch, int from_round) {
  process_result pr;
  pr.index = s.process();
  std::vector<double> harness, excess, observed, unclaimed, floor_excess;
  bool partner = false;  // the sample before is a partner
  fresh_pair pair;
  for (const auto& smp : s.samples()) {
    const bool paired = partner;
    partner = smp.partner;
    double v = s.cupti_active() ? smp.gpu_ns : smp.harness_ns;
    r.gap_cpu_samples_ns.push_back(smp.gap_cpu_ns);
    if (smp.partner) {  // only the reference of the fresh sample that follows
      pair.partner_ns = v;
      pair.partner_cpu_ns = smp.cpu_ns / batch;
      pair.partner_bracket_ns = smp.bracket_ns / batch;
      // Partners are repeated samples no harness can tell from the others: where the floor is read
      // only on partners and fresh samples (many threads), they stand for the repeated ones.
      if (!std::isnan(smp.cpu_floor_ns) && !std::isnan(v) && smp.round >= from_round)
        floor_excess.push_back(smp.cpu_floor_ns / batch - v);
      continue;
    }
    harness.push_back(smp.harness_ns);
    double ex = std::max(0.0, smp.bracket_ns - median(s.rtt_ns()));
    excess.push_back(ex / batch);
    // Scheduling delays inflate the wall-clock bracket but not the CPU time; several threads
    // inflate the CPU time but not the bracket: the smaller one bounds the work from above.
    observed.push_back((std::isnan(smp.cpu_ns) ? ex : std::min(ex, smp.cpu_ns)) / batch);
    // The harness cannot have spent longer than passed between our send and its reply.
    if (smp.harness_ns * batch > smp.bracket_ns * 1.05 + 20000) ++pr.harness_over_bracket;
    if (std::isnan(v) || smp.round < from_round) continue;
    // Not minus the ping round trip: measured once, at start-up, it can be inflated by the
    // other processes' start (under load, a 1 ms round trip made one process's overhead
    // negative); the round trip is part of every implementation's overhead anyway.
    unclaimed.push_back(smp.bracket_ns / batch - v);
    if (!std::isnan(smp.cpu_floor_ns)) floor_excess.push_back(smp.cpu_floor_ns / batch - v);
    pr.samples_ns.push_back(v);
    pr.rounds.push_back(smp.round);
    (smp.fresh ? r.fresh_ns : r.reused_ns).push_back(v);
    if (smp.fresh) r.fresh_extra_ns.push_back(smp.inputs_extra_ns / batch);
    if (smp.fresh && paired && std::isfinite(pair.partner_ns)) {
      pair.fresh_ns = v;
      pair.fresh_cpu_ns = smp.cpu_ns / batch;
      pair.fresh_bracket_ns = smp.bracket_ns / batch;
      pair.extra_ns = smp.inputs_extra_ns / batch;
      r.pairs.push_back(pair);
    }
  }
  pr.median_ns = pr.samples_ns.empty() ? 0 : median(pr.samples_ns);
  pr.rtt_median_ns = s.rtt_ns().empty() ? 0 : median(s.rtt_ns());
  pr.bracket_excess_ns = excess.empty() ? 0 : median(excess);
  pr.observed_ns = observed.empty() ? 0 : median(observed);
  // The 10th percentile, not the median: load only adds to the overhead (a harness or the
  // supervisor waking late), and on a loaded 2-core VM it moved the medians of two honest
  // processes apart by more than a millisecond; the low end is the overhead itself.
  pr.unclaimed_ns = unclaimed.empty() ? 0 : percentile(unclaimed, 10);
  pr.harness_median_ns = harness.empty() ? 0 : median(harness);
  if (!floor_excess.empty()) pr.cpu_floor_excess_ns = median(floor_excess);
  pr.cpu_floor_excess = floor_excess;
  pr.findings = s.findings();
  pr.cost = s.cost();
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
    if (!ls->s || ls->retired) continue;  // a retired one was finished then; its checks are in r.checks
    timing_result& r = st[ls->impl].result;
    run_result rr = ls->s->finish();
    if (!rr.success() && !st[ls->impl].failed)
      r.warnings.push_back(strprintf("process %d did not exit cleanly after 'stop': %s %s", ls->s->process(),
                                     rr.describe().c_str(), rr.output_tail(300).c_str()));
    if (!r.ready) {
      r.ready = ls->s->ready();
      r.source = ls->s->cupti_active() ? timing_source::cupti : ls->s->timer();
      if (ls->s->cupti_active()) r.cupti_kernels = cupti_kernel_rows(ls->s->cupti(), true, true);
    }
    for (const auto& w : ls->s->warnings()) r.warnings.push_back("harness: " + w);
    process_result pr = finalize_process(*ls->s, r, ls->batch, ls->from_round);
    for (const auto& smp : ls->s->samples())
      if (!smp.partner) harness[ls->impl].push_back(smp.harness_ns);
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
                    r.samples_ns.size(), r.processes.size(), format_duration_ns(r.stats.median).c_str(), timing_source_name(r.source),
                    r.stop_reason.c_str());
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

namespace {


// The rounds of a timing run: every active process sampled once per round, in a seeded shuffle.
struct sampler {
  const measure_request& req;
  std::vector<impl_state>& st;
  std::vector<std::unique_ptr<live_session>>& live;
  measure_outcome& out;
  splitmix64 rng;
  std::vector<int> middle;
  std::optional<progress_bar> bar;
  double t0 = 0, overhead_s = 0;  // input generation and probes do not use the budget
  uint64_t next_id = 1;
  int round = 0;

  double wall() const { return monotonic_seconds() - t0 - overhead_s; }

  // The seed of a process's checked sample this round, or null: every process's first sample,
  // the closing round, and the random middle rounds.
  const uint64_t* check_for(const live_session& ls, bool closing) const {
    const auto& seeds = req.check_seeds;
    if (seeds.empty()) return nullptr;
    if (ls.crit.count() == 0) return &seeds.front();
    if (closing) return &seeds.back();
    auto it = std::find(middle.begin(), middle.end(), round);
    if (it != middle.end() && static_cast<size_t>(it - middle.begin()) + 1 < seeds.size() - 1)
      return &seeds[static_cast<size_t>(it - middle.begin()) + 1];
    return nullptr;
  }

  // One round; false when no process is active. *all_done: every criterion is finished.
  bool one_round(bool closing, bool* all_done) {
    std::vector<size_t> order;
    for (size_t i = 0; i < live.size(); ++i)
      if (live[i]->active) order.push_back(i);
    if (order.empty()) return false;
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    if (round < 3) {
      std::vector<std::string> names;
      for (size_t i : order) names.push_back(strprintf("%s#%d", live[i]->s->spec().id.c_str(), live[i]->s->process()));
      out.order.first_rounds.push_back(names);
    }
    *all_done = true;
    for (size_t i : order) {
      live_session& ls = *live[i];
      if (!ls.active) continue;
      if (!one_sample(ls, st[ls.impl], req, &next_id, round, check_for(ls, closing), rng, &overhead_s)) {
        for (auto& other : live)
          if (other->impl == ls.impl) other->active = false;
        continue;
      }
      if (stop_or(ls.crit).empty()) *all_done = false;
    }
    if (bar) bar->set(static_cast<uint64_t>(wall() * 10));
    ++round;
    return true;
  }

  // Rounds until every criterion is finished or the wall reaches `until_s`; true: finished.
  bool run_until(double until_s) {
    bool all_done = false;
    while (one_round(false, &all_done))
      if (all_done || wall() >= until_s) break;
    return all_done;
  }
};

// Samples of record of one process (as one_sample counted them).
std::vector<double> values_of(const live_session& ls, std::vector<int>* rounds = nullptr) {
  std::vector<double> v;
  for (const auto& smp : ls.s->samples()) {
    if (smp.partner) continue;
    double x = ls.s->cupti_active() ? (smp.has_gpu ? smp.gpu_ns : smp.harness_ns) : smp.harness_ns;
    if (!std::isfinite(x) || x <= 0) continue;
    v.push_back(x);
    if (rounds) rounds->push_back(smp.round);
  }
  return v;
}

pilot_summary summarize_pilot(const std::vector<std::unique_ptr<live_session>>& live, size_t impls, double startup_s,
                              double round_s, double left_s) {
  pilot_summary p;
  p.log_medians.resize(impls);
  std::vector<double> all;
  impl_samples pooled;
  std::vector<size_t> impl_of;
  for (const auto& ls : live) {
    if (!ls->active) continue;
    std::vector<int> rounds;
    std::vector<double> v = values_of(*ls, &rounds);
    if (v.empty()) continue;
    p.log_medians[ls->impl].push_back(std::log(median(v)));
    impl_of.push_back(ls->impl);
    all.insert(all.end(), v.begin(), v.end());
    pooled.processes.push_back(std::move(v));
    pooled.rounds.push_back(std::move(rounds));
  }
  // The pilot's processes are sampled in the same rounds: the within part is planned without the
  // load they shared (as the verdict's interval floor is; kernel/verdict.h without_round_effects).
  process_medians pm = summarize_processes(without_round_effects({&pooled})[0], 100, 0x9e3779b97f4a7c15ull);
  p.within_var = pm.within_var.empty() ? 0 : mean(pm.within_var);
  if (pm.within_var.size() == impl_of.size()) {
    std::vector<std::vector<double>> per(impls);
    for (size_t i = 0; i < impl_of.size(); ++i) per[impl_of[i]].push_back(pm.within_var[i]);
    for (const auto& w : per) p.within_vars.push_back(w.empty() ? p.within_var : mean(w));
  }
  p.samples_per_process = pooled.processes.empty() ? 0 : static_cast<double>(all.size()) / static_cast<double>(pooled.processes.size());
  p.median_ns = all.empty() ? 0 : median(all);
  p.startup_s = startup_s;
  p.round_s = round_s;
  p.left_s = left_s;
  return p;
}

// Stops the pilot's processes (a new batch): their samples no longer count, their checks do.
void retire(std::vector<std::unique_ptr<live_session>>& live, std::vector<impl_state>& st) {
  for (auto& ls : live) {
    if (!ls->s || ls->retired) continue;
    ls->active = false;
    ls->retired = true;
    run_result rr = ls->s->finish();
    timing_result& r = st[ls->impl].result;
    if (!rr.success() && !st[ls->impl].failed)
      r.warnings.push_back(strprintf("pilot process %d did not exit cleanly after 'stop': %s", ls->s->process(),
                                     rr.describe().c_str()));
    for (const auto& w : ls->s->warnings()) r.warnings.push_back("harness: " + w);
  }
}

// The plan priced the new processes' start-up at the pilot's; on a loaded machine it can take
// much longer (2026-12-07, numpy A/A on the shared 2-core VM: 20 processes planned to start in
// 5.2 s left 3 samples each, whose medians spread by 24-43% and made the verdict). A process
// whose median rests on a few samples is noise, not a measurement: when the time left cannot give
// every process min_samples more rounds at the pilot's cost per sample, the newest processes are
// stopped unused (never below `keep` started before the plan, or the first wave after a restart).
void keep_affordable(sampler& sm, const pilot_summary& ps, sampling_record& rec, double took_s, int keep) {
  const measure_request& req = sm.req;
  const size_t K = req.kernels.size();
  const double per_sample = ps.round_s / static_cast<double>(std::max<size_t>(K * static_cast<size_t>(req.policy.processes), 1)) +
                            (rec.batch - 1) * ps.median_ns * 1e-9;
  const double left = req.policy.max_time_s - sm.wall();
  const int floor_n = std::max(keep, req.policy.processes);
  int n = rec.used;
  while (n > floor_n && left < req.policy.min_samples * per_sample * static_cast<double>(K) * n) --n;
  if (n == rec.used) return;
  int drop = rec.used - n;
  std::vector<int> dropped(K, 0);
  for (auto it = sm.live.rbegin(); it != sm.live.rend() && drop > 0; ++it) {
    live_session& ls = **it;
    if (!ls.s || ls.retired || dropped[ls.impl] >= rec.used - n) continue;
    ls.active = false;
    ls.retired = true;
    (void)ls.s->finish();
    ++dropped[ls.impl];
    if (std::all_of(dropped.begin(), dropped.end(), [&](int d) { return d >= rec.used - n; })) drop = 0;
  }
  rec.why += strprintf("; starting them took %.1f s (priced at the pilot's %.2f s per wave): the %.1f s left gives %d "
                       "process(es) per implementation min_samples %d rounds, so the newest %d per implementation were "
                       "stopped unused",
                       took_s, ps.startup_s, std::max(left, 0.0), n, req.policy.min_samples, rec.used - n);
  rec.used = n;
}

sampling_record unplanned(const timing_policy& p, const char* why) {
  sampling_record s;
  s.batch = p.batch;
  s.batch_why = p.batch > 1 ? "set in the timing policy" : "no pilot: one launch per sample";
  s.pilot = s.planned = s.used = p.processes;
  s.why = why;
  return s;
}

// After the pilot: decide, then start what the plan adds (or restart with a new batch).
sampling_record apply_plan(sampler& sm, double startup_s, int pilot_rounds, double pilot_wall) {
  const measure_request& req = sm.req;
  pilot_summary ps = summarize_pilot(sm.live, req.kernels.size(), startup_s, pilot_wall / std::max(pilot_rounds, 1),
                                     req.policy.max_time_s - sm.wall());
  ps.baseline = req.baseline;
  sampling_record rec = decide_sampling(ps, req.policy, req.same_tolerance, req.confidence);
  const int P0 = req.policy.processes;
  const double s0 = monotonic_seconds();
  const bool restart = rec.batch != req.policy.batch;
  if (restart) {
    timing_policy np = req.policy;
    np.batch = rec.batch;
    retire(sm.live, sm.st);
    start_processes(req, np, P0, rec.used, sm.st, sm.live);
  } else if (rec.used > P0) {
    start_processes(req, req.policy, P0, rec.used - P0, sm.st, sm.live);
  }
  if (rec.used > P0 || restart) keep_affordable(sm, ps, rec, monotonic_seconds() - s0, restart ? 0 : P0);
  // Processes started at different times are not alike on a machine whose load changes: on the
  // loaded VM (2026-12-07, host A/A) the pilot's processes, whose medians mixed the quieter pilot
  // rounds with the later ones, ran 2.7-2.8 ms against 3.3-3.5 ms for the processes the plan
  // added. With processes added, every process's samples of record are the rounds from here on
  // (the pilot's rounds served the plan and the checks).
  if (!restart && rec.used > P0)
    for (auto& ls : sm.live) ls->from_round = sm.round;
  MAGPIE_LOG_INFO("timing plan: batch %d, %d process(es) per implementation (pilot %d): %s", rec.batch, rec.used, P0,
                  rec.why.c_str());
  return rec;
}

}  // namespace

measure_outcome measure_interleaved(const measure_request& req) {
  std::vector<impl_state> st(req.kernels.size());
  std::vector<std::unique_ptr<live_session>> live;
  const double s0 = monotonic_seconds();
  start_processes(req, req.policy, 0, req.policy.processes, st, live);
  const double startup_s = monotonic_seconds() - s0;
  measure_outcome out;
  sampler sm{req, st, live, out, splitmix64(req.order_seed), {}, {}, 0, 0, req.first_sample_id, 0};
  sm.middle = checked_rounds(req, sm.rng);
  out.order.policy = "seeded shuffle of every process each round; processes spawned interleaved across implementations";
  out.order.processes_per_kernel = req.policy.processes;
  out.order.seed = req.order_seed;
  out.order.checked_rounds = sm.middle;
  if (req.progress) sm.bar.emplace("timing", static_cast<uint64_t>(req.policy.max_time_s * 10));
  sm.t0 = monotonic_seconds();
  const bool plan = req.plan && req.kernels.size() >= 2;
  sampling_record rec = unplanned(req.policy, plan ? "" : req.kernels.size() < 2 ? "one implementation: processes as configured"
                                                                                   : "processes as configured (several GPU groups)");
  bool all_done = sm.run_until(plan ? req.policy.max_time_s * k_pilot_share : req.policy.max_time_s);
  if (plan) {
    const int pilot_rounds = sm.round;
    rec = apply_plan(sm, startup_s, pilot_rounds, sm.wall());
    if (rec.used != req.policy.processes || rec.batch != req.policy.batch) all_done = false;
    if (!all_done) all_done = sm.run_until(req.policy.max_time_s);
  }
  for (auto& ls : live)
    if (ls->active && st[ls->impl].result.stop_reason.empty())
      st[ls->impl].result.stop_reason = all_done ? stop_or(ls->crit) : "time_budget";
  if (!req.check_seeds.empty()) {  // one closing round of checked samples
    bool ignored = false;
    sm.one_round(true, &ignored);
  }
  if (sm.bar) sm.bar->finish();
  double wall = monotonic_seconds() - sm.t0;
  out.results = finalize_all(live, st, req, wall);
  for (auto& r : out.results) {
    r.sampling = rec;
    r.sampling.used = static_cast<int>(r.processes.size());
  }
  out.order.processes_per_kernel = rec.used;
  return out;
}

}  // namespace magpie::kernel
