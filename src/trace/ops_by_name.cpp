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

/// Busy time (µs) of each group; with `doubles`, in TraceLens's µs doubles (ts + dur rounded as
/// Python does).
std::vector<double> busy_per_group(const grouped<interval>& g, bool doubles) {
  std::vector<double> out(g.size(), 0);
  std::vector<interval> scratch;
  std::vector<dinterval> dv, dscratch;
  for (size_t k = 0; k < g.size(); ++k) {
    if (g.begin(k) == g.end(k)) continue;
    if (!doubles) {
      out[k] = static_cast<double>(busy_time(g.begin(k), g.end(k), scratch)) / 1000.0;
      continue;
    }
    dv.clear();
    for (const interval* x = g.begin(k); x != g.end(k); ++x) {
      double ts = static_cast<double>(x->begin) / 1000.0;
      dv.push_back({ts, ts + static_cast<double>(x->end - x->begin) / 1000.0});
    }
    out[k] = busy_time_us(dv.data(), dv.data() + dv.size(), dscratch);
  }
  return out;
}

}  // namespace

std::vector<name_row> ops_by_name(const trace_model& m, const std::vector<uint32_t>& gpu_events, bool tracelens_links) {
  auto linked = [&](const trace_event& g) { return g.launcher != k_none && (!tracelens_links || g.tracelens_linked); };
  std::vector<uint32_t> slot(m.events.size(), k_none);  // launcher event → instance
  std::vector<uint32_t> launcher, first_kernel;         // per instance, in order of first kernel
  std::vector<std::pair<uint32_t, interval>> direct, subtree;
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
    direct.push_back({slot[l], {g.ts, g.end()}});
  }
  for (uint32_t gi : gpu_events) {  // subtree: every launcher above the launch, NCCL included
    const trace_event& g = m.events[gi];
    if (!linked(g)) continue;
    for (uint32_t p = g.launcher; p != k_none; p = m.events[p].parent)
      if (slot[p] != k_none) subtree.push_back({slot[p], {g.ts, g.end()}});
  }
  std::vector<double> direct_us = busy_per_group(group_by_key(direct, launcher.size()), tracelens_links);
  std::vector<double> subtree_us = busy_per_group(group_by_key(subtree, launcher.size()), tracelens_links);
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
