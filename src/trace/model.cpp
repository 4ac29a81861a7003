#include "trace/model.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "core/log.h"
#include "core/strings.h"
#include "trace/timeline.h"

namespace magpie::trace {

trace_summary trace_model::summary() const {
  return {.path = path, .device_name = device_name, .device_count = device_count, .events_kept = events.size(),
          .cpu_ops = cpu_ops.size(), .runtime_events = runtimes.size(), .gpu_events = gpu.size(),
          .annotations = annotations.size(), .linking_key = linking_key, .gpu_linked = gpu_linked,
          .gpu_unlinked = gpu_unlinked, .gpu_linked_tracelens = gpu_linked_tracelens, .gpu_without_op = gpu_without_op,
          .dropped_python = dropped_python, .dropped_other = dropped_other, .dropped_no_ts = dropped_no_ts,
          .gpu_missing_dur = gpu_missing_dur, .negative_dur = negative_dur, .tree_bleeds = tree_bleeds,
          .clipped_kernels = clipped_kernels, .stats = stats};
}

namespace {

/// An ac2g flow end: (thread, ts) of the GPU event it points at, and the launch's id.
struct flow_end {
  uint32_t thread;
  int64_t ts;
  int64_t id;
};

ev_kind kind_of(std::string_view cat, bool* keep) {
  *keep = true;
  switch (cat.size()) {
    case 6:
      if (cat == "kernel") return ev_kind::kernel;
      if (cat == "cpu_op") return ev_kind::cpu_op;
      break;
    case 10:
      if (cat == "gpu_memcpy") return ev_kind::memcpy;
      if (cat == "gpu_memset") return ev_kind::memset;
      break;
    case 11:
      if (cat == "cuda_driver" || cat == "hip_runtime") return ev_kind::runtime;
      break;
    case 12:
      if (cat == "cuda_runtime") return ev_kind::runtime;
      break;
    case 15:
      if (cat == "user_annotation") return ev_kind::user_annotation;
      break;
    case 19:
      if (cat == "gpu_user_annotation") return ev_kind::gpu_user_annotation;
      break;
    default:
      break;
  }
  *keep = false;
  return ev_kind::cpu_op;
}

class model_sink : public event_sink {
 public:
  explicit model_sink(trace_model& m) : m_m(m) {}

  void on_top_level(std::string_view key, std::string_view raw) override {
    if (key != "deviceProperties") return;
    auto j = parse_json(raw, "deviceProperties");
    if (!j.ok() || !j->is_array()) return;
    m_m.device_count = static_cast<int>(j->size());
    if (!j->empty() && (*j)[0].is_object()) m_m.device_name = json_string((*j)[0], "name");
  }

