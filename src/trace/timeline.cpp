#include "trace/timeline.h"

#include <algorithm>
#include <cmath>
#include <regex>

#include "core/strings.h"
#include "trace/util.h"

namespace magpie::trace {

namespace {

template <typename T>
std::vector<basic_interval<T>> merge_impl(std::vector<basic_interval<T>> v) {
  std::sort(v.begin(), v.end(), [](const basic_interval<T>& a, const basic_interval<T>& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  std::vector<basic_interval<T>> out;
  for (const auto& i : v) {
    if (!out.empty() && i.begin <= out.back().end) out.back().end = std::max(out.back().end, i.end);
    else out.push_back(i);
  }
  return out;
}

template <typename T>
std::vector<basic_interval<T>> subtract_impl(const std::vector<basic_interval<T>>& a,
                                             const std::vector<basic_interval<T>>& b) {
  std::vector<basic_interval<T>> out;
  size_t j = 0;
  for (basic_interval<T> cur : a) {
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

template <typename T>
T length_impl(const std::vector<basic_interval<T>>& merged) {
  T t = 0;
  for (const auto& i : merged) t += i.end - i.begin;
  return t;
}

}  // namespace

std::vector<interval> merge_intervals(std::vector<interval> v) { return merge_impl(std::move(v)); }
std::vector<dinterval> merge_intervals_us(std::vector<dinterval> v) { return merge_impl(std::move(v)); }
std::vector<interval> subtract_intervals(const std::vector<interval>& a, const std::vector<interval>& b) {
  return subtract_impl(a, b);
}
std::vector<dinterval> subtract_intervals_us(const std::vector<dinterval>& a, const std::vector<dinterval>& b) {
  return subtract_impl(a, b);
}
int64_t total_length(const std::vector<interval>& merged) { return length_impl(merged); }
double total_length_us(const std::vector<dinterval>& merged) { return length_impl(merged); }

namespace {

/// Union length of intervals sorted by begin.
int64_t sweep_sorted(const interval* b, const interval* e) {
  if (b == e) return 0;
  int64_t total = 0, cur_b = b->begin, cur_e = b->end;
  for (const interval* i = b + 1; i != e; ++i) {
    if (i->begin <= cur_e) {
      cur_e = std::max(cur_e, i->end);
    } else {
      total += cur_e - cur_b;
      cur_b = i->begin, cur_e = i->end;
    }
  }
  return total + cur_e - cur_b;
}

bool by_begin(const interval& x, const interval& y) { return x.begin < y.begin; }

}  // namespace

int64_t busy_time(const interval* b, const interval* e, std::vector<interval>& scratch) {
  if (e - b == 1) return b->end - b->begin;
  scratch.assign(b, e);
  std::sort(scratch.begin(), scratch.end(), by_begin);
  return sweep_sorted(scratch.data(), scratch.data() + scratch.size());
}

double busy_time_us(const dinterval* b, const dinterval* e, std::vector<dinterval>& scratch) {
  scratch.assign(b, e);
  return total_length_us(merge_intervals_us(scratch));
}

int64_t busy_time(std::vector<interval> v) {
  if (v.size() == 1) return v[0].end - v[0].begin;  // the common op: one kernel
  std::sort(v.begin(), v.end(), by_begin);  // in place: no merged copy
  return sweep_sorted(v.data(), v.data() + v.size());
}

gpu_class classify_gpu_event(const trace_model& m, const trace_event& e) {
  if (e.kind == ev_kind::memcpy) return gpu_class::memcpy;
  if (e.name < m.gpu_name_class.size() && m.gpu_name_class[e.name]) return static_cast<gpu_class>(m.gpu_name_class[e.name] - 1);
  return classify_gpu_name(e.kind, m.name(e));
}

void cache_gpu_classes(trace_model& m) {
  m.gpu_name_class.assign(m.strings.size(), 0);
  for (uint32_t i : m.gpu) {
    const trace_event& e = m.events[i];
    if (e.kind != ev_kind::memcpy && !m.gpu_name_class[e.name])
      m.gpu_name_class[e.name] = static_cast<uint8_t>(static_cast<int>(classify_gpu_name(e.kind, m.name(e))) + 1);
  }
}

gpu_class classify_gpu_name(ev_kind kind, const std::string& n) {
  if (kind == ev_kind::memcpy) return gpu_class::memcpy;
  if (kind == ev_kind::kernel) {
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

std::vector<timeline_row> timeline_breakdown::rows() const {
  std::vector<timeline_row> rows;
  auto row = [&](const char* type, int64_t ns) { rows.push_back({type, ns, total}); };
  row("computation_time", computation);
  row("exposed_comm_time", exposed_comm);
  row("exposed_memcpy_time", exposed_memcpy);
  row("busy_time", busy);
  if (micro_idle || macro_idle) {
    row("micro_idle_time", micro_idle);
    row("macro_idle_time", macro_idle);
  } else {
    row("idle_time", idle);
  }
  row("total_time", total);
  row("total_comm_time", total_comm);
  row("total_memcpy_time", total_memcpy);
  return rows;
}

std::string timeline_breakdown::to_csv() const {
  std::string out = "type,time ms,percent\n";
  for (const auto& r : rows())
    out += std::string(r.type) + "," + python_float_repr(r.ms()) + "," + python_float_repr(r.percent()) + "\n";
  return out;
}

namespace {

/// The breakdown's lengths in one unit T (ns for int64, µs for double), converted to ns.
template <typename T>
void breakdown(std::vector<basic_interval<T>> comp, std::vector<basic_interval<T>> comm,
               std::vector<basic_interval<T>> copy, std::vector<basic_interval<T>> all, int64_t micro_ns,
               double to_ns, timeline_breakdown& t) {
  auto ns = [&](T v) { return static_cast<int64_t>(std::llround(static_cast<double>(v) * to_ns)); };
  auto ALL = merge_impl(std::move(all)), COMP = merge_impl(std::move(comp)), COMM = merge_impl(std::move(comm)),
       COPY = merge_impl(std::move(copy));
  T total = ALL.back().end - ALL.front().begin, busy = length_impl(ALL);
  t.total = ns(total);
  t.computation = ns(length_impl(COMP));
  t.exposed_comm = ns(length_impl(subtract_impl(COMM, COMP)));
  t.exposed_memcpy = ns(length_impl(subtract_impl(subtract_impl(COPY, COMP), COMM)));
  t.busy = ns(busy);
  t.idle = ns(total - busy);
  t.total_comm = ns(length_impl(COMM));
  t.total_memcpy = ns(length_impl(COPY));
  if (micro_ns > 0) {
    for (size_t k = 0; k + 1 < ALL.size(); ++k) {
      int64_t gap = ns(ALL[k + 1].begin - ALL[k].end);
      (gap < micro_ns ? t.micro_idle : t.macro_idle) += gap;
    }
  }
}

template <typename T>
void classify_into(const trace_model& m, const std::vector<uint32_t>& gpu_events, timeline_breakdown& t,
                   int64_t micro_ns, double to_ns, basic_interval<T> (*iv)(const trace_event&)) {
  std::vector<basic_interval<T>> comp, comm, copy, all;
  all.reserve(gpu_events.size());
  for (uint32_t i : gpu_events) {
    const trace_event& e = m.events[i];
    basic_interval<T> v = iv(e);
    all.push_back(v);
    switch (classify_gpu_event(m, e)) {
      case gpu_class::computation: comp.push_back(v); break;
      case gpu_class::communication: comm.push_back(v); break;
      case gpu_class::memcpy: copy.push_back(v); break;
    }
  }
  breakdown(std::move(comp), std::move(comm), std::move(copy), std::move(all), micro_ns, to_ns, t);
}

}  // namespace

timeline_breakdown gpu_timeline(const trace_model& m, const std::vector<uint32_t>& gpu_events,
                                int64_t micro_idle_threshold_ns, bool tracelens_doubles) {
  timeline_breakdown t;
  t.events = gpu_events.size();
  if (gpu_events.empty()) return t;
  if (tracelens_doubles) {
    classify_into<double>(m, gpu_events, t, micro_idle_threshold_ns, 1000.0, [](const trace_event& e) {
      double ts = static_cast<double>(e.ts) / 1000.0;  // the double Python parses from the µs text
      return dinterval{ts, ts + static_cast<double>(e.dur()) / 1000.0};
    });
  } else {
    classify_into<int64_t>(m, gpu_events, t, micro_idle_threshold_ns, 1.0,
                           [](const trace_event& e) { return interval{e.ts, e.end()}; });
  }
  return t;
}

}  // namespace magpie::trace
