// run_trace_report and run_inference_analysis (api.h).
#include "trace/report.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "core/log.h"
#include "core/strings.h"
#include "trace/api.h"
#include "trace/discovery.h"

namespace magpie::trace {

status_or<spec_choice> choose_gpu_spec(const fs::path& spec_file, const std::string& gpu_name,
                                       const std::string& device_name, bool use_achievable) {
  spec_choice c;
  if (!spec_file.empty()) {
    MAGPIE_ASSIGN_OR_RETURN(gpu::gpu_spec s, gpu::load_arch_json(spec_file));
    c.spec = s;
    c.how = "--gpu-spec " + spec_file.string();
    return c;
  }
  auto table = gpu::load_default_spec_table();
  if (!table.ok()) {
    if (!gpu_name.empty()) return table.get_status();
    c.how = "no roofline: " + table.get_status().message();
    return c;
  }
  const std::string& want = gpu_name.empty() ? device_name : gpu_name;
  const gpu::spec_entry* e = gpu::match_spec(*table, want);
  if (!e) {
    if (!gpu_name.empty()) return invalid_argument("no GPU spec entry matches '%s' (see data/gpu_specs.json)", gpu_name.c_str());
    c.how = want.empty() ? "no roofline: the trace names no device and no --gpu was given"
                         : "no roofline: no spec entry matches device '" + want + "'";
    return c;
  }
  c.spec = gpu::resolve_spec(*e, use_achievable);
  c.how = "table entry " + e->name + " for '" + want + "' (" + (use_achievable ? "achievable" : "datasheet") + ")";
  return c;
}

namespace {

status write_analysis_files(const fs::path& dir, const analysis& a) {
  MAGPIE_RETURN_IF_ERROR(make_dirs(dir));
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(dir / "ops.csv", ops_csv(a)));
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(dir / "kernels.csv", kernels_csv(a)));
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(dir / "gpu_timeline.csv", a.timeline.to_csv()));
  return ok_status();
}

json steps_json(const stage_split& s) {
  json a = json::array();
  for (const auto& st : s.steps) {
    json j{{"idx", st.idx},
           {"name", st.name},
           {"phase", st.phase},
           {"batch_size", st.batch_size},
           {"num_requests", st.num_requests},
           {"num_gpu_events", st.gpu.size()},
           {"gpu_duration_us", static_cast<double>(st.gpu_duration) / 1000.0},
           {"gpu_busy_us", static_cast<double>(st.gpu_busy) / 1000.0}};
    if (st.ann) j["annotation"] = st.ann->to_json();
    a.push_back(j);
  }
  return a;
}

/// Magpie's file-name value sanitiser: '.' → 'p', other non-alphanumerics dropped.
std::string label_value(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '.') o.push_back('p');
    else if (std::isalnum(static_cast<unsigned char>(c))) o.push_back(c);
  }
  return o.empty() ? "unknown" : o;
}

/// Magpie's rank-0 trace patterns (vLLM, SGLang), then rank discovery.
fs::path find_rank0_trace(const fs::path& dir_in) {
  std::error_code ec;
  fs::path dir = fs::is_directory(dir_in / "torch_trace", ec) ? dir_in / "torch_trace" : dir_in;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  auto first = [&](auto pred) -> fs::path {
    for (const auto& f : files)
      if (pred(f.filename().string())) return f;
    return {};
  };
  const std::vector<std::function<bool(const std::string&)>> rules = {
      [](const std::string& n) { return contains(n, "-rank_0.") && contains(n, "trace.json.gz"); },
      [](const std::string& n) { return contains(n, "rank0") && ends_with(n, ".pt.trace.json.gz"); },
      [](const std::string& n) { return contains(n, "rank-0") && ends_with(n, ".trace.json.gz"); },
      [](const std::string& n) { return starts_with(n, "merged-") && ends_with(n, ".trace.json.gz"); },
      [](const std::string& n) { return contains(n, "TP-0") && ends_with(n, ".trace.json.gz"); },
      [](const std::string& n) { return ends_with(n, ".trace.json.gz") && !contains(to_lower(n), "async_llm"); },
  };
  for (const auto& r : rules)
    if (fs::path p = first(r); !p.empty()) return p;
  discovery d = discover_rank_traces(dir);
  return d.files.empty() ? fs::path() : d.files.front().path;
}

}  // namespace

status_or<json> run_trace_report(const report_config& cfg, const fs::path& trace_file, const fs::path& out_dir) {
  MAGPIE_ASSIGN_OR_RETURN(trace_model m, load_trace_model(trace_file));
  MAGPIE_ASSIGN_OR_RETURN(spec_choice sc, choose_gpu_spec(cfg.gpu_spec_file, cfg.gpu_name, m.device_name, cfg.use_achievable));
  const gpu::gpu_spec* spec = sc.spec ? &*sc.spec : nullptr;
  stage_split split = split_steps(m);
  analysis a = analyze(m, m.gpu, spec, step_spans(m));
  MAGPIE_RETURN_IF_ERROR(write_analysis_files(out_dir, a));
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(out_dir / "execution_details.csv", execution_details_csv(split)));
  json j;
  j["trace"] = m.summary_json();
  j["gpu_spec_choice"] = sc.how;
  j["analysis"] = analysis_json(a);
  j["steps"] = {{"source", split.source}, {"notes", split.notes}, {"steps", steps_json(split)}};
  json picks = json::object();
  for (const char* st : {"prefilldecode", "decode", "prefill"}) picks[st] = pick_step(split, st, std::nullopt).to_json(split);
  j["steps"]["phase_picks"] = picks;
  json files = json::array({(out_dir / "report.json").string(), (out_dir / "ops.csv").string(),
                            (out_dir / "kernels.csv").string(), (out_dir / "gpu_timeline.csv").string(),
                            (out_dir / "execution_details.csv").string()});
  if (cfg.html) {
    MAGPIE_RETURN_IF_ERROR(write_file_atomic(out_dir / "report.html",
                                             report_html("magpie trace report: " + trace_file.filename().string(), m, a,
                                                         split, static_cast<size_t>(cfg.top_k))));
    files.push_back((out_dir / "report.html").string());
  }
  j["output_files"] = files;
  MAGPIE_RETURN_IF_ERROR(write_json_file(out_dir / "report.json", j));
  return j;
}

