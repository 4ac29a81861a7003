#include "trace/model.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/log.h"
#include "core/strings.h"

namespace magpie::trace {

json trace_model::summary_json() const {
  return json{{"path", path.string()},
              {"device_name", device_name},
              {"device_count", device_count},
              {"events_kept", events.size()},
              {"cpu_ops", cpu_ops.size()},
              {"runtime_events", runtimes.size()},
              {"gpu_events", gpu.size()},
              {"annotations", annotations.size()},
              {"linking_key", linking_key},
              {"gpu_linked", gpu_linked},
              {"gpu_unlinked", gpu_unlinked},
              {"gpu_without_cpu_op", gpu_without_op},
              {"python_function_dropped", dropped_python},
              {"other_events_dropped", dropped_other},
              {"tree_bleeds_attached", tree_bleeds},
              {"stream_overruns_clipped", clipped_kernels},
              {"read", stats.to_json()}};
}

namespace {

struct flow_key {
  uint32_t thread;
  int64_t ts;
  bool operator==(const flow_key& o) const { return thread == o.thread && ts == o.ts; }
};
struct flow_hash {
  size_t operator()(const flow_key& k) const { return std::hash<int64_t>{}(k.ts) * 31 + k.thread; }
};

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
    ev_kind kind;
    if (cat == "kernel") kind = ev_kind::kernel;
    else if (cat == "cpu_op") kind = ev_kind::cpu_op;
    else if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "hip_runtime") kind = ev_kind::runtime;
    else if (cat == "gpu_memcpy") kind = ev_kind::memcpy;
    else if (cat == "gpu_memset") kind = ev_kind::memset;
    else if (cat == "user_annotation") kind = ev_kind::user_annotation;
    else if (cat == "gpu_user_annotation") kind = ev_kind::gpu_user_annotation;
    else {
      if (cat == "python_function") ++m_m.dropped_python;
      else if (cat == "ac2g" && e.ph == "f" && e.has_id && e.has_ts) m_flow_end[{thread(e), e.ts_ns}] = e.id;
      else ++m_m.dropped_other;
      return;
    }
    if (!e.has_ts) {
      ++m_m.dropped_other;
      return;
    }
    trace_event t;
    t.uid = e.index;
    t.ts = e.ts_ns;
    t.dur = e.has_dur && e.dur_ns > 0 ? e.dur_ns : 0;
    t.name = m_m.strings.intern(e.name);
    t.thread = thread(e);
    t.kind = kind;
    t.via_driver = cat == "cuda_driver";
    t.has_correlation = e.has_correlation;
    t.correlation = e.correlation;
    t.has_external_id = e.has_external_id;
    t.external_id = e.external_id;
    t.stream = static_cast<int32_t>(e.has_stream ? e.stream : (e.tid_is_str ? 0 : e.tid));
    t.device = static_cast<int32_t>(e.has_device ? e.device : (e.pid_is_str ? 0 : e.pid));
    if (kind == ev_kind::cpu_op) {
      if (!e.input_dims.empty()) t.dims = m_m.strings.intern(e.input_dims);
      if (!e.input_type.empty()) t.types = m_m.strings.intern(e.input_type);
      if (!e.concrete_inputs.empty()) t.concrete = m_m.strings.intern(e.concrete_inputs);
      if (!e.input_strides.empty()) t.strides = m_m.strings.intern(e.input_strides);
    }
    m_m.events.push_back(t);
  }

  std::unordered_map<flow_key, int64_t, flow_hash> m_flow_end;

 private:
  uint32_t thread(const event_view& e) {
    m_key.clear();
    if (e.pid_is_str) m_key.append(e.pid_str);
    else m_key += std::to_string(e.pid);
    m_key.push_back('/');
    if (e.tid_is_str) m_key.append(e.tid_str);
    else m_key += std::to_string(e.tid);
    return m_m.strings.intern(m_key);
  }

  trace_model& m_m;
  std::string m_key;
};

bool is_gpu(ev_kind k) { return k == ev_kind::kernel || k == ev_kind::memcpy || k == ev_kind::memset; }

