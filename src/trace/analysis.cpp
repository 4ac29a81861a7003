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
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return python_float_repr(v.get<double>());
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

/// The op an event is attributed to: outermost modelled ancestor-or-self of the launcher op.
uint32_t attributed_op(const trace_model& m, uint32_t op) {
  uint32_t best = k_none;
  for (uint32_t p = op; p != k_none; p = m.events[p].parent) {
    if (m.events[p].kind == ev_kind::cpu_op && has_perf_model(m.name(m.events[p]))) best = p;
  }
  return best == k_none ? op : best;
}

struct instance {
  uint32_t op = k_none;       ///< cpu_op, or k_none for a synthetic op
  std::string name;
  std::vector<uint32_t> gpu;  ///< GPU events
};

std::string repr_or_empty(const trace_model& m, uint32_t id) {
  return id == k_none ? std::string() : python_repr_json(m.text(id));
}

}  // namespace

analysis analyze(const trace_model& m, const std::vector<uint32_t>& gpu_events, const gpu::gpu_spec* spec,
                 const std::vector<step_span>& steps) {
  analysis a;
  a.spec = spec;
  a.timeline = gpu_timeline(m, gpu_events);
  // Instances.
  std::vector<instance> inst;
  std::unordered_map<uint64_t, size_t> slot;  // key: op index, or (launcher | name) for synthetic
  std::vector<size_t> inst_of(gpu_events.size(), SIZE_MAX);
  for (size_t k = 0; k < gpu_events.size(); ++k) {
    const trace_event& g = m.events[gpu_events[k]];
    uint64_t key;
    std::string name;
    uint32_t op = k_none;
    if (g.op != k_none) {
      op = attributed_op(m, g.op);
      key = op;
    } else if (g.launcher != k_none) {
      key = (uint64_t{1} << 63) | (uint64_t{g.launcher} << 32) | g.name;
      name = m.name(m.events[g.launcher]) + "->" + m.name(g) + " (Synthetic Op)";
    } else {
      ++a.unlinked_gpu_events;
      continue;
    }
    auto [it, fresh] = slot.emplace(key, inst.size());
    if (fresh) inst.push_back({op, op != k_none ? m.name(m.events[op]) : name, {}});
    inst[it->second].gpu.push_back(gpu_events[k]);
    inst_of[k] = it->second;
  }
  // Per-instance metrics, grouped into rows.
  std::unordered_map<std::string, size_t> row_of;
  std::vector<std::vector<double>> row_tflops, row_tbps, row_pct;
  std::vector<int64_t> row_ns;  // exact kernel-time sums
  std::vector<double> inst_flops(inst.size(), 0), inst_bytes(inst.size(), 0), inst_sum_dur(inst.size(), 0);
  std::vector<std::string> inst_spec(inst.size());
  for (size_t i = 0; i < inst.size(); ++i) {
    const instance& in = inst[i];
    std::vector<interval> ivs;
    for (uint32_t gi : in.gpu) {
      ivs.push_back({m.events[gi].ts, m.events[gi].end()});
      inst_sum_dur[i] += static_cast<double>(m.events[gi].dur);
    }
    int64_t t_ns = busy_time(ivs);
    double t_us = static_cast<double>(t_ns) / 1000.0;
    perf_result pr;
    std::string dims, types, conc, strides;
    uint64_t uid = m.events[in.gpu.front()].uid;
    if (in.op != k_none) {
      const trace_event& op = m.events[in.op];
      uid = op.uid;
      op_args args{in.name, m.text(op.dims), m.text(op.types), m.text(op.concrete), m.text(op.strides)};
      pr = model_op(args, enclosing_step(steps, op));
      dims = repr_or_empty(m, op.dims);
      types = repr_or_empty(m, op.types);
      conc = repr_or_empty(m, op.concrete);
      strides = repr_or_empty(m, op.strides);
    }
    if (pr.computed) {
      inst_flops[i] = pr.flops;
      inst_bytes[i] = pr.bytes.value_or(0);
      inst_spec[i] = pr.compute_spec;
    }
    std::string key = in.name + '\x1f' + dims + '\x1f' + types + '\x1f' + conc + '\x1f' + strides;
    auto [it, fresh] = row_of.emplace(key, a.ops.size());
    if (fresh) {
      op_row r;
      r.name = in.name;
      r.category = pr.has_model ? pr.category : op_category(in.name, m.name(m.events[in.gpu.front()]));
      r.input_dims = dims;
      r.input_type = types;
      r.concrete_inputs = conc;
      r.input_strides = strides;
      r.ex_uid = uid;
      r.num_kernels = static_cast<int64_t>(in.gpu.size());
      r.model = pr;
      r.gflops = pr.computed ? pr.flops / 1e9 : 0;
      r.bytes = pr.computed ? pr.bytes : std::nullopt;
      r.roof = pr.computed ? roofline(pr.flops, pr.bytes, pr.compute_spec, spec) : roofline_point{};
      a.ops.push_back(std::move(r));
      row_tflops.emplace_back();
      row_tbps.emplace_back();
      row_pct.emplace_back();
      row_ns.push_back(0);
    }
    size_t ri = it->second;
    op_row& r = a.ops[ri];
    ++r.operation_count;
    row_ns[ri] += t_ns;
    if (pr.computed && t_us > 0) {
      row_tflops[ri].push_back(pr.flops / 1e12 / (t_us / 1e6));
      if (pr.bytes) row_tbps[ri].push_back(*pr.bytes / 1e12 / (t_us / 1e6));
      if (r.roof.ok) row_pct[ri].push_back(r.roof.time_us / t_us * 100.0);
    }
  }
  auto mean_of = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? std::nan("") : s / static_cast<double>(v.size());
  };
  for (size_t ri = 0; ri < a.ops.size(); ++ri) {
    op_row& r = a.ops[ri];
    r.kernel_time_us_sum = static_cast<double>(row_ns[ri]) / 1000.0;
    r.kernel_time_us_mean = r.kernel_time_us_sum / static_cast<double>(r.operation_count);
    r.tflops_mean = mean_of(row_tflops[ri]);
    r.tbps_mean = mean_of(row_tbps[ri]);
    r.pct_roofline_mean = mean_of(row_pct[ri]);
    a.ops_kernel_time_us += r.kernel_time_us_sum;
  }
  for (auto& r : a.ops) r.time_pct = a.ops_kernel_time_us > 0 ? r.kernel_time_us_sum / a.ops_kernel_time_us * 100.0 : 0;
  std::stable_sort(a.ops.begin(), a.ops.end(), [](const op_row& x, const op_row& y) {
    if (x.kernel_time_us_sum != y.kernel_time_us_sum) return x.kernel_time_us_sum > y.kernel_time_us_sum;
    return x.ex_uid < y.ex_uid;
  });
  // Kernel table.
  std::unordered_map<uint32_t, size_t> kslot;
  std::vector<std::map<std::string, int64_t>> kops;
  std::vector<std::map<std::string, double>> kspec_flops;
  std::map<std::string, std::vector<interval>> by_cat;
  std::vector<int64_t> k_ns;
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
      a.kernels.push_back(std::move(kr));
      kops.emplace_back();
      kspec_flops.emplace_back();
      k_ns.push_back(0);
    }
    kernel_row& kr = a.kernels[it->second];
    double d = static_cast<double>(g.dur) / 1000.0;
    ++kr.calls;
    k_ns[it->second] += g.dur;
    total_ns += g.dur;
    kr.min_us = std::min(kr.min_us, d);
    kr.max_us = std::max(kr.max_us, d);
    if (std::find(kr.streams.begin(), kr.streams.end(), g.stream) == kr.streams.end()) kr.streams.push_back(g.stream);
    by_cat[kr.category].push_back({g.ts, g.end()});
    size_t ii = inst_of[k];
    if (ii == SIZE_MAX) continue;
    ++kops[it->second][inst[ii].name];
    if (inst_flops[ii] > 0 && inst_sum_dur[ii] > 0) {
      double share = static_cast<double>(g.dur) / inst_sum_dur[ii];
      kr.flops += inst_flops[ii] * share;
      kr.bytes += inst_bytes[ii] * share;
      kr.modelled = true;
      kspec_flops[it->second][inst_spec[ii]] += inst_flops[ii] * share;
    }
  }
  a.kernels_total_us = static_cast<double>(total_ns) / 1000.0;
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    kernel_row& kr = a.kernels[i];
    kr.total_us = static_cast<double>(k_ns[i]) / 1000.0;
    int64_t best = 0;
    for (const auto& [n, c] : kops[i])
      if (c > best) best = c, kr.top_op = n;
    double bf = -1;
    for (const auto& [s, f] : kspec_flops[i])
      if (f > bf) bf = f, kr.compute_spec = s;
    if (kr.modelled) kr.roof = roofline(kr.flops, kr.bytes, kr.compute_spec, spec);
  }
  std::stable_sort(a.kernels.begin(), a.kernels.end(),
                   [](const kernel_row& x, const kernel_row& y) { return x.total_us > y.total_us; });
  for (auto& [cat, ivs] : by_cat) a.category_busy_us[cat] = static_cast<double>(busy_time(ivs)) / 1000.0;
  return a;
}

}  // namespace magpie::trace