status_or<json> run_inference_analysis(const inference_config& cfg, const fs::path& trace_dir, const fs::path& out_dir) {
  std::vector<std::string> stages;
  for (const auto& s : cfg.stages) {
    if (to_lower(s) == "all") {
      stages = {"prefilldecode", "decode", "prefill"};
      break;
    }
    std::string c = canonical_stage(s);
    if (c.empty()) return invalid_argument("unknown analysis stage '%s' (prefilldecode, decode, prefill, all)", s.c_str());
    if (std::find(stages.begin(), stages.end(), c) == stages.end()) stages.push_back(c);
  }
  json b;
  b["enabled"] = true;
  b["analysis_mode"] = "inference";
  b["engine"] = "magpie";
  b["analysis_stages"] = stages;
  b["tl_extension"] = nullptr;
  b["trace_dir"] = trace_dir.string();
  b["split_dir"] = (out_dir / "trace_split").string();
  b["capture_folder"] = nullptr;
  b["output_dir"] = out_dir.string();
  b["gpu_arch_platform"] = nullptr;
  json errors = json::array(), warnings = json::array(), files = json::array();
  fs::path rank0 = cfg.trace_file.empty() ? find_rank0_trace(trace_dir) : cfg.trace_file;
  b["rank0_trace"] = rank0.empty() ? json(nullptr) : json(rank0.string());
  b["phase_picks"] = json::object();
  b["stage_results"] = json::object();
  if (rank0.empty()) {
    errors.push_back("No rank-0 trace found in " + trace_dir.string());
    b["output_files"] = files;
    b["errors"] = errors;
    b["warnings"] = warnings;
    return b;
  }
  MAGPIE_ASSIGN_OR_RETURN(trace_model m, load_trace_model(rank0));
  if (!m.stats.complete) warnings.push_back(rank0.filename().string() + ": " + m.stats.error);
  MAGPIE_ASSIGN_OR_RETURN(spec_choice sc, choose_gpu_spec(cfg.gpu_spec_file, cfg.gpu_name, m.device_name, cfg.use_achievable));
  const gpu::gpu_spec* spec = sc.spec ? &*sc.spec : nullptr;
  if (spec) b["gpu_arch_platform"] = spec->name;
  else warnings.push_back(sc.how);
  b["gpu_spec_choice"] = sc.how;
  stage_split split = split_steps(m);
  b["split_source"] = split.source;
  for (const auto& n : split.notes) warnings.push_back(n);
  MAGPIE_RETURN_IF_ERROR(make_dirs(out_dir / "trace_split"));
  fs::path details = out_dir / "trace_split" / "execution_details.csv";
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(details, execution_details_csv(split)));
  files.push_back(details.string());
  std::optional<int64_t> conc = parse_int(cfg.conc);
  std::vector<step_span> spans = step_spans(m);
  for (const auto& stage : stages) {
    phase_pick p = pick_step(split, stage, conc);
    b["phase_picks"][stage] = p.to_json(split);
    json r{{"stage", stage}, {"trace_path", rank0.string()}, {"phase_pick", b["phase_picks"][stage]}};
    fs::path dir = out_dir / p.label;
    r["output_dir"] = dir.string();
    if (!p.step) {
      r["error"] = p.selection_reason;
      r["files"] = json::array();
      warnings.push_back(stage + ": " + p.selection_reason);
      b["stage_results"][stage] = r;
      continue;
    }
    analysis a = analyze(m, split.steps[*p.step].gpu, spec, spans);
    MAGPIE_RETURN_IF_ERROR(write_analysis_files(dir, a));
    fs::path simple = out_dir / (p.label + "_ISL" + label_value(cfg.isl) + "_OSL" + label_value(cfg.osl) + "_CONC" +
                                 label_value(cfg.conc) + "_kernel_roofline_simple.csv");
    MAGPIE_RETURN_IF_ERROR(write_file_atomic(simple, roofline_simple_csv(a)));
    json fl = json::array({(dir / "ops.csv").string(), (dir / "kernels.csv").string(), (dir / "gpu_timeline.csv").string()});
    r["files"] = fl;
    r["simple_summary_file"] = simple.string();
    r["gpu_timeline"] = a.timeline.to_json();
    for (const auto& f : fl) files.push_back(f);
    files.push_back(simple.string());
    b["stage_results"][stage] = r;
  }
  b["output_files"] = files;
  b["errors"] = errors;
  b["warnings"] = warnings;
  return b;
}

}  // namespace magpie::trace
