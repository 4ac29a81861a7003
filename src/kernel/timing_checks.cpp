// The timing stage's integrity checks (docs/harness-protocol.md, "Integrity"): probes of
// checked samples, the CUPTI record channel, GPU-work attribution, the supervisor's clock
// bracket, input reuse and input-generation work (reports print them: kernel/timing_printer.h).
#include <algorithm>
#include <cmath>

#include "core/sandbox.h"
#include "core/strings.h"
#include "gpu/nvml_procs.h"
#include "kernel/timing.h"

namespace magpie::kernel {

check_outcome judge_outputs(const held_reference* ref, uint64_t seed, const std::vector<exchange_output>& layout,
                            const std::vector<tensor>& got, const correctness_policy& p) {
  check_outcome c;
  const held_trial* rt = ref ? ref->check_for_seed(seed) : nullptr;
  c.compared = rt != nullptr;
  if (rt && rt->outputs.size() != got.size()) {
    c.passed = false;
    c.failure = strprintf("%zu outputs, the reference has %zu", got.size(), rt->outputs.size());
    return c;
  }
  for (size_t o = 0; o < got.size() && o < layout.size() && c.passed; ++o) {
    const std::string& name = layout[o].name;
    const tensor& g = got[o];
    std::string why;
    c.elements += g.numel();
    if (rt) {
      const tensor& r = rt->outputs[o];
      if (g.shape != r.shape || g.type != r.type) {
        why = strprintf("output %s: shape %s dtype %s, the reference has shape %s dtype %s", name.c_str(),
                        shape_to_string(g.shape).c_str(), dtype_name(g.type), shape_to_string(r.shape).c_str(),
                        dtype_name(r.type));
      } else {
        if (p.check_degenerate) why = degenerate_reason(name, r, g);
        tensor_diff d = compare_tensor(name, r, g, tolerance_for(r.type, p));
        if (why.empty() && (d.mismatches || d.nan_mismatch))
          why = strprintf("output %s: %zu of %zu elements differ from the reference's outputs for the same inputs "
                          "(first at index %lld: reference %.6g, candidate %.6g)",
                          name.c_str(), d.mismatches + d.nan_mismatch, d.numel, static_cast<long long>(d.first_bad),
                          d.first_ref, d.first_got);
      }
    } else if (!g.data.empty() && std::all_of(g.data.begin(), g.data.end(), [](uint8_t b) { return b == 0xFF; })) {
      why = "output " + name + " still holds the poison pattern: the launch did not write it";
    }
    if (!why.empty()) {
      c.passed = false;
      c.failure = why;
    }
  }
  return c;
}

namespace {

/// The time of record is the supervisor-bounded host clock (timing_result::source).
bool timed_by_host_clock(const timing_result& r) { return r.source == timing_source::host_clock; }

double med(const std::vector<double>& v) { return v.empty() ? 0 : median(v); }

/// Both ran the same harness (its ready line's `harness`): the overheads compare directly.
bool same_harness_as(const timing_result& r, const timing_result& base) {
  return (r.ready ? r.ready->harness : "") == (base.ready ? base.ready->harness : "");
}

void check_outputs(timing_result& r) {
  if (r.checks.empty()) {
    r.integrity.set("timed_outputs", check_status::skipped, "no checked samples");
    return;
  }
  size_t compared = 0;
  for (const auto& c : r.checks) {
    compared += c.compared;
    if (!c.passed) {
      r.integrity.set("timed_outputs", check_status::fail,
                      strprintf("timed sample %llu (process %d, fresh inputs): %s — results cached, precomputed or "
                                "computed outside the timed launch",
                                static_cast<unsigned long long>(c.sample_id), c.process, c.failure.c_str()));
      return;
    }
  }
  r.integrity.set("timed_outputs", check_status::pass,
                  strprintf("%zu timed samples on fresh secret inputs, outputs re-poisoned before each and read by the "
                            "supervisor from its exchange memory with the harness stopped: %zu compared completely "
                            "with the reference's outputs, all matched",
                            r.checks.size(), compared),
                  {{"checked", r.checks.size()}, {"compared_with_reference", compared}});
}

void check_cupti(timing_result& r) {
  size_t no_gpu = 0, outside = 0, bad_marks = 0, total = r.samples_ns.size();
  for (const auto& p : r.processes) {
    no_gpu += p.findings.samples_without_gpu;
    outside += p.findings.ops_outside_window;
    bad_marks += p.findings.marks_outside_bracket + p.findings.unexpected_marks;
  }
  check_data data = {{"records", r.cupti_records}, {"bad_macs", r.cupti_bad_macs}, {"sequence_errors", r.cupti_sequence_errors},
               {"bad_marks", bad_marks}, {"ops_outside_window", outside}};
  if (!r.cupti_hello)
    r.integrity.set("cupti_channel", check_status::fail, "the CUPTI injection library never opened its record channel (the bootstrap "
                                             "was consumed or tampered with before CUDA initialised)", data);
  else if (r.cupti_bad_macs || r.cupti_sequence_errors)
    r.integrity.set("cupti_channel", check_status::fail, strprintf("%zu CUPTI records failed authentication and %zu were out of "
                                                       "sequence: records were forged or removed",
                                                       r.cupti_bad_macs, r.cupti_sequence_errors), data);
  else if (bad_marks || outside)
    r.integrity.set("cupti_channel", check_status::fail, strprintf("%zu sample marks disagree with the supervisor's clock or were not "
                                                       "issued by it, %zu samples ran GPU work outside their window",
                                                       bad_marks, outside), data);
  else
    r.integrity.set("cupti_channel", check_status::pass, "every record authenticated (per-run key, in sequence)", data);
  double total_gpu = 0;
  for (double v : r.samples_ns) total_gpu += v;
  check_data g = {{"samples_without_gpu_work", no_gpu}, {"stray_ops", r.stray_ops}, {"stray_gpu_ns", r.stray_gpu_ns},
            {"unmatched_ops", r.unmatched_ops}};
  if (no_gpu)
    r.integrity.set("gpu_attribution", check_status::fail, strprintf("%zu of %zu samples had no GPU work launched inside their window "
                                                         "(no fallback to the harness's timer)", no_gpu, total + no_gpu), g);
  else if (r.stray_gpu_ns > 0.05 * total_gpu + 1000)
    r.integrity.set("gpu_attribution", check_status::fail, strprintf("%.1f us of GPU work (%zu operations) was launched by other threads "
                                                         "outside the timed windows", r.stray_gpu_ns / 1e3, r.stray_ops), g);
  else
    r.integrity.set("gpu_attribution", r.unmatched_ops ? check_status::warn : check_status::pass,
                    "all GPU work launched in each window (every thread and stream; kernels, memcpy, memset) is timed", g);
  r.integrity.set("timer", check_status::pass, "CUPTI activity timestamps, read by the supervisor");
}

void check_bracket(timing_result& r) {
  std::vector<check_data> data;
  std::string fail;
  std::vector<const process_result*> over_cpu;
  for (const auto& p : r.processes) {
    data.push_back({{"process", p.index}, {"harness_median_ns", p.harness_median_ns},
                    {"bracket_minus_rtt_ns", p.bracket_excess_ns}, {"observed_ns", p.observed_ns},
                    {"over_bracket", p.harness_over_bracket}});
    if (p.harness_over_bracket * 10 > p.samples_ns.size() + 10)
      fail = strprintf("process %d: the harness reported more time than passed on the supervisor's clock in %zu samples",
                       p.index, p.harness_over_bracket);
    else if (timed_by_host_clock(r) && p.observed_ns > 3 * p.harness_median_ns + 200000)
      over_cpu.push_back(&p);
  }
  // Work hidden from the harness's timer is the candidate's code: it runs in every process. One
  // process out of several whose samples cost more (CI once saw one of three at ~90 ms of CPU
  // per 2.5 ms sample, the other two clean, for all three implementations alike) is the
  // machine, not the candidate; a majority of the processes is the candidate.
  if (fail.empty() && !over_cpu.empty() && over_cpu.size() * 2 > r.processes.size()) {
    const process_result& p = *over_cpu.back();
    fail = strprintf("%zu of %zu processes: the harness reported %.1f us per sample (process %d), but its process used "
                     "%.1f us of CPU within the supervisor's clock around each sample",
                     over_cpu.size(), r.processes.size(), p.harness_median_ns / 1e3, p.index, p.observed_ns / 1e3);
  }
  if (fail.empty() && r.gpu_ops_under_host_timer)
    fail = strprintf("the harness times on the CPU, but CUPTI recorded %zu GPU operations in its process: GPU work "
                     "would go untimed", r.gpu_ops_under_host_timer);
  if (!fail.empty())
    r.integrity.set("clock_bracket", check_status::fail, fail, data);
  else if (!over_cpu.empty())
    r.integrity.set("clock_bracket", check_status::warn,
                    strprintf("%zu of %zu processes used more CPU around each sample than their harness reported "
                              "(process %d: %.1f us against %.1f us); the others agree",
                              over_cpu.size(), r.processes.size(), over_cpu.front()->index,
                              over_cpu.front()->observed_ns / 1e3, over_cpu.front()->harness_median_ns / 1e3),
                    data);
  else
    r.integrity.set("clock_bracket", check_status::pass, "the harness's times agree with the supervisor's clock around each sample",
                    data);
  if (timed_by_host_clock(r))
    r.integrity.set("timer", check_status::pass, "host clock in the harness, bounded by the supervisor's clock");
  else
    r.integrity.set("timer", check_status::warn, "timer of record inside the candidate's process (CUPTI unavailable): 'faster' "
                                     "verdicts are not certified");
}

// Fresh samples are charged the work that preceded them out of sight of their clock: the CPU
// time the harness's tree spent during their `inputs` beyond its busiest thread (generating
// inputs is one thread's work; a helper thread or process computing the answer meanwhile, or
// right after, is not), less what the baseline's harness spends there the same way (a generator
// of its own that uses threads). Work done once per input set and reused by the samples that
// repeat the inputs then makes fresh samples slower, like any other memoisation.
//
// Each fresh sample is compared with its partner (fresh_pair): the repeated sample the same
// process ran right before the fresh one's `inputs`, when nothing told it that inputs would follow.
// Against repeated samples from the whole run, a two-thread honest kernel failed once in CI (fresh
// 9.6 ms against 0.89 ms): under load its time is heavy-tailed (the second thread waits for a core;
// on the 2-core VM with two compares at once p50 1.1 ms, p75 3.3 ms, p90 6.5 ms while its CPU time
// stayed 1.5 ms), and fresh samples are not spread like the others — the checked ones of every
// process fall in the same rounds, beside every other tree's input generation and the work attack
// trees resume after their checked replies. The partner ran a moment before under the same load.
// input_reuse's outcome: `slower` says how much slower fresh samples were, `charge` the CPU time
// charged to them (median), `same` what a pass found.
void set_reuse(timing_result& r, bool fail, const std::string& slower, double charge, const char* same, const check_data& data) {
  const std::string charged = charge > 0 ? strprintf(", with %.2f us of CPU time other threads or processes of the harness "
                                                     "spent while its inputs were generated", charge / 1e3)
                                         : "";
  if (fail)
    r.integrity.set("input_reuse", check_status::fail,
                    "samples on fresh inputs take " + slower + charged +
                        ": work skipped or results reused when the inputs did not change",
                    data);
  else
    r.integrity.set("input_reuse", check_status::pass,
                    std::string(same) + " (fresh ones charged with the CPU time other threads spent while their inputs "
                                        "were generated)",
                    data);
}

void check_reuse(timing_result& r, const timing_result* base) {
  const timing_result& ref = base && !base->fresh_extra_ns.empty() ? *base : r;
  const double usual_extra = med(ref.fresh_extra_ns);
  if (r.pairs.size() >= 3) {
    std::vector<double> ratio, slower, cpu_more, charged, fresh, partner;
    for (const auto& q : r.pairs) {
      charged.push_back(std::max(0.0, q.extra_ns - usual_extra));
      fresh.push_back(q.fresh_ns + charged.back());
      partner.push_back(q.partner_ns);
      ratio.push_back((fresh.back() + 1.0) / (std::max(q.partner_ns, 0.0) + 1.0));
      slower.push_back(fresh.back() - q.partner_ns);
      if (std::isfinite(q.fresh_cpu_ns) && std::isfinite(q.partner_cpu_ns))
        cpu_more.push_back(q.fresh_cpu_ns + charged.back() - q.partner_cpu_ns);
    }
    const double f = med(ratio), low = percentile(ratio, 20), charge = med(charged);
    // A host-clock harness's time is wall time: under load a kernel whose launch starts a thread
    // waits for a core, on fresh samples most (right after the input generation's burst on the
    // main thread: golden adversarial_host, two compares at once, honest_threads' fresh samples
    // 5.1x their partners in all 5 pairs, 3.8 against 0.75 ms, while their CPU time differed by
    // 11%). Work skipped on repeated inputs shows in the CPU time as well; waiting does not.
    const bool host = timed_by_host_clock(r) && cpu_more.size() == r.pairs.size();
    const double share = host && med(slower) > 0 ? med(cpu_more) / med(slower) : 0;
    check_data data = {{"pairs", r.pairs.size()}, {"fresh_median_ns", med(fresh)}, {"partner_median_ns", med(partner)},
                 {"ratio_median", f}, {"ratio_p20", low}, {"slower_median_ns", med(slower)},
                 {"cpu_more_median_ns", host ? check_value(med(cpu_more)) : check_value(nullptr)},
                 {"cpu_share", host ? check_value(share) : check_value(nullptr)},
                 {"charged_median_ns", charge}, {"baseline_extra_median_ns", usual_extra},
                 {"fresh_uncharged_median_ns", med(r.fresh_ns)}, {"repeated_median_ns", med(r.reused_ns)}};
    // Honest kernels do the same work on both samples of a pair: the ratios scatter around 1. A
    // kernel that does the whole work only where it might be checked does it on every fresh
    // sample, never on a partner: most pairs (4 of 5) slower, the typical one by 30% — and, on
    // the host clock, the CPU time explains at least 30% of the slowdown (medians over the pairs:
    // check_sniff, 55% of the work on repeated inputs, 0.66-1.23 in 6 compares, memo_content
    // 0.84-1.05; honest kernels whose pairs were that much slower -0.14-0.04: waiting). A bound on
    // the CPU ratio instead (1.15) let check_sniff through once in 18 runs: the output copy and
    // the channel dilute a ratio, not a difference.
    set_reuse(r, f > 1.3 && low > 1.1 && (!host || share >= 0.3),
              strprintf("%.2fx as long as the sample the same process ran on its previous inputs right before (median "
                        "of %zu pairs; %.2f vs %.2f us%s)",
                        f, r.pairs.size(), med(fresh) / 1e3, med(partner) / 1e3,
                        host ? strprintf("; %.0f%% of it CPU time", 100 * share).c_str() : ""),
              charge, "fresh inputs take the time of the sample right before them on repeated inputs", data);
    return;
  }
  if (r.fresh_ns.size() < 3 || r.reused_ns.size() < 8) {
    r.integrity.set("input_reuse", check_status::skipped, "too few samples to compare fresh and repeated inputs");
    return;
  }
  std::vector<double> fresh = r.fresh_ns, charged;
  for (size_t i = 0; i < fresh.size() && i < r.fresh_extra_ns.size(); ++i) {
    charged.push_back(std::max(0.0, r.fresh_extra_ns[i] - usual_extra));
    fresh[i] += charged.back();
  }
  double f = med(fresh), u = med(r.reused_ns), fmin = *std::min_element(fresh.begin(), fresh.end());
  const double charge = med(charged);
  check_data data = {{"fresh_median_ns", f}, {"fresh_min_ns", fmin}, {"repeated_median_ns", u}, {"fresh", r.fresh_ns.size()},
               {"repeated", r.reused_ns.size()}, {"fresh_uncharged_median_ns", med(r.fresh_ns)},
               {"charged_median_ns", charge}, {"baseline_extra_median_ns", usual_extra}};
  // Without partners (results merged from runs that had none): fresh samples against all
  // repeated ones — all of them slower than the typical repeated one.
  set_reuse(r, fmin > 1.1 * u + 200 && f > 1.3 * u,
            strprintf("%.2fx as long as samples that repeat inputs (%.2f vs %.2f us)", f / u, f / 1e3, u / 1e3), charge,
            "fresh and repeated inputs take the same time", data);
}

// fresh_overhead: the part of the supervisor's clock a fresh sample's claim leaves out, beyond
// what its partner's leaves out (fresh_pair::overhead_ns), against the baseline's same figure.
// Work done after the harness's timer but before its reply, only where a sample can be checked
// (relay.cpp fresh_overtime: the answer written into the exchange memory after a claimed half
// time), is inside our clock on fresh samples only: clock_gain's low end over all samples does
// not move, the pairs do. Honest harnesses do the same on both samples of a pair (the output
// copy, the channel): cancelled within the pair, and what remains (caches warm after `inputs`,
// a checked sample's stop) is the baseline's too.
void check_fresh_overhead(timing_result& r, const timing_result& base) {
  if (r.pairs.size() < 3 || base.pairs.size() < 3) {
    r.integrity.set("fresh_overhead", check_status::skipped, "too few fresh samples with partners");
    return;
  }
  // Per pair, what the fresh sample cost beyond its partner that its claim does not account for.
  // Host clock: the tree's CPU time (its wall-time bracket moved by ±5-9 ms between the samples
  // of a pair under load, the attack's work is ~0.7 ms); a claim that grew by more than the CPU
  // time (a wait for a core) accounts for nothing more. GPU timers: our clock around the sample.
  const bool host = timed_by_host_clock(r) && timed_by_host_clock(base);
  auto beyond = [host](const timing_result& t, double* cost) {
    std::vector<double> v, c;
    for (const auto& q : t.pairs) {
      const bool cpu = host && std::isfinite(q.fresh_cpu_ns) && std::isfinite(q.partner_cpu_ns);
      v.push_back(cpu ? (q.fresh_cpu_ns - q.partner_cpu_ns) - std::max(0.0, q.fresh_ns - q.partner_ns)
                      : (q.fresh_bracket_ns - q.fresh_ns) - (q.partner_bracket_ns - q.partner_ns));
      c.push_back(cpu ? q.partner_cpu_ns : q.partner_bracket_ns);
    }
    *cost = med(c);
    return med(v);
  };
  double cost = 0, base_cost = 0;
  const double m = beyond(r, &cost), t = beyond(base, &base_cost);
  std::vector<double> claim;
  for (const auto& q : r.pairs) claim.push_back(q.fresh_ns);
  const double c = med(claim);
  // Half the claim: the answer computed out of the claim is about the whole work, twice what an
  // attacker claiming a 2x gain reports; a tenth of the partner's cost for cache and page effects
  // (honest kernels: at most 0.22 ms beyond the baseline in 36 compares, the attack 0.57-0.78 ms).
  const double slack = 50000 + 0.5 * c + 0.1 * cost;
  check_data data = {{"pairs", r.pairs.size()}, {"source", host ? "cpu" : "bracket"}, {"beyond_partner_median_ns", m},
               {"baseline_beyond_partner_median_ns", t}, {"fresh_claimed_median_ns", c},
               {"partner_cost_median_ns", cost}, {"slack_ns", slack}};
  if (m - t > slack)
    r.integrity.set("fresh_overhead", check_status::fail,
                    strprintf("on fresh inputs a sample costs %.1f us more %s than the sample the same process ran right "
                              "before, beyond what its time of record accounts for (median of %zu pairs; the baseline "
                              "%.1f us; the claim %.1f us): work done after the harness's timer where samples can be checked",
                              m / 1e3, host ? "CPU time" : "on the supervisor's clock", r.pairs.size(), t / 1e3, c / 1e3),
                    data);
  else
    r.integrity.set("fresh_overhead", check_status::pass,
                    "fresh samples cost what the sample right before them costs, beyond their claim (the baseline's margin)",
                    data);
}

// Work between samples: the harness's process tree (every thread, child processes too) uses
// no CPU while it waits for the next command; what it used there is work the sample clock
// never saw. Two figures, each against the baseline (same harness: interpreter housekeeping,
// CUDA driver and CUPTI threads) and the time of record: the median per sample (work done
// before every sample) and the mean (work done before some, beyond 1.5x the baseline's). An
// honest CUDA harness on an H200 used 4.5 ms per sample on average over 12 samples (one-off
// costs in a few gaps; 41 us over 398 samples on an H100), so the mean alone, against no
// baseline, rejected the baseline itself.
void check_gap_cpu(timing_result& r, const timing_result* base) {
  const double mine = mean(r.gap_cpu_samples_ns), theirs = base ? mean(base->gap_cpu_samples_ns) : 0;
  const double mine_med = med(r.gap_cpu_samples_ns), theirs_med = base ? med(base->gap_cpu_samples_ns) : 0;
  const double slack = 0.25 * r.stats.median + 50000;
  check_data data = {{"cpu_between_samples_ns_per_sample", mine}, {"baseline_ns_per_sample", theirs},
               {"median_per_sample_ns", mine_med}, {"baseline_median_per_sample_ns", theirs_med},
               {"median_ns", r.stats.median}};
  std::string why;
  if (mine_med > theirs_med + slack)
    why = strprintf("the harness's processes used %.1f us of CPU between samples in the median sample (the baseline "
                    "%.1f us; its samples take %.1f us): work done between samples is not timed",
                    mine_med / 1e3, theirs_med / 1e3, r.stats.median / 1e3);
  else if (base && mine > 1.5 * theirs + slack)
    why = strprintf("the harness's processes used %.1f us of CPU per sample while no command was in flight (the "
                    "baseline %.1f us; its samples take %.1f us): work done between samples is not timed",
                    mine / 1e3, theirs / 1e3, r.stats.median / 1e3);
  if (!why.empty())
    r.integrity.set("cpu_between_samples", check_status::fail, why, data);
  else
    r.integrity.set("cpu_between_samples", check_status::pass,
                    "no CPU work between samples beyond the baseline's (every thread and child process, /proc)", data);
}

void check_input_generation(timing_result& r, const timing_result& base) {
  double mine = med(r.inputs_bracket_ns), theirs = med(base.inputs_bracket_ns);
  double cpu = med(r.inputs_cpu_ns), base_cpu = med(base.inputs_cpu_ns);
  auto low = [](const std::vector<double>& v) { return v.empty() ? 0 : percentile(v, 10); };
  const double mine_low = low(r.inputs_bracket_ns), theirs_low = low(base.inputs_bracket_ns);
  check_data data = {{"inputs_median_ns", mine}, {"baseline_inputs_median_ns", theirs}, {"inputs_p10_ns", mine_low},
               {"baseline_inputs_p10_ns", theirs_low}, {"inputs_cpu_median_ns", cpu},
               {"baseline_inputs_cpu_median_ns", base_cpu}, {"gpu_ns_before_fresh_sample", r.gpu_ns_per_fresh_gap},
               {"baseline_gpu_ns_before_fresh_sample", base.gpu_ns_per_fresh_gap},
               {"kernels_before_fresh_sample", r.kernels_per_checked_gap},
               {"baseline_kernels_before_fresh_sample", base.kernels_per_checked_gap}};
  if (r.source == timing_source::cupti && base.source == timing_source::cupti && r.gpu_ns_per_fresh_gap > 1.25 * base.gpu_ns_per_fresh_gap + 20000)
    r.integrity.set("input_generation", check_status::fail, strprintf("%.1f us of GPU work launched between samples before each fresh "
                                                          "sample, the baseline %.1f us: work done while inputs are "
                                                          "generated is not timed",
                                                          r.gpu_ns_per_fresh_gap / 1e3, base.gpu_ns_per_fresh_gap / 1e3), data);
  // No margin on the CPU time against the baseline's (1.3x + 0.3 ms until issue 35 part 3): under
  // load it rejected an honest kernel (11.0 against 7.7 ms) and missed one launch's work hidden
  // next to ~8 ms of generation. Work beside the generating thread is charged to the fresh sample
  // instead (input_reuse); the CPU times stay in the data.
  // On the low ends (10th percentiles), not the medians: load only adds, and two compares at once on
  // the 2-core VM moved honest medians to 1.7-1.9x the baseline's (honest_fma 51.7 against 27.5 ms,
  // aa_copy 75.2 against 45.0 ms); work done in the generating thread is in every generation, the
  // quietest included.
  // The slack grows with the baseline's own spread (median − 10th percentile): a clean-clone CI
  // run rejected an identical copy at 23.9 against 12.2 ms (baseline median 28.0 ms) — what load
  // spreads the baseline's generations by, it can add to anyone's low end, and no more can be
  // resolved then.
  else if (!r.inputs_bracket_ns.empty() && !base.inputs_bracket_ns.empty() &&
           mine_low > 1.5 * theirs_low + std::max(2e6, theirs - theirs_low))
    r.integrity.set("input_generation", check_status::fail, strprintf("input generation took %.2f ms (10th percentile; median %.2f ms), "
                                                          "%.2f ms for the baseline (same generator; median %.2f ms): work "
                                                          "done there is not timed",
                                                          mine_low / 1e6, mine / 1e6, theirs_low / 1e6, theirs / 1e6), data);
  else
    r.integrity.set("input_generation", check_status::pass, "input generation costs what it costs the baseline (CPU, wall and GPU time)",
                    data);
}

// The supervisor's own clock around each sample (per launch) must show the gain the time of
// record claims, as far as it can resolve it. Per sample, the bracket minus the time of record is the overhead the claim leaves out (channel, output
// copy, scheduling); the same harness leaves out the same overhead for every implementation,
// and taking it per sample cancels the load that slows kernel and bracket alike. A timer the
// candidate's process controls (a relay rewriting replies, a patched clock or event) leaves
// out what it hides: its overhead exceeds the baseline's by the part of the gain it faked.
void check_gain(timing_result& r, const timing_result& base) {
  auto unclaimed = [](const timing_result& t) {
    std::vector<double> v;
    for (const auto& p : t.processes) v.push_back(p.unclaimed_ns);
    return med(v);
  };
  // The claimed gain at the same quantile as the overhead (each process's 10th percentile): under
  // load the medians of the baseline grew by more than the gain the overhead's low end can show.
  auto low = [](const timing_result& t) {
    std::vector<double> v;
    for (const auto& p : t.processes)
      if (!p.samples_ns.empty()) v.push_back(percentile(p.samples_ns, 10));
    return med(v);
  };
  const double tb = base.stats.median, tc = r.stats.median, ub = unclaimed(base), uc = unclaimed(r);
  const double claimed_low = low(base) - low(r);
  // Another harness (python against C++) has another overhead: then the baseline's whole
  // overhead and 50 us more are allowed on top.
  const bool same_harness = same_harness_as(r, base);
  const double claimed = tb - tc, hidden = uc - ub,
               slack = 20000 + 0.1 * std::max(ub, 0.0) + 0.05 * tb + (same_harness ? 0 : std::max(ub, 0.0) + 50000);
  check_data data = {{"claimed_gain_ns", claimed}, {"claimed_gain_p10_ns", claimed_low}, {"unclaimed_ns", uc}, {"baseline_unclaimed_ns", ub},
               {"supervisor_gain_ns", claimed - hidden}, {"slack_ns", slack}, {"same_harness", same_harness}};
  if (claimed > median_difference_noise_ns(r, base) && hidden > 0.5 * std::min(claimed, std::max(claimed_low, 0.0)) + slack)
    r.integrity.set("clock_gain", check_status::fail,
                    strprintf("the time of record claims %.1f us less per launch than the baseline, the supervisor's own "
                              "clock around the samples shows %.1f us: the reported times are not what happened",
                              claimed / 1e3, (claimed - hidden) / 1e3), data);
  else
    r.integrity.set("clock_gain", check_status::pass,
                    claimed > 0 ? "the supervisor's clock shows the gain, as far as it resolves it"
                                : "no gain claimed over the baseline", data);
}

// cpu_floor (host clock): a thread cannot run longer than the wall time that passes, so a sample
// took at least the CPU time its busiest live thread gained during it (or the tree's, spread over
// every online CPU: threads that exited meanwhile), whatever the load — time-sharing stretches
// the supervisor's clock around a sample (clock_gain's weakness: wake-up latencies on both sides
// of the channel) but not a thread's CPU time. The harness's own per-sample work outside its
// timer (output copy, channel) is allowed at the baseline's figure. A relay scaling the reported
// times down leaves its kernel thread's CPU above the claim. Not for GPU timers: their host
// thread spins or sleeps while it waits for the GPU, and host work between launches is honest
// work outside a GPU span.
void check_cpu_floor(timing_result& r, const timing_result& base) {
  if (!timed_by_host_clock(r) || !timed_by_host_clock(base)) return;
  // Per process the given percentile of its samples' excess (CPU floor − time of record, per
  // launch), the median over the processes; NaN when no process read its threads.
  auto excess = [](const timing_result& t, double pct) {
    std::vector<double> v;
    for (const auto& p : t.processes)
      if (!p.cpu_floor_excess.empty()) v.push_back(percentile(p.cpu_floor_excess, pct));
    return v.empty() ? std::nan("") : median(v);
  };
  // Matched upper quartiles: the baseline's excess is its channel work less whatever its own timed
  // region was stretched beyond its CPU time (preemption inside the timer); a short candidate's
  // hardly is. An upper quantile takes the baseline's samples where that stretch is smallest, and
  // the same quantile of the candidate's moves with the same load on the channel work (the upper
  // tail of both grew under load). Hiding work on any share of the samples raises it. Measured on
  // golden adversarial_host (2-3 compares at once, 2-core VM, 38 compares): launches that do
  // nothing up to 125 us above the baseline's, honest kernels 54 us, shave 279 us or more; the
  // slack's last term is for that stretch, longer the longer the baseline's launch.
  const double m = excess(r, 75), a = excess(base, 75), m50 = excess(r, 50), b = excess(base, 50);
  if (std::isnan(m) || std::isnan(a)) {
    r.integrity.set("cpu_floor", check_status::skipped, "no per-thread CPU times were read");
    return;
  }
  const double allowed = std::max(a, 0.0);
  const bool same_harness = same_harness_as(r, base);
  const double slack = 20000 + 0.1 * allowed + 0.1 * r.stats.median + 0.15 * base.stats.median +
                       (same_harness ? 0 : allowed + 100000);
  check_data data = {{"excess_p75_ns", m}, {"baseline_excess_p75_ns", a}, {"excess_median_ns", m50},
               {"baseline_excess_median_ns", b}, {"record_median_ns", r.stats.median},
               {"baseline_record_median_ns", base.stats.median}, {"slack_ns", slack},
               {"same_harness", same_harness}, {"online_cpus", online_cpus()}};
  // Against the allowance, not the baseline's figure itself: a baseline whose launch waits off the
  // CPU (sleeps, I/O) has a negative figure, and a candidate that waits less is not hiding work
  // (golden compare_workers: launches sleeping 4 against 1.5 ms).
  if (m - allowed > slack)
    r.integrity.set("cpu_floor", check_status::fail,
                    strprintf("the harness's busiest thread used %.1f us of CPU per launch beyond the time of record "
                              "(75th percentile of the samples; the baseline's harness %.1f us; the claim %.1f us): "
                              "the reported times are shorter than the work that ran",
                              m / 1e3, a / 1e3, r.stats.median / 1e3),
                    data);
  else
    r.integrity.set("cpu_floor", check_status::pass,
                    "the time of record covers the CPU time the harness's busiest thread used in each sample (beyond "
                    "the baseline's own per-sample work)",
                    data);
}

}  // namespace

namespace {

// gpu_processes, within each harness's tree: while the tree was stopped for a checked sample, at
// most one of its processes held a GPU. A second one (a helper sharing the buffers through CUDA
// IPC) computes where no window, record or clock of ours sees it: rejected, not warned.
bool check_tree_gpu_holders(timing_result& r) {
  for (const auto& p : r.processes) {
    if (p.findings.extra_gpu_holders == 0) continue;
    r.integrity.set("gpu_processes", check_status::fail,
                    strprintf("process %d: %zu process(es) besides the harness held a GPU while its tree was stopped for "
                              "a checked sample (%s; of its tree, or magpie's descendants outside every harness tree): GPU "
                              "work outside the measured process",
                              p.index, p.findings.extra_gpu_holders, p.findings.gpu_holders.c_str()),
                    {{"process", p.index}, {"holders", p.findings.gpu_holders}});
    return true;
  }
  return false;
}

// gpu_processes: every compute process on the GPUs, right after the timing stage, must be magpie
// itself or one of its descendants (a harness); another process holding a GPU may be a helper of
// a candidate's doing work outside its process tree (CUDA IPC), or a neighbour disturbing the
// timings. A warning: it is not attributable to one implementation.
void check_gpu_processes(std::vector<timing_result>& results) {
  bool gpu = false;
  for (const auto& r : results) gpu = gpu || (!timed_by_host_clock(r) && !r.processes.empty());
  if (!gpu) return;
  gpu::gpu_processes g = gpu::list_gpu_compute_processes();
  check_status st = check_status::skipped;
  std::string detail = g.why;
  std::vector<check_data> foreign;
  if (g.available) {
    for (const auto& p : g.processes)
      if (!gpu::is_own_descendant(p.pid))
        foreign.push_back({{"device", p.device}, {"pid", p.pid}, {"name", p.name}, {"used_bytes", p.used_bytes}});
    st = foreign.empty() ? check_status::pass : check_status::warn;
    detail = foreign.empty() ? "no process outside magpie's harnesses holds a GPU (NVML)"
                             : strprintf("%zu process(es) outside magpie's harnesses hold a GPU (NVML): work may run "
                                         "outside the measured process trees", foreign.size());
  }
  for (auto& r : results) {
    if (r.processes.empty() || timed_by_host_clock(r)) continue;
    if (check_tree_gpu_holders(r)) continue;
    size_t snaps = 0;
    for (const auto& p : r.processes) snaps += p.findings.gpu_snapshots;
    r.integrity.set("gpu_processes", st,
                    snaps ? detail + strprintf("; %zu snapshots with the harness stopped: at most one GPU process per tree", snaps) : detail,
                    {{"foreign", foreign}, {"tree_snapshots", snaps}});
  }
}

}  // namespace

void check_timing_integrity(std::vector<timing_result>& results, int baseline, const timing_policy& p) {
  (void)p;
  check_gpu_processes(results);
  for (size_t i = 0; i < results.size(); ++i) {
    timing_result& r = results[i];
    if (r.processes.empty()) continue;
    check_outputs(r);
    if (r.source == timing_source::cupti) check_cupti(r);
    else check_bracket(r);
    const bool vs_base = baseline >= 0 && static_cast<size_t>(baseline) != i && results[static_cast<size_t>(baseline)].ok;
    check_reuse(r, vs_base ? &results[static_cast<size_t>(baseline)] : nullptr);
    check_gap_cpu(r, vs_base ? &results[static_cast<size_t>(baseline)] : nullptr);
    if (vs_base) {
      check_input_generation(r, results[static_cast<size_t>(baseline)]);
      check_gain(r, results[static_cast<size_t>(baseline)]);
      check_cpu_floor(r, results[static_cast<size_t>(baseline)]);
      check_fresh_overhead(r, results[static_cast<size_t>(baseline)]);
    }
    std::vector<double> pm;
    for (const auto& pr : r.processes) pm.push_back(pr.median_ns);
    r.integrity.set("processes", check_status::pass, strprintf("measured in %zu separate processes", r.processes.size()),
                    {{"median_ns", pm}});
    // Every harness process starts through child_process::spawn with candidate_sandbox; whether
    // the sandbox could be made is one decision per magpie process (core/sandbox.h).
    std::string off = sandbox_unavailable_reason();
    if (off.empty())
      r.integrity.set("sandbox", check_status::pass,
                      "every harness process ran in its own user, mount, PID, network and IPC namespaces");
    else
      r.integrity.set("sandbox", check_status::warn, "harness processes ran without the sandbox: " + off,
                      {{"reason", off}});
  }
}

}  // namespace magpie::kernel
