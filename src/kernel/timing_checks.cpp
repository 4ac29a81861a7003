// The timing stage's integrity checks (docs/harness-protocol.md, "Integrity"): probes of
// checked samples, the CUPTI record channel, GPU-work attribution, the supervisor's clock
// bracket, input reuse and input-generation work; and the report form of timing results.
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "kernel/timing.h"

namespace magpie::kernel {

json check_outcome::to_json() const {
  return {{"sample", sample_id}, {"process", process}, {"passed", passed}, {"compared_with_reference", compared},
          {"elements_probed", probed}, {"failure", failure.empty() ? json(nullptr) : json(failure)}};
}

json process_result::to_json() const {
  return {{"process", index}, {"samples", samples_ns.size()}, {"median_ns", median_ns},
          {"harness_median_ns", harness_median_ns}, {"ping_rtt_median_ns", rtt_median_ns},
          {"bracket_minus_rtt_median_ns", bracket_excess_ns}, {"observed_median_ns", observed_ns},
          {"harness_over_bracket", harness_over_bracket},
          {"channel", findings.to_json()}};
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
  json procs = json::array(), cks = json::array();
  for (const auto& pr : processes) procs.push_back(pr.to_json());
  for (const auto& c : checks) cks.push_back(c.to_json());
  j["processes"] = procs;
  j["checked_samples"] = cks;
  j["harness"] = ready;
  j["cupti_kernels"] = cupti_kernels.is_null() ? json::array() : cupti_kernels;
  j["warnings"] = warnings;
  j["sampling"] = sampling.to_json();
  return j;
}

namespace {

bool decode_hex(const std::string& hex, std::vector<uint8_t>* out) {
  if (hex.size() % 2) return false;
  out->resize(hex.size() / 2);
  for (size_t i = 0; i < out->size(); ++i) {
    int v = 0;
    for (int k = 0; k < 2; ++k) {
      char c = hex[2 * i + static_cast<size_t>(k)];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + d;
    }
    (*out)[i] = static_cast<uint8_t>(v);
  }
  return true;
}

// The probed values of output `o` as a tensor of shape {indices}; "" or why not.
std::string probed_tensor(const json& meta, const json& values, size_t o, uint64_t probe_seed, size_t count,
                          tensor* got, std::vector<size_t>* idx) {
  dtype t;
  if (!meta.is_object() || !parse_dtype(json_string(meta, "dtype"), &t)) return "output " + std::to_string(o) + ": unknown dtype";
  size_t numel = 1;
  if (meta.contains("shape") && meta["shape"].is_array())
    for (const auto& d : meta["shape"]) numel *= static_cast<size_t>(std::max<int64_t>(json_as_int(d).value_or(0), 0));
  *idx = probe_indices(probe_seed, count, numel);
  got->type = t;
  got->shape = {static_cast<int64_t>(idx->size())};
  if (o >= values.size() || !decode_hex(json_string(values[o], "hex"), &got->data) ||
      got->data.size() != idx->size() * dtype_size(t))
    return "output " + json_string(meta, "name") + ": the probe reply has the wrong number of bytes";
  return "";
}

}  // namespace

check_outcome judge_probe(const held_reference* ref, uint64_t seed, const json& outputs, const json& values,
                          uint64_t probe_seed, size_t count, const correctness_policy& p) {
  check_outcome c;
  const json& vals = values["outputs"];
  const held_trial* rt = ref ? ref->check_for_seed(seed) : nullptr;
  c.compared = rt != nullptr;
  if (rt && rt->outputs.size() != outputs.size()) {
    c.passed = false;
    c.failure = strprintf("%zu outputs, the reference has %zu", outputs.size(), rt->outputs.size());
    return c;
  }
  for (size_t o = 0; o < outputs.size() && c.passed; ++o) {
    tensor got;
    std::vector<size_t> idx;
    std::string name = json_string(outputs[o], "name");
    std::string why = probed_tensor(outputs[o], vals, o, probe_seed, count, &got, &idx);
    c.probed += idx.size();
    if (why.empty() && rt) {
      const tensor& r = rt->outputs[o];
      std::vector<int64_t> shape;
      for (const auto& d : json_value(outputs[o], "shape")) shape.push_back(json_as_int(d).value_or(-1));
      if (shape != r.shape || got.type != r.type) {
        why = strprintf("output %s: shape %s dtype %s, the reference has shape %s dtype %s", name.c_str(),
                        shape_to_string(shape).c_str(), dtype_name(got.type), shape_to_string(r.shape).c_str(),
                        dtype_name(r.type));
      } else {
        tensor want = gather(r, idx);
        if (p.check_degenerate && idx.size() >= 2) why = degenerate_reason(name, want, got);
        tensor_diff d = compare_tensor(name, want, got, tolerance_for(r.type, p));
        if (why.empty() && (d.mismatches || d.nan_mismatch))
          why = strprintf("output %s: %zu of %zu probed elements differ from the reference's outputs for the same "
                          "inputs (first at probe %lld: reference %.6g, candidate %.6g)",
                          name.c_str(), d.mismatches + d.nan_mismatch, d.numel, static_cast<long long>(d.first_bad),
                          d.first_ref, d.first_got);
      }
    } else if (why.empty()) {
      // No reference outputs for this seed: at least the launch must have written its outputs.
      size_t poisoned = 0, es = dtype_size(got.type);
      for (size_t i = 0; i < idx.size(); ++i)
        poisoned += std::all_of(got.data.begin() + static_cast<std::ptrdiff_t>(i * es),
                                got.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * es), [](uint8_t b) { return b == 0xFF; });
      if (!idx.empty() && poisoned == idx.size()) why = "output " + name + " still holds the poison pattern: the launch did not write it";
    }
    if (!why.empty()) {
      c.passed = false;
      c.failure = why;
    }
  }
  return c;
}

