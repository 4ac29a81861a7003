#include "trace/analysis.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/strings.h"
#include "trace/util.h"

namespace magpie::trace {

roofline_point roofline(double flops, std::optional<double> bytes, const std::string& compute_spec,
                        const gpu::gpu_spec* spec) {
  roofline_point r;
  if (!spec || !(flops > 0) || !bytes || compute_spec.empty()) return r;
  auto peak = spec->peak_tflops(compute_spec);
  if (!peak || !(spec->mem_bw_gbps > 0)) return r;
  r.compute_us = flops / (*peak * 1e12) * 1e6;
  r.memory_us = *bytes / (spec->mem_bw_gbps * 1e9) * 1e6;
  r.time_us = std::max(r.compute_us, r.memory_us);
  r.bound = r.compute_us >= r.memory_us ? "COMPUTE_BOUND" : "MEMORY_BOUND";
  r.ok = true;
  return r;
}

namespace {

std::string param_value(const json& v) {
  if (auto s = json_as_string(v)) return *s;
  if (auto b = json_as_bool(v)) return *b ? "True" : "False";
  if (v.is_number_integer()) return v.is_number_unsigned() ? v.dump() : std::to_string(json_as_int(v).value_or(0));
  if (auto d = json_as_number(v)) return python_float_repr(*d);
  return v.dump();
}

}  // namespace

std::string op_row::param_signature() const {
  std::string s;
  for (auto it = model.params.begin(); it != model.params.end(); ++it) {
    std::string v = param_value(it.value());
    if (v.empty()) continue;
    if (!s.empty()) s += ",";
    s += it.key() + "=" + v;
  }
  return s;
}

std::string op_row::params_json() const {
  std::map<std::string, std::string> sorted;
  for (auto it = model.params.begin(); it != model.params.end(); ++it) sorted[it.key()] = param_value(it.value());
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : sorted) j[k] = v;
  return j.dump();
}

std::vector<step_span> step_spans(const trace_model& m) {
  std::vector<step_span> out;
  for (uint32_t i : m.annotations) {
    const trace_event& e = m.events[i];
    auto a = parse_step_annotation(m.name(e));
    if (a) out.push_back({i, *a, e.ts, e.end()});
  }
  std::stable_sort(out.begin(), out.end(), [](const step_span& a, const step_span& b) { return a.ts < b.ts; });
  return out;
}

namespace {

const step_annotation* enclosing_step(const std::vector<step_span>& steps, const trace_event& e) {
  auto it = std::upper_bound(steps.begin(), steps.end(), e.ts, [](int64_t t, const step_span& s) { return t < s.ts; });
  while (it != steps.begin()) {
    --it;
    if (it->ts <= e.ts && e.end() <= it->end) return &it->ann;
    if (it->end < e.ts) break;
  }
  return nullptr;
}

/// Per interned string: memoised facts about names and argument texts.
class name_facts {
 public:
  explicit name_facts(const trace_model& m) : m_m(m), m_model(m.strings.size(), -1), m_repr(m.strings.size()) {}
  bool has_model(uint32_t name) {
    if (m_model[name] < 0) m_model[name] = has_perf_model(m_m.strings.str(name)) ? 1 : 0;
    return m_model[name] == 1;
  }
  const std::string& repr(uint32_t id) {
    static const std::string empty;
    if (id == k_none) return empty;
    if (!m_repr[id]) m_repr[id] = python_repr_json(m_m.text(id));
    return *m_repr[id];
  }

