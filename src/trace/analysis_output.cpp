// CSV / JSON renderings of an analysis (ops, kernels, upstream Magpie's simple roofline CSV).
#include <cmath>

#include "core/csv.h"
#include "core/strings.h"
#include "gpu/gpu_printer.h"
#include "trace/analysis.h"
#include "trace/analysis_printer.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

std::string num(double v) { return std::isfinite(v) ? python_float_repr(v) : std::string(); }
std::string num_opt(const std::optional<double>& v) { return v ? num(*v) : std::string(); }
std::string g6(double v) { return std::isfinite(v) ? strprintf("%.6g", v) : std::string(); }

void line(std::string& out, const std::vector<std::string>& f) {
  for (size_t i = 0; i < f.size(); ++i) {
    if (i) out += ',';
    out += csv_escape(f[i]);
  }
  out += "\r\n";
}

double mib(double bytes) { return bytes / 1048576.0; }

json finite(double v) { return json_finite(v); }

json roof_json(const roofline_point& r) {
  if (!r.ok) return nullptr;
  return json{{"compute_us", r.compute_us}, {"memory_us", r.memory_us}, {"roofline_time_us", r.time_us}, {"bound", r.bound}};
}

}  // namespace

std::string ops_csv(const analysis& a) {
  std::string out;
  line(out, {"op_name", "op_category", "operation_count", "num_kernels", "kernel_time_us_sum", "kernel_time_us_mean",
             "time_pct", "has_perf_model", "gflops", "bytes", "data_moved_mib", "flops_per_byte", "achieved_tflops_mean",
             "achieved_tbps_mean", "compute_spec", "roofline_bound", "roofline_time_us", "pct_roofline_mean",
             "param_signature", "input_dims", "input_type", "concrete_inputs", "note"});
  for (const auto& r : a.ops) {
    bool c = r.model.computed;
    double ai = (c && r.bytes && *r.bytes > 0) ? r.model.flops / *r.bytes : NAN;
    line(out, {r.name, r.category, std::to_string(r.operation_count), std::to_string(r.num_kernels),
               num(r.kernel_time_us_sum), num(r.kernel_time_us_mean), num(r.time_pct),
               r.model.has_model ? "True" : "False", c ? num(r.gflops) : "", c ? num_opt(r.bytes) : "",
               (c && r.bytes) ? num(mib(*r.bytes)) : "", num(ai), num(r.tflops_mean), num(r.tbps_mean),
               r.model.compute_spec, r.roof.ok ? r.roof.bound : "", r.roof.ok ? num(r.roof.time_us) : "",
               num(r.pct_roofline_mean), r.param_signature(), r.input_dims, r.input_type, r.concrete_inputs,
               r.model.note});
  }
  return out;
}

std::string kernels_csv(const analysis& a) {
  std::string out;
  line(out, {"kernel_name", "category", "calls", "total_us", "avg_us", "min_us", "max_us", "pct_of_kernel_time",
             "top_op", "streams", "modelled_gflops", "modelled_mb", "achieved_tflops", "achieved_tbps", "compute_spec",
             "roofline_bound", "roofline_time_us", "pct_roofline"});
  for (const auto& k : a.kernels) {
    std::string streams;
    for (size_t i = 0; i < k.streams.size(); ++i) streams += (i ? ";" : "") + std::to_string(k.streams[i]);
    double t = k.total_us;
    double pct = a.kernels_total_us > 0 ? t / a.kernels_total_us * 100.0 : 0;
    line(out, {k.name, k.category, std::to_string(k.calls), num(t), num(k.avg_us()), num(k.min_us), num(k.max_us),
               num(pct), k.top_op, streams, k.modelled ? num(k.flops / 1e9) : "", k.modelled ? num(k.bytes / 1e6) : "",
               (k.modelled && t > 0) ? num(k.flops / 1e12 / (t / 1e6)) : "",
               (k.modelled && t > 0) ? num(k.bytes / 1e12 / (t / 1e6)) : "", k.compute_spec,
               k.roof.ok ? k.roof.bound : "", k.roof.ok ? num(k.roof.time_us) : "",
               (k.roof.ok && t > 0) ? num(k.roof.time_us / t * 100.0) : ""});
  }
  return out;
}