namespace {

double med(const std::vector<double>& v) { return v.empty() ? 0 : median(v); }

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
                  strprintf("%zu timed samples on fresh secret inputs, outputs re-poisoned before each: %zu probed "
                            "against the reference's outputs, all matched",
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
  json data = {{"records", r.cupti_records}, {"bad_macs", r.cupti_bad_macs}, {"sequence_errors", r.cupti_sequence_errors},
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
  json g = {{"samples_without_gpu_work", no_gpu}, {"stray_ops", r.stray_ops}, {"stray_gpu_ns", r.stray_gpu_ns},
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
  json data = json::array();
  std::string fail;
  for (const auto& p : r.processes) {
    data.push_back({{"process", p.index}, {"harness_median_ns", p.harness_median_ns},
                    {"bracket_minus_rtt_ns", p.bracket_excess_ns}, {"observed_ns", p.observed_ns},
                    {"over_bracket", p.harness_over_bracket}});
    if (p.harness_over_bracket * 10 > p.samples_ns.size() + 10)
      fail = strprintf("process %d: the harness reported more time than passed on the supervisor's clock in %zu samples",
                       p.index, p.harness_over_bracket);
    else if (r.source == "host_clock" && p.observed_ns > 3 * p.harness_median_ns + 200000)
      fail = strprintf("process %d: the harness reported %.1f us per sample, but its process used %.1f us of CPU "
                       "within the supervisor's clock around each sample",
                       p.index, p.harness_median_ns / 1e3, p.observed_ns / 1e3);
  }
  if (fail.empty() && r.gpu_ops_under_host_timer)
    fail = strprintf("the harness times on the CPU, but CUPTI recorded %zu GPU operations in its process: GPU work "
                     "would go untimed", r.gpu_ops_under_host_timer);
  r.integrity.set("clock_bracket", fail.empty() ? check_status::pass : check_status::fail,
                  fail.empty() ? "the harness's times agree with the supervisor's clock around each sample" : fail, data);
  if (r.source == "host_clock")
    r.integrity.set("timer", check_status::pass, "host clock in the harness, bounded by the supervisor's clock");
  else
    r.integrity.set("timer", check_status::warn, "timer of record inside the candidate's process (CUPTI unavailable): 'faster' "
                                     "verdicts are not certified");
}

void check_reuse(timing_result& r) {
  if (r.fresh_ns.size() < 3 || r.reused_ns.size() < 8) {
    r.integrity.set("input_reuse", check_status::skipped, "too few samples to compare fresh and repeated inputs");
    return;
  }
  double f = med(r.fresh_ns), u = med(r.reused_ns), fmin = *std::min_element(r.fresh_ns.begin(), r.fresh_ns.end());
  double u75 = percentile(r.reused_ns, 75);
  json data = {{"fresh_median_ns", f}, {"fresh_min_ns", fmin}, {"repeated_median_ns", u}, {"repeated_p75_ns", u75},
               {"fresh", r.fresh_ns.size()}, {"repeated", r.reused_ns.size()}};
  // A cache makes every sample on fresh inputs slower than nearly every sample on repeated
  // ones; honest kernels overlap (noise is noise for both).
  if (fmin > 1.5 * u75 + 200 && f > 2 * u)
    r.integrity.set("input_reuse", check_status::fail, strprintf("samples on fresh inputs take %.2fx as long as samples that repeat "
                                                     "inputs (%.2f vs %.2f us): results are cached between calls",
                                                     f / u, f / 1e3, u / 1e3), data);
  else
    r.integrity.set("input_reuse", check_status::pass, "fresh and repeated inputs take the same time", data);
}

void check_input_generation(timing_result& r, const timing_result& base) {
  double mine = med(r.inputs_bracket_ns), theirs = med(base.inputs_bracket_ns);
  json data = {{"inputs_median_ns", mine}, {"baseline_inputs_median_ns", theirs},
               {"kernels_before_checked_sample", r.kernels_per_checked_gap},
               {"baseline_kernels_before_checked_sample", base.kernels_per_checked_gap}};
  if (r.source == "cupti" && base.source == "cupti" && r.kernels_per_checked_gap > base.kernels_per_checked_gap + 0.5)
    r.integrity.set("input_generation", check_status::fail, strprintf("%.1f GPU kernels launched between samples before each checked "
                                                          "sample, the baseline %.1f: work done while inputs are "
                                                          "generated is not timed",
                                                          r.kernels_per_checked_gap, base.kernels_per_checked_gap), data);
  else if (!r.inputs_bracket_ns.empty() && !base.inputs_bracket_ns.empty() && mine > 3 * theirs + 5e6)
    r.integrity.set("input_generation", check_status::fail, strprintf("input generation took %.2f ms, %.2f ms for the baseline (same "
                                                          "generator): work done there is not timed",
                                                          mine / 1e6, theirs / 1e6), data);
  else
    r.integrity.set("input_generation", check_status::pass, "input generation costs what it costs the baseline", data);
}

}  // namespace

void check_timing_integrity(std::vector<timing_result>& results, int baseline, const timing_policy& p) {
  (void)p;
  for (size_t i = 0; i < results.size(); ++i) {
    timing_result& r = results[i];
    if (r.processes.empty()) continue;
    check_outputs(r);
    if (r.source == "cupti") check_cupti(r);
    else check_bracket(r);
    check_reuse(r);
    if (baseline >= 0 && static_cast<size_t>(baseline) != i && results[static_cast<size_t>(baseline)].ok)
      check_input_generation(r, results[static_cast<size_t>(baseline)]);
    json pm = json::array();
    for (const auto& pr : r.processes) pm.push_back(pr.median_ns);
    r.integrity.set("processes", check_status::pass, strprintf("measured in %zu separate processes", r.processes.size()),
                    {{"median_ns", pm}});
  }
}

}  // namespace magpie::kernel
