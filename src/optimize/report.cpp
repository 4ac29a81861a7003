// The loop report for people: the summary table and loop_report.md.
#include <cmath>

#include "core/strings.h"
#include "core/utf8.h"
#include "optimize/loop.h"

namespace magpie::optimize {

namespace {

std::string f(const json& v, const char* fmt = "%.2f") {
  auto x = json_as_number(v);
  return x ? strprintf(fmt, *x) : std::string("-");
}

const json& obj(const json& r, const char* k) {
  static const json empty = json::object();
  return r.is_object() && r.contains(k) && r[k].is_object() ? r[k] : empty;
}

/// (before, after, change) cells of one metric of the e2e block.
std::array<std::string, 3> side(const json& rep, const char* name) {
  const json& m = obj(obj(obj(rep, "e2e"), "metrics"), name);
  if (!json_bool(m, "tested", false)) return {"-", "-", "-"};
  auto cell = [&](const char* p) {
    return strprintf("%.2f ± %.2f (%.2f–%.2f)", json_number(m, (std::string(p) + "_mean").c_str(), 0),
                     json_number(m, (std::string(p) + "_std").c_str(), 0), json_number(m, (std::string(p) + "_min").c_str(), 0),
                     json_number(m, (std::string(p) + "_max").c_str(), 0));
  };
  return {cell("before"), cell("after"),
          strprintf("%+.2f%%, p=%.3g, %s (smallest detectable %.2f%%)", json_number(m, "change_pct", 0), json_number(m, "p_value", 1),
                    json_bool(m, "beyond_noise", false) ? "beyond noise" : "within noise", json_number(m, "mde_pct", 0))};
}

std::string runs_only(const json& rep, const char* key, const char* name) {
  std::vector<double> xs;
  if (rep.contains(key) && rep[key].is_array())
    for (const auto& r : rep[key])
      if (auto x = json_as_number(json_value(json_value(r, "metrics"), name))) xs.push_back(*x);
  if (xs.empty()) return "-";
  double m = 0, sd = 0, lo = xs[0], hi = xs[0];
  for (double x : xs) m += x, lo = std::min(lo, x), hi = std::max(hi, x);
  m /= static_cast<double>(xs.size());
  for (double x : xs) sd += (x - m) * (x - m);
  sd = xs.size() > 1 ? std::sqrt(sd / static_cast<double>(xs.size() - 1)) : 0;
  return strprintf("%.2f ± %.2f (%.2f–%.2f, n=%zu)", m, sd, lo, hi, xs.size());
}

std::string short_name(const std::string& n) { return n.size() <= 60 ? n : utf8_prefix(n, 57) + "..."; }

std::string median_us(const json& candidate) {
  auto ns = json_as_number(json_value(candidate, "median_ns"));
  return ns ? strprintf("%.2f", *ns / 1e3) : std::string("-");
}

}  // namespace

std::string summary_table(const json& rep) {
  const json &ch = obj(rep, "chosen"), &k = obj(rep, "kernel"), &stop = obj(rep, "stop"), &pred = obj(rep, "prediction");
  auto tp = side(rep, "output_throughput"), tpot = side(rep, "tpot_mean_ms");
  if (tp[0] == "-") tp[0] = runs_only(rep, rep.contains("baseline_runs") ? "baseline_runs" : "initial_runs", "output_throughput");
  if (tpot[0] == "-") tpot[0] = runs_only(rep, rep.contains("baseline_runs") ? "baseline_runs" : "initial_runs", "tpot_mean_ms");
  std::string warm;
  for (auto it = obj(rep, "warmups").begin(); it != obj(rep, "warmups").end(); ++it)
    warm += (warm.empty() ? "" : "; ") + it.key() + " " + f(it.value().value("num_prompts", json()), "%.0f") + " req in " +
            f(it.value().value("duration_s", json())) + " s";
  const json& design = obj(rep, "design");
  std::vector<std::pair<std::string, std::string>> rows = {
      {"outcome", json_string(rep, "outcome", "-") + (rep.contains("control_result") ? " (" + json_string(rep, "control_result") + ")" : "")},
      {"prompts per run", strprintf("%s (concurrency %s)", f(json_value(rep, "num_prompts"), "%.0f").c_str(),
                                    f(obj(rep, "benchmark").value("concurrency", json()), "%.0f").c_str())},
      {"warm-up passes (discarded)", warm.empty() ? "-" : warm},
      {"measurement design", design.empty() ? "-" : strprintf("%s, servers %s, %s pairs, %s server starts", json_string(design, "order").c_str(),
                                                                json_string(design, "servers").c_str(), f(json_value(design, "pairs"), "%.0f").c_str(),
                                                                f(json_value(design, "server_starts"), "%.0f").c_str())},
      {"baseline output tok/s", tp[0]}, {"baseline TPOT ms", tpot[0]},
      {"chosen kernel", ch.empty() ? "-" : strprintf("%s (#%s, %s%% of window, op %s)", short_name(json_string(ch, "kernel")).c_str(),
                                                    f(json_value(ch, "rank"), "%.0f").c_str(), f(json_value(ch, "pct_total")).c_str(),
                                                    json_string(ch, "op").c_str())},
      {"source", ch.empty() ? "-" : strprintf("%s:%s (confidence %s)", json_string(ch, "file").c_str(), f(json_value(ch, "line"), "%.0f").c_str(),
                                             f(json_value(ch, "confidence")).c_str())},
      {"kernel speedup", k.contains("winner") ? strprintf("%s: %.3fx (95%% CI %.3f–%.3f) vs %s", json_string(k, "winner").c_str(),
                                                          json_number(k, "speedup", 0), json_number(k, "ci_low", 0), json_number(k, "ci_high", 0),
                                                          json_string(k, "baseline_id").c_str())
                                              : "-"},
      {"new output tok/s", tp[1]}, {"new TPOT ms", tpot[1]},
      {"e2e change (throughput)", tp[2]}, {"e2e change (TPOT)", tpot[2]},
      {"kernel gain predicts", pred.empty() ? "-" : strprintf("%s%% of GPU time x (1 - 1/%.3f) = %+.2f%% GPU time; %+.2f%% throughput if GPU-bound (measured %+.2f%%)",
                                                             f(json_value(pred, "op_share_of_gpu_time_pct")).c_str(), json_number(pred, "kernel_speedup", 0),
                                                             json_number(pred, "gpu_time_change_pct", 0), json_number(pred, "throughput_change_pct_if_gpu_bound", 0),
                                                             json_number(pred, "measured_change_pct", 0))},
      {"stop reason", !stop.empty() ? json_string(stop, "code") + ": " + json_string(stop, "message")
                      : json_string(rep, "outcome") == "failed" ? "step failed: " + json_string(rep, "error").substr(0, 300)
                                                                : "-"}};
  size_t w = 0;
  for (const auto& [a, b] : rows) w = std::max(w, a.size());
  std::string out;
  for (const auto& [a, b] : rows) out += a + std::string(w - a.size() + 2, ' ') + b + "\n";
  return out;
}

std::string report_markdown(const json& rep) {
  std::string md = "# Optimization loop report\n\n```\n" + summary_table(rep) + "```\n\n";
  if (rep.contains("ranking") && rep["ranking"].is_array() && !rep["ranking"].empty()) {
    md += "## Kernel ranking (steady-state window, by total time)\n\n| # | kernel | calls | total µs | % | disposition | why |\n|---|---|---|---|---|---|---|\n";
    for (size_t i = 0; i < rep["ranking"].size() && i < 15; ++i) {
      const json& r = rep["ranking"][i];
      md += strprintf("| %d | `%s` | %lld | %.1f | %.2f | %s | %s |\n", r.value("rank", 0),
                      replace_all(json_string(r, "name").substr(0, 70), "|", "/").c_str(), static_cast<long long>(json_number(r, "calls", 0)),
                      json_number(r, "total_us", 0), json_number(r, "pct_total", 0), json_string(r, "disposition").c_str(),
                      replace_all(json_string(r, "why").substr(0, 90), "|", "/").c_str());
    }
    md += "\n";
  }
  if (const json& ch = obj(rep, "chosen"); !ch.empty())
    md += strprintf("Chosen: `%s` → `%s:%s` (op `%s`).\n\n", json_string(ch, "kernel").c_str(), json_string(ch, "file").c_str(),
                    f(json_value(ch, "line"), "%.0f").c_str(), json_string(ch, "op").c_str());
  if (const json& k = obj(rep, "kernel"); !k.empty()) {
    md += "## Candidates (magpie compare, correctness gate vs " + json_string(k, "reference", "-") +
          ")\n\n| id | outcome | verdict | speedup | 95% CI | median µs | why not ranked |\n|---|---|---|---|---|---|---|\n";
    for (const auto& c : json_value(k, "kernels")) {
      // The interval says enough for faster/slower/same; the others say why they do not rank.
      const std::string v = json_string(c, "verdict");
      const bool interval_says = v == "baseline" || v == "faster" || v == "slower" || v == "same";
      const std::string why = interval_says ? "" : replace_all(utf8_prefix(json_string(c, "reason"), 160), "|", "/");
      md += strprintf("| %s | %s | %s | %s | %s–%s | %s | %s |\n", json_string(c, "id").c_str(), json_string(c, "outcome").c_str(),
                      v.c_str(), f(json_value(c, "speedup"), "%.3f").c_str(), f(json_value(c, "ci_low"), "%.3f").c_str(),
                      f(json_value(c, "ci_high"), "%.3f").c_str(), median_us(c).c_str(), why.c_str());
    }
    md += "\n";
  }
  if (const json& d = obj(rep, "design"); !d.empty()) {
    md += "## End-to-end series\n\nOrder of runs: " + join(d.value("sequence", std::vector<std::string>{}), " ") + "\n\n";
    md += "| run | side | server | output tok/s | TPOT ms | workspace |\n|---|---|---|---|---|---|\n";
    for (const char* key : {"baseline_runs", "after_runs"})
      for (size_t i = 0; rep.contains(key) && i < rep[key].size(); ++i) {
        const json& r = rep[key][i];
        md += strprintf("| %zu | %s | %s | %s | %s | %s |\n", i, key[0] == 'b' ? "A (baseline)" : "B (candidate)", json_string(r, "server").c_str(),
                        f(obj(r, "metrics").value("output_throughput", json())).c_str(), f(obj(r, "metrics").value("tpot_mean_ms", json()), "%.3f").c_str(),
                        json_string(r, "workspace").c_str());
      }
    if (d.contains("budget_stop")) md += "\nTime budget: " + json_string(d, "budget_stop") + "\n";
    md += "\n";
  }
  md += "## Steps\n\n| step | status | seconds |\n|---|---|---|\n";
  for (auto it = obj(rep, "steps").begin(); it != obj(rep, "steps").end(); ++it)
    md += strprintf("| %s | %s%s | %s |\n", it.key().c_str(), json_string(it.value(), "status").c_str(),
                    json_bool(it.value(), "resumed", false) ? " (resumed)" : "", f(it.value().value("seconds", json())).c_str());
  md += "\nFull data: loop_report.json; commands and logs: logs/.\n";
  return md;
}

}  // namespace magpie::optimize
