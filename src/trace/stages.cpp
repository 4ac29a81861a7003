#include "trace/stages.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/csv.h"
#include "core/strings.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

void finish_one(const trace_model& m, step_info& s) {
  std::sort(s.gpu.begin(), s.gpu.end(), [&](uint32_t a, uint32_t b) { return m.events[a].ts < m.events[b].ts; });
  std::vector<interval> iv;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (uint32_t g : s.gpu) {
    iv.push_back({m.events[g].ts, m.events[g].end()});
    lo = std::min(lo, m.events[g].ts);
    hi = std::max(hi, m.events[g].end());
  }
  s.gpu_busy = busy_time(iv);
  s.gpu_duration = s.gpu.empty() ? 0 : hi - lo;
}

/// Index of the step whose CPU range holds `ts` (ranges sorted, non-overlapping), or npos.
size_t step_at(const std::vector<step_info>& steps, int64_t ts) {
  auto it = std::upper_bound(steps.begin(), steps.end(), ts, [](int64_t t, const step_info& s) { return t < s.cpu_ts; });
  if (it == steps.begin()) return SIZE_MAX;
  --it;
  return ts < it->cpu_end ? static_cast<size_t>(it - steps.begin()) : SIZE_MAX;
}

}  // namespace

void assign_gpu_by_launch(const trace_model& m, std::vector<step_info>& steps) {
  for (uint32_t g : m.gpu) {
    const trace_event& e = m.events[g];
    int64_t t = e.launcher != k_none ? m.events[e.launcher].ts : (e.op != k_none ? m.events[e.op].ts : INT64_MIN);
    if (t == INT64_MIN) continue;
    size_t k = step_at(steps, t);
    if (k != SIZE_MAX) steps[k].gpu.push_back(g);
  }
}

void finish_steps(const trace_model& m, std::vector<step_info>& steps) {
  for (auto& s : steps) finish_one(m, s);
}

namespace {

void fill_from_gpu_annotations(const trace_model& m, std::vector<step_info>& steps) {
  std::unordered_map<std::string, std::vector<uint32_t>> by_name;
  for (uint32_t i : m.gpu_annotations) by_name[m.name(m.events[i])].push_back(i);
  std::unordered_map<std::string, size_t> seen;
  for (auto& s : steps) {
    size_t k = seen[s.name]++;
    if (!s.gpu.empty()) continue;
    auto it = by_name.find(s.name);
    if (it == by_name.end() || k >= it->second.size()) continue;
    const trace_event& a = m.events[it->second[k]];
    for (uint32_t g : m.gpu)
      if (m.events[g].ts >= a.ts && m.events[g].ts < a.end()) s.gpu.push_back(g);
  }
}

}  // namespace

stage_split split_steps(const trace_model& m) {
  std::vector<step_span> spans = step_spans(m);
  if (spans.empty()) return infer_steps(m);
  stage_split out;
  out.source = "annotations";
  out.phase_method = "annotations";
  for (size_t k = 0; k < spans.size(); ++k) {
    step_info s;
    s.idx = k;
    s.name = m.name(m.events[spans[k].event]);
    s.ann = spans[k].ann;
    s.phase = spans[k].ann.phase();
    s.batch_size = spans[k].ann.batch_size;
    s.num_requests = spans[k].ann.num_requests;
    s.cpu_ts = spans[k].ts;
    s.cpu_end = spans[k].end;
    out.steps.push_back(std::move(s));
  }
  assign_gpu_by_launch(m, out.steps);
  fill_from_gpu_annotations(m, out.steps);
  finish_steps(m, out.steps);
  return out;
}

step_phase stage_phase(inference_stage s) {
  switch (s) {
    case inference_stage::prefilldecode: return step_phase::prefilldecode;
    case inference_stage::decode: return step_phase::decode_only;
    case inference_stage::prefill: return step_phase::prefill_only;
  }
  return step_phase::prefilldecode;
}

phase_pick pick_step(const stage_split& s, inference_stage stage, std::optional<int64_t> conc) {
  phase_pick p;
  p.stage = stage;
  const step_phase want = stage_phase(stage);
  p.label = step_phase_name(want);
  const std::string phase = p.label;
  if (!s.undecided.empty()) {
    p.selection_reason = "prefill and decode cannot be told apart: " + s.undecided;
    return p;
  }
  std::vector<size_t> cands;
  for (size_t i = 0; i < s.steps.size(); ++i)
    if (s.steps[i].phase == want && !s.steps[i].gpu.empty()) cands.push_back(i);
  if (cands.empty()) {
    p.selection_reason = "no " + phase + " step with GPU work";
    return p;
  }
  int64_t max_bs = 0;
  for (size_t i : cands) max_bs = std::max(max_bs, s.steps[i].batch_size);
  std::vector<size_t> best;
  for (size_t i : cands)
    if (s.steps[i].batch_size == max_bs) best.push_back(i);
  p.selection_reason = strprintf("largest batch (%lld tokens) among %zu %s steps", static_cast<long long>(max_bs),
                                 cands.size(), phase.c_str());
  if (stage == inference_stage::decode && conc && best.size() > 1) {
    int64_t d = INT64_MAX;
    for (size_t i : best) d = std::min(d, static_cast<int64_t>(std::llabs(s.steps[i].num_requests - *conc)));
    std::vector<size_t> near;
    for (size_t i : best)
      if (static_cast<int64_t>(std::llabs(s.steps[i].num_requests - *conc)) == d) near.push_back(i);
    best = near;
    p.selection_reason += strprintf(", requests closest to CONC=%lld", static_cast<long long>(*conc));
  }
  if (best.size() > 1) {
    std::stable_sort(best.begin(), best.end(), [&](size_t a, size_t b) { return s.steps[a].gpu_busy < s.steps[b].gpu_busy; });
    p.selection_reason += strprintf(", median GPU busy time of %zu ties", best.size());
  }
  p.step = best[(best.size() - 1) / 2];
  return p;
}

std::string execution_details_csv(const stage_split& s) {
  std::string out =
      "idx,step_name,phase,batch_size,num_requests,num_gpu_events,gpu_duration_us,gpu_busy_duration_us,"
      "phase_num_prefill,phase_num_prefilldecode,phase_num_decode,start_ts_us,end_ts_us\n";
  for (const auto& st : s.steps) {
    out += strprintf("%zu,%s,%s,%lld,%lld,%zu,%.2f,%.2f,%d,%d,%d,%.3f,%.3f\n", st.idx, csv_escape(st.name).c_str(),
                     step_phase_name(st.phase), static_cast<long long>(st.batch_size), static_cast<long long>(st.num_requests),
                     st.gpu.size(), static_cast<double>(st.gpu_duration) / 1000.0,
                     static_cast<double>(st.gpu_busy) / 1000.0, st.phase == step_phase::prefill_only ? 1 : 0,
                     st.phase == step_phase::prefilldecode ? 1 : 0, st.phase == step_phase::decode_only ? 1 : 0,
                     static_cast<double>(st.cpu_ts) / 1000.0, static_cast<double>(st.cpu_end) / 1000.0);
  }
  return out;
}

}  // namespace magpie::trace
