#include "serve/profiling.h"

#include <chrono>
#include <map>
#include <thread>

#include "core/log.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "trace/api.h"
#include "trace/discovery.h"
#include "trace/gap_config_codec.h"
#include "trace/gap_analysis.h"

namespace magpie::serve {

namespace {

status post(const endpoint_url& url, const std::string& target, const std::string& body, double timeout_s) {
  MAGPIE_ASSIGN_OR_RETURN(http_response r, http_call(url, "POST", target, body, timeout_s));
  if (r.status < 200 || r.status >= 300)
    return error(status_code::unavailable, "POST %s answered HTTP %d: %s (is the server's torch profiler enabled?)",
                 target.c_str(), r.status, std::string(trim(r.body)).substr(0, 300).c_str());
  return ok_status();
}

bool is_trace_file(const fs::path& p) {
  std::string n = p.filename().string();
  return ends_with(n, ".json") || ends_with(n, ".json.gz");
}

}  // namespace

status start_profile(const endpoint_url& url, std::optional<serving_framework> framework, const std::string& server_trace_dir,
                     double timeout_s) {
  std::string body;
  if (framework == serving_framework::sglang) body = dump_compact(json{{"output_dir", server_trace_dir}, {"record_shapes", true}});
  MAGPIE_LOG_INFO("profiler: POST /start_profile");
  return post(url, "/start_profile", body, timeout_s);
}

status stop_profile(const endpoint_url& url, double timeout_s) {
  MAGPIE_LOG_INFO("profiler: POST /stop_profile (the server writes its traces now)");
  return post(url, "/stop_profile", "", timeout_s);
}

std::vector<fs::path> wait_for_traces(const fs::path& dir, double timeout_s, double settle_s) {
  double start = monotonic_seconds(), stable_since = start;
  std::map<fs::path, uintmax_t> last;
  for (;;) {
    std::map<fs::path, uintmax_t> now;
    std::error_code ec;
    if (fs::is_directory(dir, ec))
      for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec) && is_trace_file(it->path())) now[it->path()] = it->file_size(ec);
    double t = monotonic_seconds();
    if (now != last) stable_since = t;
    last = now;
    if ((!now.empty() && t - stable_since >= settle_s) || t - start >= timeout_s) {
      std::vector<fs::path> out;
      for (const auto& [p, s] : now) out.push_back(p);
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

namespace {

void kernel_summary(const fs::path& trace_dir, trace_blocks& out) {
  trace::discovery d = trace::discover_rank_traces(trace_dir);
  if (d.files.empty()) {
    out.errors.push_back("no trace files found in " + trace_dir.string());
    return;
  }
  trace::gap_config kc;  // Magpie: events with cat "kernel" of the first trace, whole span
  kc.categories = std::vector<std::string>{"kernel"};
  kc.ignore_categories = std::vector<std::string>{};
  auto r = trace::analyze_rank(kc, d.files[0].rank, d.files[0].path);
  if (!r.ok()) {
    out.errors.push_back("kernel summary: " + r.get_status().message());
    return;
  }
  if (!r->stats.complete) out.warnings.push_back("trace " + d.files[0].path.string() + " is incomplete: " + r->stats.error);
  size_t n = 0;
  for (const auto& k : r->kernels) {
    if (n++ >= 50) break;
    out.kernel_summary.push_back({{"name", k.name}, {"time_ms", k.total_us / 1000.0},
                                  {"percent", r->total_us > 0 ? 100.0 * k.total_us / r->total_us : 0.0}, {"calls", k.calls}});
    if (out.top_bottlenecks.size() < 10) out.top_bottlenecks.push_back(k.name);
  }
  if (r->kernels.empty()) out.warnings.push_back("the trace holds no kernel events (cat \"kernel\")");
}

/// Magpie's profiler.tracelens block → the trace engine's inference analysis settings.
status_or<trace::inference_config> inference_settings(const benchmark_config& cfg, const std::string& gpu_name) {
  trace::inference_config ic;
  const json& t = cfg.profiler.tracelens;
  if (t.contains("analysis_stages")) {
    const json& st = t["analysis_stages"];
    std::vector<std::string> stages;
    if (st.is_string()) {
      for (const auto& x : split(*json_as_string(st), ','))
        if (!trim(x).empty()) stages.emplace_back(trim(x));
    } else if (st.is_array()) {
      for (const auto& x : st)
        if (auto s = json_as_string(x)) stages.push_back(*s);
    } else {
      return invalid_argument("profiler.tracelens.analysis_stages must be 'all', a list or a comma-separated string");
    }
    if (!stages.empty()) ic.stages = stages;
  }
  if (auto f = json_as_string(json_value(t, "gpu_arch_config"))) ic.gpu_spec_file = *f;
  std::string mode = json_string(t, "analysis_mode", "inference");
  if (mode != "inference") return invalid_argument("profiler.tracelens.analysis_mode '%s': magpie implements 'inference'", mode.c_str());
  ic.export_format = json_string(t, "export_format", "csv");  // legacy boolean export_excel: true → excel
  if (json_bool(t, "export_excel", false)) ic.export_format = "excel";
  ic.isl = cfg.env("ISL");
  ic.osl = cfg.env("OSL");
  ic.conc = cfg.env("CONC");
  ic.gpu_name = gpu_name;
  return ic;
}

}  // namespace

trace_blocks post_process_traces(const benchmark_config& cfg, const fs::path& trace_dir, const fs::path& workspace,
                                 const std::string& gpu_name) {
  trace_blocks out;
  kernel_summary(trace_dir, out);
  if (cfg.gap_analysis_enabled) {
    auto gc = trace::decode_gap_config(cfg.gap_analysis);
    if (!gc.ok()) {
      out.errors.push_back("gap_analysis config: " + gc.get_status().message());
    } else {
      auto g = trace::run_gap_analysis(*gc, trace_dir, workspace / "gap_analysis");
      if (g.ok()) out.gap_analysis = std::move(*g);
      else out.errors.push_back("gap analysis: " + g.get_status().message());
    }
  }
  if (cfg.profiler.tracelens_enabled) {
    auto ic = inference_settings(cfg, gpu_name);
    if (!ic.ok()) {
      out.errors.push_back(ic.get_status().message());
    } else {
      auto t = trace::run_inference_analysis(*ic, trace_dir, workspace / "tracelens");
      if (t.ok()) out.tracelens_analysis = std::move(*t);
      else out.errors.push_back("tracelens analysis: " + t.get_status().message());
    }
  }
  return out;
}

}  // namespace magpie::serve
