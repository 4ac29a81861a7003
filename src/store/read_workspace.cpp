// read_workspace: mode detection, config hash source, success, summary and per-request
// samples (vLLM-style result JSON with ttfts / latencies / itls arrays in seconds).
#include <ctime>

#include "core/states.h"
#include "core/state_row_codec.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "store/extract.h"
#include "store/report_codec.h"

namespace magpie::store {
namespace {

constexpr uintmax_t k_max_sample_file = 256u << 20;

std::vector<double> seconds_to_ms(const json& arr) {
  std::vector<double> v;
  if (!arr.is_array()) return v;
  for (const auto& x : arr)
    if (auto d = json_as_number(x)) v.push_back(*d * 1e3);
  return v;
}

/// Adds ttft/e2el/itl/tpot samples (ms) from a vLLM bench-serve style object.
void samples_from_result(const json& r, std::map<std::string, std::vector<double>>* out) {
  if (!r.is_object()) return;
  auto ttft = seconds_to_ms(r.contains("ttfts") ? r["ttfts"] : json());
  auto e2el = seconds_to_ms(r.contains("latencies") ? r["latencies"] : json());
  if (!ttft.empty()) (*out)["latency.ttft"] = ttft;
  if (!e2el.empty()) (*out)["latency.e2el"] = e2el;
  if (r.contains("itls") && r["itls"].is_array()) {
    std::vector<double> itl;
    for (const auto& per : r["itls"]) {
      auto v = seconds_to_ms(per);
      itl.insert(itl.end(), v.begin(), v.end());
    }
    if (!itl.empty()) (*out)["latency.itl"] = itl;
  }
  if (r.contains("output_lens") && r["output_lens"].is_array() && ttft.size() == e2el.size() &&
      r["output_lens"].size() == ttft.size()) {
    std::vector<double> tpot;
    for (size_t i = 0; i < ttft.size(); ++i) {
      double n = json_as_number(r["output_lens"][i]).value_or(0);
      if (n > 1) tpot.push_back((e2el[i] - ttft[i]) / (n - 1));
    }
    if (!tpot.empty()) (*out)["latency.tpot"] = tpot;
  }
}

void find_samples(const fs::path& ws, const json& report, std::map<std::string, std::vector<double>>* out) {
  if (report.contains("raw_result")) samples_from_result(report["raw_result"], out);
  if (!out->empty()) return;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(ws, ec)) {
    std::string n = e.path().filename().string();
    if (!ends_with(n, ".json") || ends_with(n, "_report.json") || !e.is_regular_file(ec) ||
        e.file_size(ec) > k_max_sample_file)
      continue;
    auto j = read_json_file(e.path());
    if (!j.ok() || !j->is_object() || !(j->contains("ttfts") || j->contains("latencies"))) continue;
    samples_from_result(*j, out);
    if (!out->empty()) return;
  }
}

std::string mtime_stamp(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec) return {};
  auto sys = std::chrono::time_point_cast<std::chrono::seconds>(t - fs::file_time_type::clock::now() +
                                                                std::chrono::system_clock::now());
  std::time_t tt = std::chrono::system_clock::to_time_t(sys);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d_%H%M%S", &tm);
  return buf;
}

json config_source(run_kind mode, const fs::path& ws, const json& r) {
  if (r.contains("config") && r["config"].is_object()) return r["config"];
  std::error_code ec;
  if (fs::exists(ws / "config.yaml", ec)) {
    auto t = read_file(ws / "config.yaml");
    if (t.ok()) {
      std::vector<std::string> kept;  // volatile lines dropped, whitespace normalised
      for (const auto& line : split(*t, '\n')) {
        std::string_view l = trim(line);
        if (l.empty() || starts_with(l, "#") || starts_with(l, "output_dir") || starts_with(l, "timestamp")) continue;
        kept.emplace_back(l);
      }
      return json(join(kept, "\n"));
    }
  }
  json cfg = json::array();
  const json* results = nullptr;
  if (mode == run_kind::analyze && r.contains("results")) results = &r["results"];
  if (mode == run_kind::compare && r.contains("results") && r["results"].contains("kernel_results"))
    results = &r["results"]["kernel_results"];
  if (results && results->is_array())
    for (const auto& k : *results)
      if (k.is_object() && k.contains("kernel_config")) cfg.push_back(k["kernel_config"]);
  return cfg;
}