 private:
  const trace_model& m_m;
  std::vector<int8_t> m_model;
  std::vector<std::optional<std::string>> m_repr;
};

/// The op an event is attributed to: outermost modelled ancestor-or-self of the launcher op.
uint32_t attributed_op(const trace_model& m, uint32_t op, name_facts& nf) {
  uint32_t best = k_none;
  for (uint32_t p = op; p != k_none; p = m.events[p].parent)
    if (m.events[p].kind == ev_kind::cpu_op && nf.has_model(m.events[p].name)) best = p;
  return best == k_none ? op : best;
}

struct instance {
  uint32_t op = k_none;       ///< cpu_op, or k_none for a synthetic op
  uint32_t launcher = k_none; ///< synthetic ops: the runtime event
  uint32_t kernel = k_none;   ///< synthetic ops: the kernel's name id
  /// Identifies the row name: the op's name id, or (1 << 63 | runtime name << 32 | kernel name).
  uint64_t name_key(const trace_model& m) const {
    if (op != k_none) return m.events[op].name;
    return (uint64_t{1} << 63) | (uint64_t{m.events[launcher].name} << 32) | kernel;
  }
};

std::string name_of_key(const trace_model& m, uint64_t key) {
  if (!(key >> 63)) return m.strings.str(static_cast<uint32_t>(key));
  return m.strings.str(static_cast<uint32_t>((key >> 32) & 0x7FFFFFFFu)) + "->" + m.strings.str(static_cast<uint32_t>(key)) +
         " (Synthetic Op)";
}

std::string instance_name(const trace_model& m, const instance& in) { return name_of_key(m, in.name_key(m)); }

/// Groups GPU events into op instances (attributed op, or runtime + kernel name for synthetic
/// ops); `gpu_of` gets each instance's GPU events in the order given.
std::vector<instance> instances_of(const trace_model& m, const std::vector<uint32_t>& gpu_events, name_facts& nf,
                                   std::vector<size_t>* inst_of, grouped<uint32_t>* gpu_of, int64_t* unlinked) {
  std::vector<instance> inst;
  std::vector<uint32_t> op_slot(m.events.size(), k_none);   // attributed op → instance
  std::unordered_map<uint64_t, uint32_t> synthetic_slot;    // (launcher, kernel name) → instance
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  pairs.reserve(gpu_events.size());
  inst_of->assign(gpu_events.size(), SIZE_MAX);
  for (size_t k = 0; k < gpu_events.size(); ++k) {
    const trace_event& g = m.events[gpu_events[k]];
    uint32_t* slot;
    instance in;
    if (g.op != k_none) {
      in.op = attributed_op(m, g.op, nf);
      slot = &op_slot[in.op];
    } else if (g.launcher != k_none) {
      in.launcher = g.launcher;
      in.kernel = g.name;
      slot = &synthetic_slot.try_emplace((uint64_t{g.launcher} << 32) | g.name, k_none).first->second;
    } else {
      ++*unlinked;
      continue;
    }
    if (*slot == k_none) {
      *slot = static_cast<uint32_t>(inst.size());
      inst.push_back(in);
    }
    pairs.push_back({*slot, gpu_events[k]});
    (*inst_of)[k] = *slot;
  }
  *gpu_of = group_by_key(pairs, inst.size());
  return inst;
}

struct row_key {
  uint32_t name, dims, types, concrete, strides;
  bool operator==(const row_key& o) const {
    return name == o.name && dims == o.dims && types == o.types && concrete == o.concrete && strides == o.strides;
  }
};
struct row_key_hash {
  size_t operator()(const row_key& k) const {
    uint64_t h = k.name;
    for (uint32_t v : {k.dims, k.types, k.concrete, k.strides}) h = h * 0x9E3779B97F4A7C15ull + v;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

struct row_acc {
  std::vector<double> tflops, tbps, pct;
  int64_t ns = 0;  ///< exact kernel-time sum
};

/// Compute-spec name per op instance as an index into a short table ("" first): a string per
/// instance was the largest late allocation of a big report.
struct spec_ids {
  std::vector<std::string> names{""};
  std::vector<uint32_t> of;  ///< per instance
  explicit spec_ids(size_t n) : of(n, 0) {}
  void set(size_t i, const std::string& name) {
    size_t k = std::find(names.begin(), names.end(), name) - names.begin();
    if (k == names.size()) names.push_back(name);
    of[i] = static_cast<uint32_t>(k);
  }
  const std::string& at(size_t i) const { return names[of[i]]; }
};

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::nan("") : s / static_cast<double>(v.size());
}

/// Op rows (TraceLens's unified table); per instance, its flops / bytes / spec for the kernel table.
void op_rows(const trace_model& m, const std::vector<instance>& inst, const grouped<uint32_t>& gpu_of,
             const std::vector<step_span>& steps, name_facts& nf, analysis& a, std::vector<double>& inst_flops,
             std::vector<double>& inst_bytes, spec_ids& inst_spec, std::vector<double>& inst_sum_dur) {
  interner synthetic;  // row names of synthetic ops
  std::unordered_map<row_key, size_t, row_key_hash> row_of;
  std::vector<row_acc> acc;
  std::vector<interval> ivs, scratch;
  for (size_t i = 0; i < inst.size(); ++i) {
    const instance& in = inst[i];
    ivs.clear();
    for (const uint32_t* gp = gpu_of.begin(i); gp != gpu_of.end(i); ++gp) {
      ivs.push_back({m.events[*gp].ts, m.events[*gp].end()});
      inst_sum_dur[i] += static_cast<double>(m.events[*gp].dur());
    }
    const uint32_t first_gpu = *gpu_of.begin(i);
    const size_t n_gpu = static_cast<size_t>(gpu_of.end(i) - gpu_of.begin(i));
    int64_t t_ns = busy_time(ivs.data(), ivs.data() + ivs.size(), scratch);
    double t_us = static_cast<double>(t_ns) / 1000.0;
    const trace_event* op = in.op != k_none ? &m.events[in.op] : nullptr;
    const arg_texts& at = op ? m.args(*op) : m.arg_tuples[0];
    row_key key = op ? row_key{op->name, at.dims, at.types, at.concrete, at.strides}
                     : row_key{synthetic.intern(instance_name(m, in)) | 0x80000000u, k_none, k_none, k_none, k_none};
    auto [it, fresh] = row_of.emplace(key, a.ops.size());
    if (fresh) {
      op_row r;
      r.name = instance_name(m, in);
      perf_result pr;
      if (op) {
        op_args args{r.name, m.text(at.dims), m.text(at.types), m.text(at.concrete), m.text(at.strides)};
        pr = model_op(args, enclosing_step(steps, *op));
        r.input_dims = nf.repr(at.dims);
        r.input_type = nf.repr(at.types);
        r.concrete_inputs = nf.repr(at.concrete);
        r.input_strides = nf.repr(at.strides);
      }
      r.category = pr.has_model ? pr.category : op_category(r.name, m.name(m.events[first_gpu]));
      r.ex_uid = op ? op->uid : m.events[m.events[first_gpu].launcher].uid;  // synthetic: its runtime event
      r.num_kernels = static_cast<int64_t>(n_gpu);
      r.gflops = pr.computed ? pr.flops / 1e9 : 0;
      r.bytes = pr.computed ? pr.bytes : std::nullopt;
      r.roof = pr.computed ? roofline(pr.flops, pr.bytes, pr.compute_spec, a.spec) : roofline_point{};
      r.model = std::move(pr);
      a.ops.push_back(std::move(r));
      acc.emplace_back();
    }
    size_t ri = it->second;
    op_row& r = a.ops[ri];
    // Paged attention depends on the enclosing step: its model is evaluated per instance.
    perf_result per;
    const perf_result* pr = &r.model;
    if (op && r.model.category == "InferenceAttention" && !fresh) {
      op_args args{r.name, m.text(at.dims), m.text(at.types), m.text(at.concrete), m.text(at.strides)};
      per = model_op(args, enclosing_step(steps, *op));
      pr = &per;
    }
    if (pr->computed) {
      inst_flops[i] = pr->flops;
      inst_bytes[i] = pr->bytes.value_or(0);
      inst_spec.set(i, pr->compute_spec);
    }
    ++r.operation_count;
    acc[ri].ns += t_ns;
    if (pr->computed && t_us > 0) {
      acc[ri].tflops.push_back(pr->flops / 1e12 / (t_us / 1e6));
      if (pr->bytes) acc[ri].tbps.push_back(*pr->bytes / 1e12 / (t_us / 1e6));
      roofline_point rp = pr == &r.model ? r.roof : roofline(pr->flops, pr->bytes, pr->compute_spec, a.spec);
      if (rp.ok) acc[ri].pct.push_back(rp.time_us / t_us * 100.0);
    }
  }
  for (size_t ri = 0; ri < a.ops.size(); ++ri) {
    op_row& r = a.ops[ri];
    r.kernel_time_us_sum = static_cast<double>(acc[ri].ns) / 1000.0;
    r.kernel_time_us_mean = r.kernel_time_us_sum / static_cast<double>(r.operation_count);
    r.tflops_mean = mean_of(acc[ri].tflops);
    r.tbps_mean = mean_of(acc[ri].tbps);
    r.pct_roofline_mean = mean_of(acc[ri].pct);
    a.ops_kernel_time_us += r.kernel_time_us_sum;
  }
  for (auto& r : a.ops) r.time_pct = a.ops_kernel_time_us > 0 ? r.kernel_time_us_sum / a.ops_kernel_time_us * 100.0 : 0;
  std::stable_sort(a.ops.begin(), a.ops.end(), [](const op_row& x, const op_row& y) {
    if (x.kernel_time_us_sum != y.kernel_time_us_sum) return x.kernel_time_us_sum > y.kernel_time_us_sum;
    return x.ex_uid < y.ex_uid;
  });
}

/// Busy time (ns) per category of (category, GPU event) pairs: sorted by (category, start) and
/// swept once, without a copy of the intervals per category.
std::vector<int64_t> busy_per_category(const trace_model& m, std::vector<std::pair<uint32_t, uint32_t>>& cat_ev, size_t n) {
  std::sort(cat_ev.begin(), cat_ev.end(), [&](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : m.events[x.second].ts < m.events[y.second].ts;
  });
  std::vector<int64_t> out(n, 0);
  for (size_t i = 0; i < cat_ev.size();) {
    uint32_t c = cat_ev[i].first;
    int64_t cb = m.events[cat_ev[i].second].ts, ce = m.events[cat_ev[i].second].end();
    for (++i; i < cat_ev.size() && cat_ev[i].first == c; ++i) {
      const trace_event& e = m.events[cat_ev[i].second];
      if (e.ts <= ce) {
        ce = std::max(ce, e.end());
      } else {
        out[c] += ce - cb;
        cb = e.ts, ce = e.end();
      }
    }
    out[c] += ce - cb;
  }
  return out;
}

struct kernel_acc {
  std::unordered_map<uint64_t, int64_t> ops;  ///< op name key → kernels of this name it launched
  std::map<std::string, double> spec_flops;
  int64_t ns = 0;
};

/// Kernel rows (by exact name) with flops and bytes attributed from modelled ops.
void kernel_rows(const trace_model& m, const std::vector<uint32_t>& gpu_events, const std::vector<instance>& inst,
                 const std::vector<size_t>& inst_of, const std::vector<double>& inst_flops,
                 const std::vector<double>& inst_bytes, const spec_ids& inst_spec,
                 const std::vector<double>& inst_sum_dur, analysis& a) {
  std::unordered_map<uint32_t, size_t> kslot;
  std::vector<kernel_acc> acc;
  std::vector<std::string> cat_names;
  std::unordered_map<std::string, size_t> cat_slot;
  std::vector<std::pair<uint32_t, uint32_t>> cat_ev;  // (category, GPU event)
  cat_ev.reserve(gpu_events.size());
  std::vector<uint32_t> kcat;
  int64_t total_ns = 0;
  for (size_t k = 0; k < gpu_events.size(); ++k) {
    const trace_event& g = m.events[gpu_events[k]];
    auto [it, fresh] = kslot.emplace(g.name, a.kernels.size());
    if (fresh) {
      kernel_row kr;
      kr.name = m.name(g);
      kr.category = kernel_category(m, g);
      kr.min_us = INFINITY;
      kr.max_us = 0;
      auto [c, cf] = cat_slot.emplace(kr.category, cat_names.size());
      if (cf) cat_names.push_back(kr.category);
      kcat.push_back(static_cast<uint32_t>(c->second));
      a.kernels.push_back(std::move(kr));
      acc.emplace_back();
    }
    size_t ki = it->second;
    kernel_row& kr = a.kernels[ki];
    double d = static_cast<double>(g.dur()) / 1000.0;
    ++kr.calls;
    acc[ki].ns += g.dur();
    total_ns += g.dur();
    kr.min_us = std::min(kr.min_us, d);
    kr.max_us = std::max(kr.max_us, d);
    if (std::find(kr.streams.begin(), kr.streams.end(), g.stream) == kr.streams.end()) kr.streams.push_back(g.stream);
    cat_ev.push_back({kcat[ki], gpu_events[k]});
    size_t ii = inst_of[k];
    if (ii == SIZE_MAX) continue;
    ++acc[ki].ops[inst[ii].name_key(m)];
    if (inst_flops[ii] > 0 && inst_sum_dur[ii] > 0) {
      double share = static_cast<double>(g.dur()) / inst_sum_dur[ii];
      kr.flops += inst_flops[ii] * share;
      kr.bytes += inst_bytes[ii] * share;
      kr.modelled = true;
      acc[ki].spec_flops[inst_spec.at(ii)] += inst_flops[ii] * share;
    }
  }
  a.kernels_total_us = static_cast<double>(total_ns) / 1000.0;
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    kernel_row& kr = a.kernels[i];
    kr.total_us = static_cast<double>(acc[i].ns) / 1000.0;
    int64_t best = 0;
    for (const auto& [key, c] : acc[i].ops) {
      std::string n = name_of_key(m, key);
      if (c > best || (c == best && n < kr.top_op)) best = c, kr.top_op = std::move(n);
    }
    double bf = -1;
    for (const auto& [sp, f] : acc[i].spec_flops)
      if (f > bf) bf = f, kr.compute_spec = sp;
    if (kr.modelled) kr.roof = roofline(kr.flops, kr.bytes, kr.compute_spec, a.spec);
  }
  std::stable_sort(a.kernels.begin(), a.kernels.end(),
                   [](const kernel_row& x, const kernel_row& y) { return x.total_us > y.total_us; });
  std::vector<int64_t> cat_busy = busy_per_category(m, cat_ev, cat_names.size());
  for (size_t c = 0; c < cat_names.size(); ++c) a.category_busy_us[cat_names[c]] = static_cast<double>(cat_busy[c]) / 1000.0;
}

}  // namespace

