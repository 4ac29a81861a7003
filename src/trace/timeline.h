// Interval algebra and the GPU timeline breakdown (TraceLens's GPUEventAnalyser, research
// tracelens.md §2.5), in exact integer nanoseconds:
//   COMP / COMM / MEMCPY / ALL = union of the intervals of each class / of all GPU events
//   total = end(ALL) − start(ALL); computation = |COMP|; exposed_comm = |COMM − COMP|;
//   exposed_memcpy = |(MEMCPY − COMP) − COMM|; busy = |ALL|; idle = total − busy;
//   computation + exposed_comm + exposed_memcpy + idle = total (exactly, in ns).
// Classes: gpu_memcpy events and ROCm copy kernels → memcpy; names containing nccl / rccl /
// cross_device_reduce (case-insensitive) → communication; everything else (memset included)
// → computation. Unlike TraceLens, unlinked kernels are included by default (a GPU is busy
// whether or not the profiler linked the launch).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/model.h"

namespace magpie::trace {

template <typename T>
struct basic_interval {
  T begin = 0, end = 0;
};
using interval = basic_interval<int64_t>;   ///< exact ns (everything magpie computes)
using dinterval = basic_interval<double>;   ///< µs doubles (TraceLens's arithmetic, --tracelens-compat)

/// Sorted, disjoint union (touching intervals merge: start <= last end).
std::vector<interval> merge_intervals(std::vector<interval> v);
std::vector<dinterval> merge_intervals_us(std::vector<dinterval> v);
/// a − b for merged inputs.
std::vector<interval> subtract_intervals(const std::vector<interval>& a, const std::vector<interval>& b);
std::vector<dinterval> subtract_intervals_us(const std::vector<dinterval>& a, const std::vector<dinterval>& b);
int64_t total_length(const std::vector<interval>& merged);
double total_length_us(const std::vector<dinterval>& merged);
/// Length of the union of arbitrary intervals (TraceLens's "busy time").
int64_t busy_time(std::vector<interval> v);
/// The same over [b, e) without allocating for one interval; `scratch` is reused.
int64_t busy_time(const interval* b, const interval* e, std::vector<interval>& scratch);
double busy_time_us(const dinterval* b, const dinterval* e, std::vector<dinterval>& scratch);

/// Values grouped by a dense key 0..n-1 in O(n) (counting sort, stable): group k is
/// values[offsets[k] .. offsets[k + 1]).
template <typename V>
struct grouped {
  std::vector<uint32_t> offsets;
  std::vector<V> values;
  size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  const V* begin(size_t k) const { return values.data() + offsets[k]; }
  const V* end(size_t k) const { return values.data() + offsets[k + 1]; }
};
template <typename V>
grouped<V> group_by_key(const std::vector<std::pair<uint32_t, V>>& pairs, size_t n_keys) {
  grouped<V> g;
  g.offsets.assign(n_keys + 1, 0);
  for (const auto& [k, v] : pairs) ++g.offsets[k + 1];
  for (size_t k = 0; k < n_keys; ++k) g.offsets[k + 1] += g.offsets[k];
  g.values.resize(pairs.size());
  std::vector<uint32_t> fill(g.offsets.begin(), g.offsets.end() - 1);
  for (const auto& [k, v] : pairs) g.values[fill[k]++] = v;
  return g;
}

enum class gpu_class { computation, communication, memcpy };
gpu_class classify_gpu_event(const trace_model& m, const trace_event& e);
/// The class by kind and name alone (what classify_gpu_event caches per name).
gpu_class classify_gpu_name(ev_kind kind, const std::string& name);
/// Fills m.gpu_name_class for the names of m.gpu.
void cache_gpu_classes(trace_model& m);
/// Kernel category for tables: gemm, attention, communication, memcpy, memset, norm, softmax,
/// moe, reduce, elementwise, copy, indexing, triton, other (first match, name-based).
std::string kernel_category(const trace_model& m, const trace_event& e);

/// One TraceLens gpu_timeline row: `ns` of `total_ns` spent as `type`.
struct timeline_row {
  const char* type;  ///< computation_time, exposed_comm_time, …, total_memcpy_time
  int64_t ns = 0, total_ns = 0;
  double ms() const { return static_cast<double>(ns) / 1e6; }
  double percent() const { return total_ns > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(total_ns) : 0.0; }
};

struct timeline_breakdown {
  int64_t total = 0, computation = 0, exposed_comm = 0, exposed_memcpy = 0, busy = 0, idle = 0;
  int64_t total_comm = 0, total_memcpy = 0;
  int64_t micro_idle = 0, macro_idle = 0;  ///< gaps shorter / not shorter than the threshold
  size_t events = 0;
  /// TraceLens gpu_timeline rows (type, time ms, percent; printed by timeline_json).
  std::vector<timeline_row> rows() const;
  std::string to_csv() const;
};

/// Breakdown over the given GPU events (indices into m.events). `micro_idle_threshold_ns` > 0
/// splits idle into micro (< threshold) and macro gaps. With `tracelens_doubles` the interval
/// algebra runs on TraceLens's µs doubles (end = ts + dur rounded as Python does, ~1e-4 µs at
/// epoch-scale timestamps) and the results are rounded to ns, to reproduce its numbers.
timeline_breakdown gpu_timeline(const trace_model& m, const std::vector<uint32_t>& gpu_events,
                                int64_t micro_idle_threshold_ns = 0, bool tracelens_doubles = false);

}  // namespace magpie::trace