bool success_of(run_kind mode, const json& r) {
  if (mode == run_kind::benchmark) return json_bool(r, "success", false);
  if (mode == run_kind::compare) {  // as_expected: kernels wrong on purpose (expect: incorrect) do not fail the run
    if (!r.contains("results") || !r["results"].contains("comparison_metrics")) return false;
    const json& m = r["results"]["comparison_metrics"];
    return json_bool(m, "as_expected", json_bool(m, "all_correct", false));
  }
  if (!r.contains("results") || !r["results"].is_array() || r["results"].empty()) return false;
  for (const auto& k : r["results"])
    if (!row_correct(k)) return false;
  return true;
}

json summary_of(run_kind mode, const json& r, std::string* name) {
  json s = json::object();
  if (mode == run_kind::benchmark) {
    s["framework"] = json_string(r, "framework");
    s["model"] = json_string(r, "model");
    *name = json_string(r, "framework") + "/" + json_string(r, "model");
    return s;
  }
  std::vector<std::string> ids;
  if (r.contains("summary") && r["summary"].is_array())
    for (const auto& row : r["summary"]) ids.push_back(json_string(row, "kernel_id"));
  s["kernels"] = ids;
  *name = join(ids, ",");
  return s;
}

/// An interrupted run without a report: mode and name from the directory name
/// (<mode>[_<label>]_<YYYYmmdd_HHMMSS>), the config hash from its config.yaml.
status_or<run_record> interrupted_record(run_record rec) {
  std::string dir = rec.workspace.filename().string();
  std::optional<run_kind> kind;
  for (run_kind k : k_run_kinds)
    if (starts_with(dir, std::string(run_kind_name(k)) + "_")) kind = k;
  if (!kind)
    return not_found("'%s' is marked INCOMPLETE but its name starts with no run kind (analyze_, compare_, benchmark_)",
                     rec.workspace.c_str());
  rec.mode = *kind;
  rec.name = dir;
  rec.timestamp = dir.size() >= 15 ? dir.substr(dir.size() - 15) : mtime_stamp(rec.workspace);
  if (rec.timestamp.size() != 15 || rec.timestamp[8] != '_') rec.timestamp = mtime_stamp(rec.workspace);
  rec.config_hash = config_hash(config_source(rec.mode, rec.workspace, json::object()));
  rec.success = false;
  rec.summary = {{"state", rec.state}, {"reason", rec.state_reason}};
  return rec;
}

}  // namespace

status_or<run_record> read_workspace(const fs::path& workspace) {
  run_record rec;
  rec.workspace = absolute_path(workspace);
  std::error_code ec;
  if (!fs::is_directory(rec.workspace, ec)) return not_found("workspace '%s' is not a directory", workspace.c_str());
  std::optional<run_kind> kind;  // the first report found: benchmark, compare, analyze
  for (run_kind k : {run_kind::benchmark, run_kind::compare, run_kind::analyze}) {
    fs::path f = rec.workspace / (std::string(run_kind_name(k)) + "_report.json");
    if (fs::exists(f, ec)) {
      kind = k;
      rec.report_path = f;
      break;
    }
  }
  rec.state_reason = incomplete_reason(rec.workspace);
  if (!rec.state_reason.empty()) rec.state = "interrupted";
  if (!kind && !rec.state_reason.empty()) return interrupted_record(std::move(rec));
  if (!kind)
    return not_found("'%s' holds no analyze_report.json, compare_report.json or benchmark_report.json",
                     workspace.c_str());
  auto report = read_json_file(rec.report_path);
  if (!report.ok()) return report.get_status();
  if (!report->is_object()) return parse_error("%s: the report is not a JSON object", rec.report_path.c_str());
  const json& r = *report;
  rec.mode = *kind;
  rec.timestamp = json_string(r, "timestamp");
  if (rec.timestamp.empty()) rec.timestamp = mtime_stamp(rec.report_path);
  rec.config_hash = config_hash(config_source(rec.mode, rec.workspace, r));
  rec.success = success_of(rec.mode, r) && rec.state == "complete";
  rec.summary = summary_of(rec.mode, r, &rec.name);
  if (rec.state != "complete") rec.summary["state"] = rec.state, rec.summary["reason"] = rec.state_reason;
  rec.metrics = extract_metrics(rec.mode, r);
  if (rec.mode == run_kind::benchmark) find_samples(rec.workspace, r, &rec.samples);
  return rec;
}

}  // namespace magpie::store