  void on_event(const event_view& e) override {
    std::string_view cat = e.cat;
    bool keep;
    ev_kind kind = kind_of(cat, &keep);
    if (!keep) {
      if (cat == "python_function") ++m_m.dropped_python;
      else if (cat == "ac2g" && e.ph == "f" && e.has_id && e.has_ts) m_flow_ends.push_back({thread(e), e.ts_ns, e.id});
      else if (cat == "ac2g" && e.ph == "s" && e.has_id) m_flow_start_ids.push_back(e.id);
      else ++m_m.dropped_other;
      return;
    }
    if (!e.has_ts) {
      if (m_m.dropped_no_ts++ == 0) m_m.first_no_ts = e.index;
      return;
    }
    bool gpu_kind = kind == ev_kind::kernel || kind == ev_kind::memcpy || kind == ev_kind::memset;
    if (gpu_kind && !e.has_dur && m_m.gpu_missing_dur++ == 0) m_m.first_gpu_missing_dur = e.index;
    if (e.has_dur && e.dur_ns < 0) ++m_m.negative_dur;
    uint32_t idx = static_cast<uint32_t>(m_m.events.size());
    trace_event& t = m_m.events.emplace_back();
    t.ts = e.ts_ns;
    t.set_dur(e.has_dur ? e.dur_ns : 0);
    t.name = m_m.strings.intern(e.name);
    t.thread = thread(e);
    t.kind = kind;
    t.via_driver = cat == "cuda_driver";
    t.has_correlation = e.has_correlation;
    t.has_external_id = e.has_external_id;
    auto wide = [](bool has, int64_t v) { return has && (v < 0 || v > int64_t{0xFFFFFFFF}); };
    if (wide(e.has_correlation, e.correlation) || wide(e.has_external_id, e.external_id)) {
      t.wide_ids = true;
      m_m.wide_ids[idx] = {e.correlation, e.external_id};
    }
    if (gpu_kind) {
      t.launcher = static_cast<uint32_t>(e.has_correlation ? e.correlation : e.external_id);  // link id (link_gpu)
      t.op = k_none;
      t.stream = static_cast<int32_t>(e.has_stream ? e.stream : (e.tid_is_str ? 0 : e.tid));
      t.device = static_cast<int16_t>(e.has_device ? e.device : (e.pid_is_str ? 0 : e.pid));
    } else {
      t.uid = static_cast<uint32_t>(e.index);
      t.external_id = static_cast<uint32_t>(e.external_id);
      if (kind == ev_kind::cpu_op) t.args = args_tuple(e);
      else t.correlation = static_cast<uint32_t>(e.correlation);
    }
  }

  std::vector<flow_end> m_flow_ends;
  std::vector<int64_t> m_flow_start_ids;

 private:
  /// Interned tuple of a cpu_op's argument texts (0: none recorded).
  uint32_t args_tuple(const event_view& e) {
    if (e.input_dims.empty() && e.input_type.empty() && e.concrete_inputs.empty() && e.input_strides.empty()) return 0;
    arg_texts a;
    if (!e.input_dims.empty()) a.dims = m_m.strings.intern(e.input_dims);
    if (!e.input_type.empty()) a.types = m_m.strings.intern(e.input_type);
    if (!e.concrete_inputs.empty()) a.concrete = m_m.strings.intern(e.concrete_inputs);
    if (!e.input_strides.empty()) a.strides = m_m.strings.intern(e.input_strides);
    uint64_t key = (uint64_t{a.dims} * 0x9E3779B97F4A7C15ull) ^ (uint64_t{a.types} << 21) ^
                   (uint64_t{a.concrete} * 0xC2B2AE3D27D4EB4Full) ^ (uint64_t{a.strides} << 42);
    auto& bucket = m_tuples[key];
    for (uint32_t id : bucket)
      if (m_m.arg_tuples[id] == a) return id;
    m_m.arg_tuples.push_back(a);
    bucket.push_back(static_cast<uint32_t>(m_m.arg_tuples.size() - 1));
    return bucket.back();
  }

  /// Interned "pid/tid" key; numeric pairs are cached (a trace has few threads).
  uint32_t thread(const event_view& e) {
    bool numeric = !e.pid_is_str && !e.tid_is_str;
    if (numeric && m_last_ok && e.pid == m_last_pid && e.tid == m_last_tid) return m_last_id;
    if (numeric) {
      auto it = m_numeric.find({e.pid, e.tid});
      if (it != m_numeric.end()) return remember(e, it->second);
    }
    m_key.clear();
    if (e.pid_is_str) m_key.append(e.pid_str);
    else m_key += std::to_string(e.pid);
    m_key.push_back('/');
    if (e.tid_is_str) m_key.append(e.tid_str);
    else m_key += std::to_string(e.tid);
    uint32_t id = m_m.strings.intern(m_key);
    if (numeric) m_numeric.emplace(std::make_pair(e.pid, e.tid), id);
    return numeric ? remember(e, id) : id;
  }
  uint32_t remember(const event_view& e, uint32_t id) {
    m_last_ok = true;
    m_last_pid = e.pid;
    m_last_tid = e.tid;
    m_last_id = id;
    return id;
  }

