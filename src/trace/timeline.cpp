#include "trace/timeline.h"

#include <algorithm>
#include <regex>

#include "core/strings.h"
#include "trace/util.h"

namespace magpie::trace {

std::vector<interval> merge_intervals(std::vector<interval> v) {
  std::sort(v.begin(), v.end(), [](const interval& a, const interval& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  std::vector<interval> out;
  for (const auto& i : v) {
    if (!out.empty() && i.begin <= out.back().end) out.back().end = std::max(out.back().end, i.end);
    else out.push_back(i);
  }
  return out;
}

std::vector<interval> subtract_intervals(const std::vector<interval>& a, const std::vector<interval>& b) {
  std::vector<interval> out;
  size_t j = 0;
  for (interval cur : a) {
    while (j < b.size() && b[j].end <= cur.begin) ++j;
    size_t k = j;
    while (k < b.size() && b[k].begin < cur.end) {
      if (b[k].begin > cur.begin) out.push_back({cur.begin, b[k].begin});
      cur.begin = std::max(cur.begin, b[k].end);
      if (cur.begin >= cur.end) break;
      ++k;
    }
    if (cur.begin < cur.end) out.push_back(cur);
  }
  return out;
}

int64_t total_length(const std::vector<interval>& merged) {
  int64_t t = 0;
  for (const auto& i : merged) t += i.end - i.begin;
  return t;
}

int64_t busy_time(std::vector<interval> v) { return total_length(merge_intervals(std::move(v))); }

gpu_class classify_gpu_event(const trace_model& m, const trace_event& e) {
  if (e.kind == ev_kind::memcpy) return gpu_class::memcpy;
  const std::string& n = m.name(e);
  if (e.kind == ev_kind::kernel) {
    static const std::regex k_rocm_copy(
        R"(^(MEMORY_COPY_(HOST_TO_DEVICE|DEVICE_TO_HOST|DEVICE_TO_DEVICE)|__amd_rocclr_copyBuffer(Rect)?(Aligned)?)(\.kd)?$)");
    if (starts_with(n, "MEMORY_COPY_") || starts_with(n, "__amd_rocclr_copyBuffer")) {
      if (std::regex_match(n, k_rocm_copy)) return gpu_class::memcpy;
    }
  }
  std::string low = lower_ascii(n);
  if (contains(low, "nccl") || contains(low, "rccl") || contains(low, "cross_device_reduce")) return gpu_class::communication;
  return gpu_class::computation;
}

std::string kernel_category(const trace_model& m, const trace_event& e) {
  if (e.kind == ev_kind::memcpy) return "memcpy";
  if (e.kind == ev_kind::memset) return "memset";
  gpu_class c = classify_gpu_event(m, e);
  if (c == gpu_class::communication) return "communication";
  if (c == gpu_class::memcpy) return "memcpy";
  const std::string& n = m.name(e);
  std::string low = lower_ascii(n);
  auto any = [&](std::initializer_list<const char*> keys) {
    for (const char* k : keys)
      if (contains(low, k)) return true;
    return false;
  };
  if (any({"fmha", "flash", "attention", "attn", "sdpa", "paged", "mha_", "_mha", "unified_attention"})) return "attention";
  if (any({"moe", "topk", "router", "routing", "gating", "bitmatrix"})) return "moe";
  if (any({"nvjet", "gemm", "cutlass", "cublas", "cijk_", "matmul", "wvsplitk", "wvspltk", "splitkreduce", "sgemm",
           "hgemm", "xmma"}))
    return "gemm";
  if (any({"rmsnorm", "rms_norm", "layernorm", "layer_norm", "groupnorm", "batch_norm", "batchnorm", "norm_kernel"}))
    return "norm";
  if (any({"softmax"})) return "softmax";
  if (any({"reduce_kernel", "reduce", "argmax", "argmin", "cub::"})) return "reduce";
  if (any({"catarray", "copy_kernel", "direct_copy", "copy"})) return "copy";
  if (any({"index", "gather", "scatter", "embedding"})) return "indexing";
  if (any({"elementwise", "functor", "fill"})) return "elementwise";
  if (starts_with(n, "triton_") || (e.launcher != k_none && m.events[e.launcher].via_driver && !starts_with(n, "void ")))
    return "triton";
  return "other";
}

namespace {

json row(const char* type, int64_t ns, int64_t total) {
  double ms = static_cast<double>(ns) / 1e6;
  double pct = total > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(total) : 0.0;
  return json{{"type", type}, {"time ms", ms}, {"percent", pct}};
}

}  // namespace

json timeline_breakdown::to_json() const {
  json rows = json::array();
  rows.push_back(row("computation_time", computation, total));
  rows.push_back(row("exposed_comm_time", exposed_comm, total));
  rows.push_back(row("exposed_memcpy_time", exposed_memcpy, total));
  rows.push_back(row("busy_time", busy, total));
  if (micro_idle || macro_idle) {
    rows.push_back(row("micro_idle_time", micro_idle, total));
    rows.push_back(row("macro_idle_time", macro_idle, total));
  } else {
    rows.push_back(row("idle_time", idle, total));
  }
  rows.push_back(row("total_time", total, total));
  rows.push_back(row("total_comm_time", total_comm, total));
  rows.push_back(row("total_memcpy_time", total_memcpy, total));
  return rows;
}

std::string timeline_breakdown::to_csv() const {
  std::string out = "type,time ms,percent\n";
  for (const auto& r : to_json())
    out += r["type"].get<std::string>() + "," + python_float_repr(r["time ms"].get<double>()) + "," +
           python_float_repr(r["percent"].get<double>()) + "\n";
  return out;
}

timeline_breakdown gpu_timeline(const trace_model& m, const std::vector<uint32_t>& gpu_events,
                                int64_t micro_idle_threshold_ns) {
  timeline_breakdown t;
  std::vector<interval> comp, comm, copy, all;
  for (uint32_t i : gpu_events) {
    const trace_event& e = m.events[i];
    interval iv{e.ts, e.end()};
    all.push_back(iv);
    switch (classify_gpu_event(m, e)) {
      case gpu_class::computation: comp.push_back(iv); break;
      case gpu_class::communication: comm.push_back(iv); break;
      case gpu_class::memcpy: copy.push_back(iv); break;
    }
  }
  t.events = all.size();
  if (all.empty()) return t;
  auto ALL = merge_intervals(all), COMP = merge_intervals(comp), COMM = merge_intervals(comm),
       COPY = merge_intervals(copy);
  t.total = ALL.back().end - ALL.front().begin;
  t.computation = total_length(COMP);
  t.exposed_comm = total_length(subtract_intervals(COMM, COMP));
  t.exposed_memcpy = total_length(subtract_intervals(subtract_intervals(COPY, COMP), COMM));
  t.busy = total_length(ALL);
  t.idle = t.total - t.busy;
  t.total_comm = total_length(COMM);
  t.total_memcpy = total_length(COPY);
  if (micro_idle_threshold_ns > 0) {
    for (size_t k = 0; k + 1 < ALL.size(); ++k) {
      int64_t gap = ALL[k + 1].begin - ALL[k].end;
      (gap < micro_idle_threshold_ns ? t.micro_idle : t.macro_idle) += gap;
    }
  }
  return t;
}

}  // namespace magpie::trace
