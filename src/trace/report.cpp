// run_trace_report and run_inference_analysis (api.h).
#include "trace/report.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <memory>

#include "core/log.h"
#include "core/strings.h"
#include "trace/api.h"
#include "trace/discovery.h"
#include "trace/health.h"
#include "trace/report_printer.h"
#include "trace/report_result.h"
#include "trace/xlsx.h"

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

model_options model_options_for(bool tracelens_compat) {
  model_options o;
  o.clip_stream_overruns = !tracelens_compat;
  o.drop_bleeding_events = tracelens_compat;
  return o;
}

status write_analysis_files(const fs::path& dir, const analysis& a, bool xlsx, const std::string& xlsx_name,
                            std::vector<std::pair<std::string, std::string>> extra, std::vector<std::string>* files) {
  MAGPIE_RETURN_IF_ERROR(make_dirs(dir));
  std::vector<std::pair<std::string, std::string>> tables = {{"ops", ops_csv(a)},
                                                             {"kernels", kernels_csv(a)},
                                                             {"ops_by_name", ops_by_name_csv(a.ops_by_name)},
                                                             {"gpu_timeline", a.timeline.to_csv()}};
  for (auto& e : extra) tables.push_back(std::move(e));
  std::vector<xlsx_sheet> sheets;
  for (const auto& [name, csv] : tables) {
    fs::path f = dir / (name + ".csv");
    MAGPIE_RETURN_IF_ERROR(write_file_atomic(f, csv));
    files->push_back(f.string());
    sheets.push_back({name, csv});
  }
  if (xlsx) {
    fs::path x = dir / xlsx_name;
    MAGPIE_RETURN_IF_ERROR(write_xlsx(x, sheets));
    files->push_back(x.string());
  }
  return ok_status();
}

std::string label_value(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '.') o.push_back('p');
    else if (std::isalnum(static_cast<unsigned char>(c))) o.push_back(c);
  }
  return o.empty() ? "unknown" : o;
}

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

status_or<report_result> run_trace_report(const report_config& cfg, const fs::path& trace_file,
                                          const fs::path& out_dir) {
  MAGPIE_ASSIGN_OR_RETURN(trace_model m, load_trace_model(trace_file, model_options_for(cfg.tracelens_compat)));
  report_result r;
  r.trace = m.summary();
  r.input = check_model(m, true);
  if (!r.input.usable()) return r;
  MAGPIE_ASSIGN_OR_RETURN(spec_choice sc, choose_gpu_spec(cfg.gpu_spec_file, cfg.gpu_name, m.device_name, cfg.use_achievable));
  if (sc.spec) r.spec = std::make_shared<const gpu::gpu_spec>(std::move(*sc.spec));
  r.tracelens_compat = cfg.tracelens_compat;
  r.gpu_spec_choice = sc.how;
  r.steps = split_steps(m);
  r.analysis = analyze(m, m.gpu, r.spec.get(), step_spans(m), {.linked_only_timeline = cfg.tracelens_compat});
  r.output_files = {(out_dir / "report.json").string()};
  MAGPIE_RETURN_IF_ERROR(write_analysis_files(out_dir, r.analysis, cfg.xlsx, "report.xlsx",
                                              {{"execution_details", execution_details_csv(r.steps)}}, &r.output_files));
  if (cfg.html) {
    report_page page{"magpie trace report: " + trace_file.filename().string(), &m, &r.analysis, &r.steps, &r.input,
                     static_cast<size_t>(cfg.top_k)};
    MAGPIE_RETURN_IF_ERROR(write_file_atomic(out_dir / "report.html", report_html(page)));
    r.output_files.push_back((out_dir / "report.html").string());
  }
  MAGPIE_RETURN_IF_ERROR(write_json_file(out_dir / "report.json", trace_report_json(r)));
  return r;
}

}  // namespace magpie::trace
