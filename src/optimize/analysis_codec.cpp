#include "optimize/analysis_codec.h"

#include <algorithm>

#include "core/csv.h"
#include "core/strings.h"

namespace magpie::optimize {

namespace {

/// The first `n` rows of a stage's roofline CSV by kernel time, the columns the summary keeps.
std::vector<std::vector<std::pair<std::string, std::string>>> top_stage_rows(const std::string& path, size_t n) {
  std::vector<std::vector<std::pair<std::string, std::string>>> rows;
  auto text = read_file(path);
  if (!text.ok()) return rows;
  auto t = parse_csv(*text, true);
  if (!t.ok() || t->size() < 2) return rows;
  const auto& head = t->front();
  std::vector<std::vector<std::string>> body(t->begin() + 1, t->end());
  auto col = std::find(head.begin(), head.end(), "kernel_time_ms_sum") - head.begin();
  if (static_cast<size_t>(col) < head.size())
    std::stable_sort(body.begin(), body.end(), [&](const auto& a, const auto& b) {
      auto va = static_cast<size_t>(col) < a.size() ? parse_double(a[col]) : std::nullopt;
      auto vb = static_cast<size_t>(col) < b.size() ? parse_double(b[col]) : std::nullopt;
      return va.value_or(0) > vb.value_or(0);
    });
  static const std::vector<std::string> keep = {"name", "kernel_name", "op_name", "category", "kernel_time_ms_sum", "time_pct",
                                                "TFLOPS/s_mean", "TB/s_mean"};
  for (size_t i = 0; i < body.size() && i < n; ++i) {
    std::vector<std::pair<std::string, std::string>> r;
    for (size_t c = 0; c < head.size() && c < body[i].size(); ++c) {
      if (std::find(keep.begin(), keep.end(), head[c]) == keep.end() && !contains(head[c], "roofline")) continue;
      // A repeated column keeps its first position and its last value (as a JSON object would).
      auto it = std::find_if(r.begin(), r.end(), [&](const auto& x) { return x.first == head[c]; });
      if (it == r.end()) r.emplace_back(head[c], body[i][c]);
      else it->second = body[i][c];
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

json member_or_null(const json& o, const char* key) { return o.is_object() && o.contains(key) ? o[key] : json(nullptr); }

json roofline_of(const json& x) {
  return x.contains("roofline") && x["roofline"].is_object() ? x["roofline"] : json::object();
}

}  // namespace

analysis_summary summarize_analysis(const json& rep, const json& st, const json& src, const fs::path& gap_csv) {
  analysis_summary out;
  out.gap_csv = gap_csv.string();
  const json a = rep.is_object() && rep.contains("analysis") ? rep["analysis"] : json::object();
  out.gpu_spec = member_or_null(rep, "gpu_spec_choice");
  out.gpu_timeline = member_or_null(a, "gpu_timeline");
  if (a.contains("kernels") && a["kernels"].is_array())
    for (size_t i = 0; i < a["kernels"].size() && i < 10; ++i) {
      const json& k = a["kernels"][i];
      out.top_kernels.push_back({json_string(k, "name").substr(0, 120), k.value("calls", json(nullptr)),
                                 k.value("total_us", json(nullptr)), k.value("category", json(nullptr)),
                                 roofline_of(k).value("bound", json(nullptr)), k.value("pct_roofline", json(nullptr))});
    }
  if (a.contains("ops") && a["ops"].is_array())
    for (size_t i = 0; i < a["ops"].size() && i < 10; ++i) {
      const json& o = a["ops"][i];
      out.top_ops.push_back({json_string(o, "name").substr(0, 120), o.value("category", json(nullptr)),
                             o.value("kernel_time_us_sum", o.value("kernel_us", json(nullptr))),
                             roofline_of(o).value("bound", json(nullptr)), o.value("pct_roofline_mean", json(nullptr))});
    }
  if (rep.is_object() && rep.contains("error")) out.report_error = rep["error"];
  if (st.is_object() && st.contains("stage_results") && st["stage_results"].is_object())
    for (auto it = st["stage_results"].begin(); it != st["stage_results"].end(); ++it) {
      const json& r = it.value();
      json pick = r.contains("phase_pick") && r["phase_pick"].is_object() ? r["phase_pick"] : json::object();
      std::string csv = json_string(r, "simple_summary_file");
      out.stages.push_back({it.key(), pick.value("step_name", json(nullptr)), pick.value("selection_reason", json(nullptr)),
                            r.value("error", json(nullptr)), csv, top_stage_rows(csv, 5)});
    }
  out.stages_errors = st.is_object() && st.contains("errors") ? st["errors"] : json::array();
  if (st.is_object() && st.contains("error")) out.stages_errors.push_back(st["error"]);
  out.sources_summary = src.is_object() && src.contains("error") ? json{{"error", src["error"]}} : src.value("summary", json(nullptr));
  return out;
}

}  // namespace magpie::optimize
