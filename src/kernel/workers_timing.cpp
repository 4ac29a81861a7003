// Timing over several GPUs: one group of harness processes per GPU, sampled in parallel
// (kernel/workers.h explains why the speedups stay within one GPU).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>

#include "core/log.h"
#include "core/progress.h"
#include "core/strings.h"
#include "kernel/workers.h"

namespace magpie::kernel {

namespace {

// The most telling stop reason over the groups: an error, else a budget that ran out
// anywhere, else the first group's reason.
std::string merged_stop_reason(const std::vector<const timing_result*>& parts) {
  for (const char* worst : {"error", "time_budget"})
    for (const auto* p : parts)
      if (p->stop_reason == worst) return worst;
  for (const auto* p : parts)
    if (!p->stop_reason.empty()) return p->stop_reason;
  return "";
}

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

timing_result merge_timing_results(const std::vector<const timing_result*>& parts, const std::vector<std::string>& devices) {
  timing_result r;
  if (parts.empty()) return r;
  const timing_result& first = *parts.front();
  r.ok = true;
  r.source = first.source;
  r.ready = first.ready;
  r.cupti_kernels = first.cupti_kernels;
  r.cupti_hello = true;
  for (size_t g = 0; g < parts.size(); ++g) {
    const timing_result& p = *parts[g];
    const std::string dev = g < devices.size() ? devices[g] : std::to_string(g);
    if (!p.ok) {
      r.ok = false;
      if (r.error.empty()) r.error = "GPU " + dev + ": " + p.error;
    }
    append(r.samples_ns, p.samples_ns);
    append(r.harness_samples_ns, p.harness_samples_ns);
    append(r.processes, p.processes);
    append(r.checks, p.checks);
    append(r.fresh_ns, p.fresh_ns);
    append(r.fresh_extra_ns, p.fresh_extra_ns);
    append(r.pairs, p.pairs);
    append(r.reused_ns, p.reused_ns);
    append(r.inputs_bracket_ns, p.inputs_bracket_ns);
    append(r.inputs_cpu_ns, p.inputs_cpu_ns);
    append(r.gap_cpu_samples_ns, p.gap_cpu_samples_ns);
    r.gpu_ns_per_fresh_gap = std::max(r.gpu_ns_per_fresh_gap, p.gpu_ns_per_fresh_gap);
    for (const auto& w : p.warnings) r.warnings.push_back(parts.size() > 1 ? "GPU " + dev + ": " + w : w);
    r.wall_s = std::max(r.wall_s, p.wall_s);
    r.kernels_per_checked_gap = std::max(r.kernels_per_checked_gap, p.kernels_per_checked_gap);
    r.stray_ops += p.stray_ops;
    r.stray_gpu_ns += p.stray_gpu_ns;
    r.unmatched_ops += p.unmatched_ops;
    r.gpu_ops_under_host_timer += p.gpu_ops_under_host_timer;
    r.cupti_bad_macs += p.cupti_bad_macs;
    r.cupti_sequence_errors += p.cupti_sequence_errors;
    r.cupti_records += p.cupti_records;
    r.cupti_hello = r.cupti_hello && p.cupti_hello;
  }
  std::sort(r.processes.begin(), r.processes.end(), [](const process_result& a, const process_result& b) { return a.index < b.index; });
  r.stop_reason = merged_stop_reason(parts);
  r.sampling = first.sampling;
  r.sampling.used = static_cast<int>(r.processes.size());
  r.stats = summarize(r.samples_ns);
  r.harness_stats = summarize(r.harness_samples_ns);
  if (r.ok && r.samples_ns.empty()) {
    r.ok = false;
    r.error = "no sample was timed";
  }
  return r;
}

namespace {

// Copies of the kernels whose processes run on one GPU: any binding from an earlier stage is
// replaced by the group's.
std::vector<prepared_kernel> bound_copies(const measure_request& req, const env_list& binding) {
  std::vector<prepared_kernel> out;
  for (const prepared_kernel* k : req.kernels) {
    prepared_kernel c = *k;
    c.env.erase(std::remove_if(c.env.begin(), c.env.end(),
                               [&](const auto& kv) {
                                 return std::any_of(binding.begin(), binding.end(), [&](const auto& b) { return b.first == kv.first; });
                               }),
                c.env.end());
    append(c.env, binding);
    out.push_back(std::move(c));
  }
  return out;
}

double mean_log_median(const timing_result& t) {
  double acc = 0;
  size_t n = 0;
  for (const auto& p : t.processes)
    if (p.median_ns > 0) {
      acc += std::log(p.median_ns);
      ++n;
    }
  return n ? acc / static_cast<double>(n) : std::nan("");
}

// What each GPU measured: its processes, the order of its rounds, per kernel the median of its
// samples and the speedup against the baseline's processes on the same GPU.
device_order device_order_of(const std::string& dev, int first, int count, const measure_outcome& o, const measure_request& req,
                             int baseline) {
  device_order d;
  d.device = dev;
  for (int p = first; p < first + count; ++p) d.processes.push_back(p);
  d.order = o.order;
  const double base = baseline >= 0 && o.results[static_cast<size_t>(baseline)].ok
                          ? mean_log_median(o.results[static_cast<size_t>(baseline)]) : std::nan("");
  for (size_t k = 0; k < o.results.size(); ++k) {
    const timing_result& t = o.results[k];
    double mine = t.ok ? mean_log_median(t) : std::nan("");
    device_order::kernel_row row;
    row.kernel_id = req.kernels[k]->spec.id;
    row.ok = t.ok;
    row.samples = t.samples_ns.size();
    if (t.ok) row.median_ns = t.stats.median;
    row.stop_reason = t.stop_reason;
    if (std::isfinite(base) && std::isfinite(mine)) row.speedup_vs_baseline = std::exp(base - mine);
    d.kernels.push_back(std::move(row));
  }
  return d;
}

// The main thread draws the budget as it passes while the groups sample.
void wait_with_progress(std::vector<std::future<measure_outcome>>& futures, double budget_s) {
  progress_bar bar("timing", static_cast<uint64_t>(budget_s * 10));
  const double t0 = monotonic_seconds();
  for (auto& f : futures)
    while (f.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready)
      bar.set(static_cast<uint64_t>(std::min(monotonic_seconds() - t0, budget_s) * 10));
  bar.finish();
}

}  // namespace

measure_outcome measure_on_devices(const measure_request& req, const worker_plan& plan, int baseline) {
  const int P = std::max(req.policy.processes, 1);
  const int G = std::max(1, std::min(plan.workers, P));
  std::vector<std::vector<prepared_kernel>> copies(static_cast<size_t>(G));
  std::vector<measure_request> reqs(static_cast<size_t>(G), req);
  std::vector<std::string> devices;
  std::vector<int> firsts;
  for (int g = 0; g < G; ++g) {
    const int first = g * P / G, count = (g + 1) * P / G - first;
    measure_request& r = reqs[static_cast<size_t>(g)];
    copies[static_cast<size_t>(g)] = bound_copies(req, plan.bind(g));
    r.kernels.clear();
    for (const auto& c : copies[static_cast<size_t>(g)]) r.kernels.push_back(&c);
    r.policy.processes = count;
    // The budget is shared: each group samples P/G processes for max_time/G, so every process
    // gets about the samples a sequential run gives it, in 1/G of the wall time.
    r.policy.max_time_s = req.policy.max_time_s / G;
    r.first_process = first;
    r.first_sample_id = 1 + (static_cast<uint64_t>(g) << 40);
    r.order_seed = splitmix64(req.order_seed + static_cast<uint64_t>(g)).next();
    r.progress = G == 1;
    r.plan = req.plan && G == 1;  // several groups keep the configured processes (identical split per GPU)
    devices.push_back(plan.pool.ids[static_cast<size_t>(g)]);
    firsts.push_back(first);
  }
  if (G > 1)
    MAGPIE_LOG_INFO("timing on %d GPUs in parallel (%s): each holds %s of the %d process(es) of every implementation", G,
                    join(devices, ",").c_str(), P % G ? "a share" : std::to_string(P / G).c_str(), P);
  std::vector<measure_outcome> outs;
  if (G == 1) {
    outs.push_back(measure_interleaved(reqs[0]));
  } else {
    std::vector<std::future<measure_outcome>> futures;
    for (const auto& r : reqs) futures.push_back(std::async(std::launch::async, [&r] { return measure_interleaved(r); }));
    wait_with_progress(futures, req.policy.max_time_s / G);
    for (auto& f : futures) outs.push_back(f.get());
  }
  measure_outcome out;
  out.order.policy = G > 1 ? "one group of processes per GPU, sampled in parallel; within a group, a seeded shuffle "
                             "of its processes each round"
                           : "seeded shuffle of every process each round";
  out.order.processes_per_kernel = P;
  out.order.seed = req.order_seed;
  out.order.by_device = true;
  for (int g = 0; g < G; ++g)
    out.order.devices.push_back(device_order_of(devices[static_cast<size_t>(g)], firsts[static_cast<size_t>(g)],
                                                reqs[static_cast<size_t>(g)].policy.processes, outs[static_cast<size_t>(g)],
                                                req, baseline));
  out.order.rounds = G == 1;  // keep the single-group keys where readers of the sequential report look for them
  if (G == 1) {
    out.order.first_rounds = outs[0].order.first_rounds;
    out.order.checked_rounds = outs[0].order.checked_rounds;
  }
  for (size_t k = 0; k < req.kernels.size(); ++k) {
    std::vector<const timing_result*> parts;
    for (const auto& o : outs) parts.push_back(&o.results[k]);
    out.results.push_back(merge_timing_results(parts, devices));
  }
  return out;
}

}  // namespace magpie::kernel
