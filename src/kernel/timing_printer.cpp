// JSON of timing results (kernel/timing_printer.h).
#include "kernel/timing_printer.h"

#include "core/stats_printer.h"
#include "kernel/cupti_printer.h"
#include "kernel/policy_printer.h"

namespace magpie::kernel {

json check_outcome_json(const check_outcome& c) {
  return {{"sample", c.sample_id}, {"process", c.process}, {"passed", c.passed}, {"compared_with_reference", c.compared},
          {"elements_compared", c.elements}, {"failure", c.failure.empty() ? json(nullptr) : json(c.failure)}};
}

json channel_findings_json(const channel_findings& f) {
  return {{"samples_without_gpu_work", f.samples_without_gpu}, {"marks_outside_bracket", f.marks_outside_bracket},
          {"ops_outside_window", f.ops_outside_window}, {"unexpected_marks", f.unexpected_marks},
          {"gpu_snapshots", f.gpu_snapshots}, {"extra_gpu_holders", f.extra_gpu_holders}, {"gpu_holders", f.gpu_holders}};
}

json supervisor_cost_json(const supervisor_cost& c) {
  auto per = [&](double ns) { return c.samples ? ns / 1e3 / static_cast<double>(c.samples) : 0.0; };
  return {{"samples", c.samples},
          {"commands", c.commands},
          {"per_sample_us",
           {{"wall", per(c.samples_wall_ns)},
            {"commands", per(c.commands_ns)},
            {"proc_accounting", per(c.proc_ns)},
            {"cupti", per(c.cupti_ns)},
            {"nvml", per(c.nvml_ns)},
            {"outputs", per(c.outputs_ns)}}}};
}

json process_result_json(const process_result& pr) {
  return {{"process", pr.index}, {"samples", pr.samples_ns.size()}, {"median_ns", pr.median_ns},
          {"harness_median_ns", pr.harness_median_ns}, {"ping_rtt_median_ns", pr.rtt_median_ns},
          {"bracket_minus_rtt_median_ns", pr.bracket_excess_ns}, {"observed_median_ns", pr.observed_ns},
          {"unclaimed_p10_ns", pr.unclaimed_ns},
          {"cpu_floor_excess_median_ns", std::isnan(pr.cpu_floor_excess_ns) ? json(nullptr) : json(pr.cpu_floor_excess_ns)},
          {"harness_over_bracket", pr.harness_over_bracket},
          {"channel", channel_findings_json(pr.findings)}, {"supervisor_cost", supervisor_cost_json(pr.cost)}};
}

json sampling_record_json(const sampling_record& s) {
  return {{"batch", s.batch},       {"batch_why", s.batch_why}, {"pilot_processes", s.pilot}, {"planned_processes", s.planned},
          {"used_processes", s.used}, {"pilot_sd", s.pilot_sd}, {"pilot_median_ns", s.pilot_median_ns}, {"why", s.why}};
}

json ready_line_json(const std::optional<ready_line>& r) {
  if (!r) return nullptr;
  auto j = parse_json(r->echo, "ready line");  // our own compact dump of an object: it parses
  return j.ok() ? *j : json::object();
}

json timing_result_json(const timing_result& r, const timing_policy& p) {
  json j;
  j["success"] = r.ok;
  j["error"] = r.error.empty() ? json(nullptr) : json(r.error);
  j["policy"] = timing_policy_json(p);
  j["source"] = r.source;
  j["stop_reason"] = r.stop_reason;
  j["samples"] = r.samples_ns.size();
  j["wall_seconds"] = r.wall_s;
  j["stats_ns"] = summary_to_json(r.stats);
  j["harness_stats_ns"] = summary_to_json(r.harness_stats);
  if (r.source == timing_source::cupti && r.harness_stats.median > 0 && r.stats.median > 0)
    j["cross_check"] = {{"harness_median_ns", r.harness_stats.median}, {"cupti_median_ns", r.stats.median},
                        {"harness_over_cupti", r.harness_stats.median / r.stats.median}};
  json procs = json::array(), cks = json::array();
  for (const auto& pr : r.processes) procs.push_back(process_result_json(pr));
  for (const auto& c : r.checks) cks.push_back(check_outcome_json(c));
  j["processes"] = procs;
  j["checked_samples"] = cks;
  j["harness"] = ready_line_json(r.ready);
  j["cupti_kernels"] = cupti_kernels_json(r.cupti_kernels);
  j["warnings"] = r.warnings;
  j["sampling"] = sampling_record_json(r.sampling);
  return j;
}

namespace {

json first_rounds_json(const round_order& o) {
  json rounds = json::array();
  for (const auto& names : o.first_rounds) rounds.push_back(names);
  return rounds;
}

json round_order_json(const round_order& o) {
  return {{"policy", o.policy}, {"processes_per_kernel", o.processes_per_kernel}, {"seed", o.seed},
          {"checked_rounds", o.checked_rounds}, {"first_rounds", first_rounds_json(o)}};
}

json device_order_json(const device_order& d) {
  json kernels = json::array();
  for (const auto& k : d.kernels)
    kernels.push_back({{"kernel_id", k.kernel_id}, {"ok", k.ok}, {"samples", k.samples},
                       {"median_ns", k.median_ns ? json(*k.median_ns) : json(nullptr)}, {"stop_reason", k.stop_reason},
                       {"speedup_vs_baseline", k.speedup_vs_baseline ? json(*k.speedup_vs_baseline) : json(nullptr)}});
  return {{"device", d.device}, {"processes", d.processes}, {"order", round_order_json(d.order)}, {"kernels", kernels}};
}

}  // namespace

json timing_order_json(const timing_order& o) {
  if (!o.by_device) return round_order_json(o);
  json j = {{"policy", o.policy}, {"processes_per_kernel", o.processes_per_kernel}, {"seed", o.seed}, {"devices", json::array()}};
  for (const auto& d : o.devices) j["devices"].push_back(device_order_json(d));
  if (o.rounds) {
    j["first_rounds"] = first_rounds_json(o);
    j["checked_rounds"] = o.checked_rounds;
  }
  return j;
}

}  // namespace magpie::kernel