/// Host call tree over cpu_op and runtime events, per thread.
void build_tree(trace_model& m) {
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_thread;
  for (uint32_t i = 0; i < m.events.size(); ++i) {
    ev_kind k = m.events[i].kind;
    if (k == ev_kind::cpu_op || k == ev_kind::runtime) by_thread[m.events[i].thread].push_back(i);
  }
  for (auto& [thread, idx] : by_thread) {
    std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return m.events[a].ts < m.events[b].ts; });
    std::vector<uint32_t> stack;
    for (uint32_t i : idx) {
      trace_event& e = m.events[i];
      while (!stack.empty() && e.ts >= m.events[stack.back()].end()) stack.pop_back();
      // A sub-µs bleed past the top usually means the top ended early: close it (TraceLens).
      while (stack.size() >= 2 && e.end() > m.events[stack.back()].end() &&
             m.events[stack.back()].end() - e.ts < 1000)
        stack.pop_back();
      if (!stack.empty()) {
        if (e.end() > m.events[stack.back()].end()) ++m.tree_bleeds;
        e.parent = stack.back();
      }
      stack.push_back(i);
    }
  }
}

void link_gpu(trace_model& m, const std::unordered_map<flow_key, int64_t, flow_hash>& flow_end) {
  bool any_corr = false, any_ext = false;
  for (uint32_t i : m.gpu) {
    any_corr |= m.events[i].has_correlation;
    any_ext |= m.events[i].has_external_id;
  }
  m.linking_key = any_corr ? "correlation" : (any_ext ? "External id" : "none");
  std::unordered_map<int64_t, uint32_t> runtime_by_corr, op_by_ext;
  for (uint32_t i : m.runtimes)
    if (m.events[i].has_correlation) runtime_by_corr.emplace(m.events[i].correlation, i);
  for (uint32_t i : m.cpu_ops)
    if (m.events[i].has_external_id) op_by_ext.emplace(m.events[i].external_id, i);
  const uint32_t execute = m.strings.find("execute").value_or(k_none);
  for (uint32_t gi : m.gpu) {
    trace_event& g = m.events[gi];
    if (any_corr) {
      int64_t corr = g.correlation;
      bool have = g.has_correlation;
      if (!have) {
        auto f = flow_end.find({g.thread, g.ts});
        if (f != flow_end.end()) {
          corr = f->second;
          have = true;
        }
      }
      if (have) {
        auto it = runtime_by_corr.find(corr);
        if (it != runtime_by_corr.end()) g.launcher = it->second;
      }
    }
    if (g.launcher != k_none) {
      ++m.gpu_linked;
      for (uint32_t p = m.events[g.launcher].parent; p != k_none; p = m.events[p].parent) {
        if (m.events[p].kind == ev_kind::cpu_op && m.events[p].name != execute) {
          g.op = p;
          break;
        }
      }
      const trace_event& rt = m.events[g.launcher];
      if (g.op == k_none && rt.has_external_id) {
        auto it = op_by_ext.find(rt.external_id);
        if (it != op_by_ext.end()) g.op = it->second;
      }
    } else {
      if (!any_corr && g.has_external_id) {  // no correlation anywhere: External id links op directly
        auto it = op_by_ext.find(g.external_id);
        if (it != op_by_ext.end()) g.op = it->second;
      }
      if (g.op == k_none) ++m.gpu_unlinked;
      else ++m.gpu_linked;
    }
    if (g.op == k_none) ++m.gpu_without_op;
  }
}

void clip_overruns(trace_model& m) {
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_stream;
  for (uint32_t i : m.gpu) by_stream[{m.events[i].device, m.events[i].stream}].push_back(i);
  for (auto& [key, idx] : by_stream) {
    for (size_t k = 0; k + 1 < idx.size(); ++k) {
      trace_event& a = m.events[idx[k]];
      const trace_event& b = m.events[idx[k + 1]];
      if (a.end() > b.ts && b.ts >= a.ts) {
        a.dur = b.ts - a.ts;
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
  std::stable_sort(m.gpu.begin(), m.gpu.end(), [&](uint32_t a, uint32_t b) { return m.events[a].ts < m.events[b].ts; });
  build_tree(m);
  link_gpu(m, sink.m_flow_end);
  if (opts.clip_stream_overruns) clip_overruns(m);
  return m;
}

std::vector<uint32_t> ancestors(const trace_model& m, uint32_t i) {
  std::vector<uint32_t> out;
  for (uint32_t p = m.events[i].parent; p != k_none; p = m.events[p].parent) out.push_back(p);
  return out;
}

}  // namespace magpie::trace
