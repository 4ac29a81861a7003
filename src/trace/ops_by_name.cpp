// TraceLens's per-op-name view (ops_summary), beside magpie's outermost-op attribution.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "core/csv.h"
#include "trace/analysis.h"
#include "trace/perf_model.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

/// TraceLens's launcher of a linked GPU event: the innermost cpu_op of the host tree around
/// the launch ("execute" passed through), else the runtime event itself.
uint32_t launcher_of(const trace_event& g) { return (g.op != k_none && !g.op_from_ext) ? g.op : g.launcher; }

std::string py_list(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", '" : "'") + v[i] + "'";
  return s + "]";
}

/// Busy time (µs) of each launcher's GPU events (pairs of launcher slot, GPU event index); with
/// `doubles`, in TraceLens's µs doubles (ts + dur rounded as Python does).
std::vector<double> busy_per_launcher(const trace_model& m, const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                                      size_t n, bool doubles) {
  grouped<uint32_t> g = group_by_key(pairs, n);
  std::vector<double> out(n, 0);
  std::vector<interval> iv, scratch;
  std::vector<dinterval> dv, dscratch;
  for (size_t k = 0; k < n; ++k) {
    if (g.begin(k) == g.end(k)) continue;
    iv.clear();
    dv.clear();
    for (const uint32_t* x = g.begin(k); x != g.end(k); ++x) {
      const trace_event& e = m.events[*x];
      double ts = static_cast<double>(e.ts) / 1000.0;
      if (doubles) dv.push_back({ts, ts + static_cast<double>(e.dur()) / 1000.0});
      else iv.push_back({e.ts, e.end()});
    }
    out[k] = doubles ? busy_time_us(dv.data(), dv.data() + dv.size(), dscratch)
                     : static_cast<double>(busy_time(iv.data(), iv.data() + iv.size(), scratch)) / 1000.0;
  }
  return out;
}

}  // namespace

std::vector<name_row> ops_by_name(const trace_model& m, const std::vector<uint32_t>& gpu_events, bool tracelens_links) {
  auto linked = [&](const trace_event& g) { return g.launcher != k_none && (!tracelens_links || g.tracelens_linked); };
  std::vector<uint32_t> slot(m.events.size(), k_none);  // launcher event → instance
  std::vector<uint32_t> launcher, first_kernel;         // per instance, in order of first kernel
  std::vector<std::pair<uint32_t, uint32_t>> pairs;     // (instance, GPU event)
  for (uint32_t gi : gpu_events) {
    const trace_event& g = m.events[gi];
    if (!linked(g) || classify_gpu_event(m, g) == gpu_class::communication) continue;
    uint32_t l = launcher_of(g);
    if (slot[l] == k_none) {
      slot[l] = static_cast<uint32_t>(launcher.size());
      launcher.push_back(l);
      first_kernel.push_back(gi);
    } else if (g.ts < m.events[first_kernel[slot[l]]].ts) {
      first_kernel[slot[l]] = gi;
    }
    pairs.push_back({slot[l], gi});
  }
  std::vector<double> direct_us = busy_per_launcher(m, pairs, launcher.size(), tracelens_links);
  pairs.clear();
  for (uint32_t gi : gpu_events) {  // subtree: every launcher above the launch, NCCL included
    const trace_event& g = m.events[gi];
    if (!linked(g)) continue;
    for (uint32_t p = g.launcher; p != k_none; p = m.events[p].parent)
      if (slot[p] != k_none) pairs.push_back({slot[p], gi});
  }
  std::vector<double> subtree_us = busy_per_launcher(m, pairs, launcher.size(), tracelens_links);
  std::vector<std::pair<uint32_t, uint32_t>>().swap(pairs);
  std::vector<uint32_t>().swap(slot);
  std::vector<name_row> rows;
  std::unordered_map<uint32_t, size_t> row_of;
  std::vector<std::set<std::string>> cats;
  std::unordered_map<uint64_t, std::string> category_of;  // (op name, first kernel name) → category
  for (size_t i = 0; i < launcher.size(); ++i) {
    const trace_event& e = m.events[launcher[i]];
    auto [it, fresh] = row_of.emplace(e.name, rows.size());
    if (fresh) {
      rows.push_back({m.name(e), 0, 0, 0, {}, 0, 0});
      cats.emplace_back();
    }
    name_row& r = rows[it->second];
    r.direct_us += direct_us[i];
    r.subtree_us += subtree_us[i];
    ++r.count;
    uint32_t fk = m.events[first_kernel[i]].name;
    uint64_t ck = (uint64_t{e.name} << 32) | fk;
    auto c = category_of.find(ck);
    if (c == category_of.end()) c = category_of.emplace(ck, op_category(m.name(e), m.strings.str(fk))).first;
    cats[it->second].insert(c->second);
  }
  double total = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].categories.assign(cats[i].begin(), cats[i].end());
    total += rows[i].direct_us;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const name_row& a, const name_row& b) { return a.direct_us > b.direct_us; });
  double cum = 0;
  for (auto& r : rows) {
    r.pct = total > 0 ? r.direct_us / total * 100.0 : 0;
    cum += r.pct;
    r.cum_pct = cum;
  }
  return rows;
}

std::string ops_by_name_csv(const std::vector<name_row>& rows) {
  csv_writer w;
  w.set_header({"name", "total_direct_kernel_time_sum", "total_subtree_kernel_time_sum", "total_direct_kernel_time_ms",
                "total_subtree_kernel_time_ms", "Count", "Categories", "Percentage (%)", "Cumulative Percentage (%)"});
  for (const auto& r : rows)
    w.add_row({r.name, python_float_repr(r.direct_us), python_float_repr(r.subtree_us),
               python_float_repr(r.direct_us / 1000.0), python_float_repr(r.subtree_us / 1000.0), std::to_string(r.count),
               py_list(r.categories), python_float_repr(r.pct), python_float_repr(r.cum_pct)});
  return w.str();
}

}  // namespace magpie::trace
