// Workspace → run_record (see extract.h).
#include "store/extract.h"

#include <chrono>
#include <ctime>
#include <set>

#include "core/state_row_codec.h"
#include "core/states.h"
#include "core/strings.h"
#include "store/report_codec.h"

namespace magpie::store {
namespace {

const std::set<std::string>& volatile_keys() {
  static const std::set<std::string> k = {"output_dir", "workspace", "workspace_dir", "timestamp", "date",
                                          "label", "start_time", "end_time", "output-dir", "run_id"};
  return k;
}

nlohmann::json canonical(const json& j) {
  if (j.is_object()) {
    nlohmann::json o = nlohmann::json::object();  // std::map keys: sorted
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!volatile_keys().count(it.key())) o[it.key()] = canonical(it.value());
    return o;
  }
  if (j.is_array()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& x : j) a.push_back(canonical(x));
    return a;
  }
  return nlohmann::json::parse(j.dump());
}

std::string fnv_hex(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return strprintf("%016llx", static_cast<unsigned long long>(h));
}

void add(std::vector<metric>* out, std::string name, double v, std::string unit, std::string dir, json extra = json::object()) {
  out->push_back({std::move(name), v, std::move(unit), std::move(dir), std::move(extra)});
}

std::string throughput_unit(const std::string& key) {
  if (contains(key, "request")) return "req/s";
  if (contains(key, "token") || contains(key, "output")) return "tok/s";
  return "";
}

void benchmark_metrics(const json& r, std::vector<metric>* out) {
  if (r.contains("throughput") && r["throughput"].is_object()) {
    for (auto it = r["throughput"].begin(); it != r["throughput"].end(); ++it) {
      auto value = json_as_number(it.value());
      if (!value) continue;
      const std::string& k = it.key();
      std::string name = "throughput." + k;
      double v = *value;
      if (contains(k, "throughput") || contains(k, "goodput")) add(out, name, v, throughput_unit(k), "higher");
      else if (k == "completed_requests") add(out, name, v, "count", "higher");
      else if (k == "duration_seconds") add(out, name, v, "s", "none");
      else add(out, name, v, contains(k, "tokens") ? "tokens" : "", "none");
    }
  }
  if (r.contains("latency") && r["latency"].is_object()) {
    for (auto m = r["latency"].begin(); m != r["latency"].end(); ++m) {
      if (!m.value().is_object()) continue;
      for (auto s = m.value().begin(); s != m.value().end(); ++s) {
        if (auto v = json_as_number(s.value()); v && ends_with(s.key(), "_ms"))
          add(out, "latency." + m.key() + "." + s.key(), *v, "ms", "lower");
      }
    }
  }
  if (auto t = json_as_number(json_value(r, "execution_time"))) add(out, "execution_time", *t, "s", "none");
}

std::string kernel_id_of(const json& res, size_t i) {
  if (res.contains("extra") && res["extra"].is_object() && res["extra"].contains("kernel_id"))
    return json_string(res["extra"], "kernel_id", "");
  if (res.contains("kernel_config") && res["kernel_config"].is_object())
    return json_string(res["kernel_config"], "kernel_id", json_string(res["kernel_config"], "id", ""));
  return "kernel_" + std::to_string(i);
}

void kernel_metrics(const json& results, std::vector<metric>* out) {
  if (!results.is_array()) return;
  for (size_t i = 0; i < results.size(); ++i) {
    const json& res = results[i];
    if (!res.is_object()) continue;
    std::string id = kernel_id_of(res, i);
    if (res.contains("timing") && res["timing"].is_object() && json_bool(res["timing"], "success", false) &&
        res["timing"].contains("stats_ns")) {
      const json& s = res["timing"]["stats_ns"];
      json extra = {{"n", json_number(s, "n", 0)}, {"p25", json_number(s, "p25", 0) / 1e3},
                    {"p75", json_number(s, "p75", 0) / 1e3}, {"rel_stdev", json_number(s, "rel_stdev", 0)}};
      add(out, id + ".kernel_time_median_us", json_number(s, "median", 0) / 1e3, "us", "lower", extra);
    }
    if (auto score = json_as_number(json_value(res, "score"))) add(out, id + ".score", *score, "", "higher");
    if (res.contains("correctness_state"))
      add(out, id + ".correct", row_correct(res) ? 1.0 : 0.0, "bool", "higher");
  }
}

}  // namespace

std::string config_hash(const json& config) { return fnv_hex(canonical(config).dump()); }

std::vector<metric> extract_metrics(run_kind mode, const json& r) {
  std::vector<metric> out;
  if (mode == run_kind::benchmark) {
    benchmark_metrics(r, &out);
  } else if (mode == run_kind::analyze) {
    kernel_metrics(r.contains("results") ? r["results"] : json(), &out);
  } else if (mode == run_kind::compare && r.contains("results") && r["results"].is_object()) {
    const json& res = r["results"];
    kernel_metrics(res.contains("kernel_results") ? res["kernel_results"] : json(), &out);
    if (res.contains("verdicts") && res["verdicts"].is_array()) {
      for (const auto& v : res["verdicts"]) {
        if (auto x = json_as_number(json_value(v, "speedup_vs_baseline")))
          add(&out, json_string(v, "kernel_id", "kernel") + ".speedup_vs_baseline", *x, "x", "higher");
      }
    }
  }
  return out;
}

}  // namespace magpie::store