json analysis_json(const analysis& a, size_t max_rows) {
  json j;
  j["gpu_timeline"] = timeline_json(a.timeline);
  j["communication"] = communication_json(a.timeline);
  json cats = json::object();
  for (const auto& [c, us] : a.category_busy_us) cats[c] = us;
  j["kernel_category_busy_us"] = cats;
  j["kernels_total_us"] = a.kernels_total_us;
  j["ops_kernel_time_us"] = a.ops_kernel_time_us;
  j["unlinked_gpu_events"] = a.unlinked_gpu_events;
  j["gpu_spec"] = a.spec ? gpu::gpu_spec_json(*a.spec) : json(nullptr);
  json ops = json::array();
  for (size_t i = 0; i < a.ops.size() && (max_rows == 0 || i < max_rows); ++i) {
    const op_row& r = a.ops[i];
    json o{{"name", r.name},
           {"category", r.category},
           {"operation_count", r.operation_count},
           {"num_kernels", r.num_kernels},
           {"kernel_time_us_sum", r.kernel_time_us_sum},
           {"kernel_time_us_mean", r.kernel_time_us_mean},
           {"time_pct", r.time_pct},
           {"has_perf_model", r.model.has_model},
           {"input_dims", r.input_dims},
           {"input_type", r.input_type}};
    if (r.model.computed) {
      o["gflops"] = r.gflops;
      o["bytes"] = r.bytes ? json(*r.bytes) : json(nullptr);
      o["flops_per_byte"] = (r.bytes && *r.bytes > 0) ? finite(r.model.flops / *r.bytes) : json(nullptr);
      o["achieved_tflops_mean"] = finite(r.tflops_mean);
      o["achieved_tbps_mean"] = finite(r.tbps_mean);
      o["compute_spec"] = r.model.compute_spec;
      o["params"] = r.model.params;
    }
    o["roofline"] = roof_json(r.roof);
    if (r.roof.ok) o["pct_roofline_mean"] = finite(r.pct_roofline_mean);
    if (!r.model.note.empty()) o["note"] = r.model.note;
    ops.push_back(o);
  }
  j["ops"] = ops;
  json ks = json::array();
  for (size_t i = 0; i < a.kernels.size() && (max_rows == 0 || i < max_rows); ++i) {
    const kernel_row& k = a.kernels[i];
    json o{{"name", k.name}, {"category", k.category}, {"calls", k.calls}, {"total_us", k.total_us},
           {"avg_us", k.avg_us()}, {"min_us", k.min_us}, {"max_us", k.max_us}, {"top_op", k.top_op}};
    if (k.modelled) {
      o["modelled_gflops"] = k.flops / 1e9;
      o["modelled_bytes"] = k.bytes;
      o["achieved_tflops"] = k.total_us > 0 ? finite(k.flops / 1e12 / (k.total_us / 1e6)) : json(nullptr);
      o["achieved_tbps"] = k.total_us > 0 ? finite(k.bytes / 1e12 / (k.total_us / 1e6)) : json(nullptr);
      o["compute_spec"] = k.compute_spec;
    }
    o["roofline"] = roof_json(k.roof);
    if (k.roof.ok && k.total_us > 0) o["pct_roofline"] = k.roof.time_us / k.total_us * 100.0;
    ks.push_back(o);
  }
  j["kernels"] = ks;
  return j;
}

std::string roofline_simple_csv(const analysis& a) {
  bool arch = a.spec != nullptr;
  std::vector<std::string> header = {"source_category", "op_name", "param_signature", "operation_count", "num_kernels",
                                     "kernel_time_ms_sum", "time_pct", "kernel_time_us_mean", "gflops", "data_moved_mb",
                                     "arithmetic_intensity_flops_per_byte", "achieved_tflops_mean",
                                     "achieved_tbps_mean", "compute_spec"};
  if (arch) header.insert(header.end(), {"roofline_bound", "pct_roofline_mean", "roofline_time_us"});
  header.insert(header.end(), {"has_perf_model", "params_json", "input_dims", "input_type"});
  std::string out;
  line(out, header);
  for (const auto& r : a.ops) {
    bool c = r.model.computed;
    double ai = (c && r.bytes && *r.bytes > 0) ? r.model.flops / *r.bytes : NAN;
    std::vector<std::string> row = {r.category,
                                    r.name,
                                    r.param_signature(),
                                    std::to_string(r.operation_count),
                                    std::to_string(r.num_kernels),
                                    g6(r.kernel_time_us_sum / 1000.0),
                                    num(r.time_pct),
                                    num(r.kernel_time_us_mean),
                                    c ? num(r.gflops) : "",
                                    (c && r.bytes) ? num(mib(*r.bytes)) : "",  // TraceLens's "MB" is MiB
                                    num(ai),
                                    num(r.tflops_mean),
                                    num(r.tbps_mean),
                                    r.model.compute_spec};
    if (arch) {
      row.push_back(r.roof.ok ? r.roof.bound : "");
      row.push_back(r.roof.ok ? num(r.pct_roofline_mean) : "");
      row.push_back(r.roof.ok ? num(r.roof.time_us) : "");
    }
    row.push_back(r.model.has_model ? "True" : "False");
    row.push_back(r.model.params.empty() ? "" : r.params_json());
    row.push_back(r.input_dims);
    row.push_back(r.input_type);
    line(out, row);
  }
  return out;
}

}  // namespace magpie::trace