  trace_model& m_m;
  std::string m_key;
  std::map<std::pair<int64_t, int64_t>, uint32_t> m_numeric;
  std::unordered_map<uint64_t, std::vector<uint32_t>> m_tuples;  // hash of the 4 ids → tuple ids
  bool m_last_ok = false;
  int64_t m_last_pid = 0, m_last_tid = 0;
  uint32_t m_last_id = 0;
};

bool is_gpu(ev_kind k) { return k == ev_kind::kernel || k == ev_kind::memcpy || k == ev_kind::memset; }

/// Host call tree over cpu_op and runtime events, per thread.
void build_tree(trace_model& m, bool drop_bleeding) {
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_thread;
  for (uint32_t i = 0; i < m.events.size(); ++i) {
    ev_kind k = m.events[i].kind;
    if (k == ev_kind::cpu_op || k == ev_kind::runtime) by_thread[m.events[i].thread].push_back(i);
  }
  for (auto& [thread, idx] : by_thread) {
    auto by_ts = [&](uint32_t a, uint32_t b) { return m.events[a].ts < m.events[b].ts; };
    if (!std::is_sorted(idx.begin(), idx.end(), by_ts)) std::stable_sort(idx.begin(), idx.end(), by_ts);
    std::vector<uint32_t> stack;
    for (uint32_t i : idx) {
      trace_event& e = m.events[i];
      while (!stack.empty() && e.ts >= m.events[stack.back()].end()) stack.pop_back();
      // A sub-µs bleed past the top usually means the top ended early: close it (TraceLens).
      while (stack.size() >= 2 && e.end() > m.events[stack.back()].end() &&
             m.events[stack.back()].end() - e.ts < 1000)
        stack.pop_back();
      if (!stack.empty()) {
        if (e.end() > m.events[stack.back()].end()) {
          ++m.tree_bleeds;
          if (drop_bleeding) continue;  // TraceLens: neither a child nor pushed
        }
        e.parent = stack.back();
      }
      stack.push_back(i);
    }
  }
}

bool has_id(const std::vector<int64_t>& sorted, int64_t id) { return std::binary_search(sorted.begin(), sorted.end(), id); }

/// A flat id → event lookup: 8 bytes per entry (32-bit id << 32 | event index), sorted; ids
/// that do not fit 32 bits go to `wide`. The first event with an id wins.
class index_table {
 public:
  index_table(const trace_model& m, const std::vector<uint32_t>& idx, bool by_correlation) {
    m_packed.reserve(idx.size());
    for (uint32_t i : idx) {
      const trace_event& e = m.events[i];
      if (!(by_correlation ? e.has_correlation : e.has_external_id)) continue;
      int64_t id = by_correlation ? m.correlation_of(i) : m.external_id_of(i);
      if (fits(id)) m_packed.push_back((static_cast<uint64_t>(id) << 32) | i);
      else m_wide.push_back({id, i});
    }
    std::sort(m_packed.begin(), m_packed.end());  // equal ids: lower index first
    std::stable_sort(m_wide.begin(), m_wide.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  uint32_t find(int64_t id) const {
    if (fits(id)) {
      auto it = std::lower_bound(m_packed.begin(), m_packed.end(), static_cast<uint64_t>(id) << 32);
      return (it != m_packed.end() && (*it >> 32) == static_cast<uint64_t>(id)) ? static_cast<uint32_t>(*it) : k_none;
    }
    auto it = std::lower_bound(m_wide.begin(), m_wide.end(), id, [](const auto& p, int64_t k) { return p.first < k; });
    return (it != m_wide.end() && it->first == id) ? it->second : k_none;
  }

 private:
  static bool fits(int64_t id) { return id >= 0 && id <= int64_t{0xFFFFFFFF}; }
  std::vector<uint64_t> m_packed;
  std::vector<std::pair<int64_t, uint32_t>> m_wide;
};

struct flow_links {
  std::vector<flow_end> ends;               ///< sorted by (thread, ts); dropped when every GPU event has a correlation
  std::vector<int64_t> start_ids, end_ids;  ///< sorted
};

/// Launch id of a GPU event without "correlation": the flow end at its (thread, ts).
bool flow_id_at(const flow_links& f, uint32_t thread, int64_t ts, int64_t* id) {
  auto it = std::lower_bound(f.ends.begin(), f.ends.end(), std::make_pair(thread, ts), [](const flow_end& a, const auto& k) {
    return a.thread < k.first || (a.thread == k.first && a.ts < k.second);
  });
  if (it == f.ends.end() || it->thread != thread || it->ts != ts) return false;
  *id = it->id;
  return true;
}

/// What linking needs; the External-id table is built only when a fallback needs it.
struct linker {
  trace_model& m;
  const flow_links& f;
  index_table runtime_by_corr;
  std::optional<index_table> op_by_ext_table;
  uint32_t execute;
  bool any_corr;

  uint32_t op_by_ext(int64_t id) {
    if (!op_by_ext_table) op_by_ext_table.emplace(m, m.cpu_ops, false);
    return op_by_ext_table->find(id);
  }

  /// The id a GPU event was loaded with (its correlation, else its External id); read once,
  /// before link() overwrites the slot with the launcher.
  int64_t link_id(uint32_t gi) const {
    const trace_event& g = m.events[gi];
    if (!g.wide_ids) return g.launcher;
    const auto& w = m.wide_ids.at(gi);
    return g.has_correlation ? w.first : w.second;
  }

  void link(uint32_t gi) {
    trace_event& g = m.events[gi];
    const int64_t id = link_id(gi);
    g.launcher = k_none;
    if (any_corr) {
      int64_t corr = g.has_correlation ? id : 0;
      bool have = g.has_correlation || flow_id_at(f, g.thread, g.ts, &corr);
      if (have) g.launcher = runtime_by_corr.find(corr);
    }
    if (g.launcher != k_none) {
      ++m.gpu_linked;
      const uint32_t li = g.launcher;
      const trace_event& launch = m.events[li];
      int64_t lc = m.correlation_of(li);
      g.tracelens_linked = contains(m.name(launch), "GraphLaunch") || (has_id(f.start_ids, lc) && has_id(f.end_ids, lc));
      m.gpu_linked_tracelens += g.tracelens_linked;
      for (uint32_t p = launch.parent; p != k_none; p = m.events[p].parent) {
        if (m.events[p].kind == ev_kind::cpu_op && m.events[p].name != execute) {
          g.op = p;
          break;
        }
      }
      if (g.op == k_none && launch.has_external_id) {
        g.op = op_by_ext(m.external_id_of(li));
        g.op_from_ext = g.op != k_none;
      }
    } else {
      if (!any_corr && g.has_external_id) {  // no correlation anywhere: External id links op directly
        g.op = op_by_ext(id);  // no GPU event has a correlation: id is the External id
        g.op_from_ext = g.op != k_none;
      }
      if (g.op == k_none) ++m.gpu_unlinked;
      else ++m.gpu_linked;
    }
    if (g.op == k_none) ++m.gpu_without_op;
  }
};

void link_gpu(trace_model& m, flow_links& f) {
  bool any_corr = false, any_ext = false, all_corr = true;
  for (uint32_t i : m.gpu) {
    any_corr |= m.events[i].has_correlation;
    any_ext |= m.events[i].has_external_id;
    all_corr &= m.events[i].has_correlation;
  }
  m.linking_key = any_corr ? "correlation" : (any_ext ? "External id" : "none");
  std::sort(f.start_ids.begin(), f.start_ids.end());
  f.end_ids.reserve(f.ends.size());
  for (const auto& e : f.ends) f.end_ids.push_back(e.id);
  std::sort(f.end_ids.begin(), f.end_ids.end());
  if (all_corr) {
    std::vector<flow_end>().swap(f.ends);  // only GPU events without a correlation look flows up by (thread, ts)
  } else {
    std::sort(f.ends.begin(), f.ends.end(), [](const flow_end& a, const flow_end& b) {
      return a.thread < b.thread || (a.thread == b.thread && a.ts < b.ts);
    });
  }
  linker l{m, f, index_table(m, m.runtimes, true), std::nullopt, m.strings.find("execute").value_or(k_none), any_corr};
  for (uint32_t gi : m.gpu) l.link(gi);
}

void clip_overruns(trace_model& m) {
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_stream;
  for (uint32_t i : m.gpu) by_stream[{m.events[i].device, m.events[i].stream}].push_back(i);
  for (auto& [key, idx] : by_stream) {
    for (size_t k = 0; k + 1 < idx.size(); ++k) {
      trace_event& a = m.events[idx[k]];
      const trace_event& b = m.events[idx[k + 1]];
      if (a.end() > b.ts && b.ts >= a.ts) {
        a.set_dur(b.ts - a.ts);
        ++m.clipped_kernels;
      }
    }
  }
}

}  // namespace

status_or<trace_model> load_trace_model(const fs::path& path, const model_options& opts) {
  trace_model m;
  m.path = path;
  model_sink sink(m);
  MAGPIE_ASSIGN_OR_RETURN(m.stats, read_trace(path, sink, opts.read));
  size_t counts[8] = {};
  for (const auto& e : m.events) ++counts[static_cast<size_t>(e.kind)];
  m.cpu_ops.reserve(counts[static_cast<size_t>(ev_kind::cpu_op)]);
  m.runtimes.reserve(counts[static_cast<size_t>(ev_kind::runtime)]);
  m.gpu.reserve(counts[static_cast<size_t>(ev_kind::kernel)] + counts[static_cast<size_t>(ev_kind::memcpy)] +
                counts[static_cast<size_t>(ev_kind::memset)]);
  for (uint32_t i = 0; i < m.events.size(); ++i) {
    switch (m.events[i].kind) {
      case ev_kind::cpu_op: m.cpu_ops.push_back(i); break;
      case ev_kind::runtime: m.runtimes.push_back(i); break;
      case ev_kind::user_annotation: m.annotations.push_back(i); break;
      case ev_kind::gpu_user_annotation: m.gpu_annotations.push_back(i); break;
      default:
        if (is_gpu(m.events[i].kind)) m.gpu.push_back(i);
    }
  }
  auto gpu_by_ts = [&](uint32_t a, uint32_t b) { return m.events[a].ts < m.events[b].ts; };
  if (!std::is_sorted(m.gpu.begin(), m.gpu.end(), gpu_by_ts)) std::stable_sort(m.gpu.begin(), m.gpu.end(), gpu_by_ts);
  build_tree(m, opts.drop_bleeding_events);
  flow_links flows{std::move(sink.m_flow_ends), std::move(sink.m_flow_start_ids), {}};
  link_gpu(m, flows);
  if (opts.clip_stream_overruns) clip_overruns(m);
  cache_gpu_classes(m);
  return m;
}

int64_t trace_model::correlation_of(uint32_t i) const {
  const trace_event& e = events[i];
  return e.wide_ids ? wide_ids.at(i).first : static_cast<int64_t>(e.correlation);
}

int64_t trace_model::external_id_of(uint32_t i) const {
  const trace_event& e = events[i];
  return e.wide_ids ? wide_ids.at(i).second : static_cast<int64_t>(e.external_id);
}

std::vector<uint32_t> ancestors(const trace_model& m, uint32_t i) {
  std::vector<uint32_t> out;
  for (uint32_t p = m.events[i].parent; p != k_none; p = m.events[p].parent) out.push_back(p);
  return out;
}

}  // namespace magpie::trace