analysis analyze(const trace_model& m, const std::vector<uint32_t>& gpu_events, const gpu::gpu_spec* spec,
                 const std::vector<step_span>& steps, const analysis_options& opts) {
  analysis a;
  a.spec = spec;
  if (opts.linked_only_timeline) {
    std::vector<uint32_t> linked;
    for (uint32_t g : gpu_events)
      if (m.events[g].tracelens_linked) linked.push_back(g);
    a.timeline_excluded = gpu_events.size() - linked.size();
    a.timeline = gpu_timeline(m, linked, 0, true);
    a.timeline_rule = "tracelens: linked GPU events only (TraceLens's default; unlinked left out)";
  } else {
    a.timeline = gpu_timeline(m, gpu_events);
    a.timeline_rule = "magpie: all GPU events (unlinked included)";
  }
  a.ops_by_name = ops_by_name(m, gpu_events, opts.linked_only_timeline);
  name_facts nf(m);
  std::vector<size_t> inst_of;
  grouped<uint32_t> gpu_of;
  std::vector<instance> inst = instances_of(m, gpu_events, nf, &inst_of, &gpu_of, &a.unlinked_gpu_events);
  std::vector<double> inst_flops(inst.size(), 0), inst_bytes(inst.size(), 0), inst_sum_dur(inst.size(), 0);
  spec_ids inst_spec(inst.size());
  op_rows(m, inst, gpu_of, steps, nf, a, inst_flops, inst_bytes, inst_spec, inst_sum_dur);
  kernel_rows(m, gpu_events, inst, inst_of, inst_flops, inst_bytes, inst_spec, inst_sum_dur, a);
  return a;
}

}  // namespace magpie::trace
