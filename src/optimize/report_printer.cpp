// The loop report for people: the summary table and loop_report.md.
#include "optimize/report_printer.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/strings.h"
#include "core/utf8.h"

namespace magpie::optimize {

namespace {

std::string f(const std::optional<double>& x, const char* fmt = "%.2f") { return x ? strprintf(fmt, *x) : std::string("-"); }

/// (before, after, change) cells of one metric of the e2e block.
std::array<std::string, 3> side(const loop_report& rep, const char* name) {
  if (!rep.e2e) return {"-", "-", "-"};
  auto it = rep.e2e->metrics.find(name);
  if (it == rep.e2e->metrics.end() || !it->second.tested) return {"-", "-", "-"};
  const metric_change& m = it->second;
  auto cell = [](double mean, double sd, double lo, double hi) { return strprintf("%.2f ± %.2f (%.2f–%.2f)", mean, sd, lo, hi); };
  return {cell(m.before_mean, m.before_std, m.before_min, m.before_max), cell(m.after_mean, m.after_std, m.after_min, m.after_max),
          strprintf("%+.2f%%, p=%.3g, %s (smallest detectable %.2f%%)", m.change_pct, m.p_value,
                    m.beyond_noise ? "beyond noise" : "within noise", m.mde_pct)};
}

/// A metric of a run ("-" when it has none).
std::optional<double> metric_of(const run_record& r, const char* name) {
  auto it = r.metrics.find(name);
  return it == r.metrics.end() ? std::nullopt : std::optional<double>(it->second);
}

std::string runs_only(const std::vector<run_record>& rows, const char* metric) {
  std::vector<double> xs;
  for (const auto& r : rows)
    if (auto x = metric_of(r, metric)) xs.push_back(*x);
  if (xs.empty()) return "-";
  double m = 0, sd = 0, lo = xs[0], hi = xs[0];
  for (double x : xs) m += x, lo = std::min(lo, x), hi = std::max(hi, x);
  m /= static_cast<double>(xs.size());
  for (double x : xs) sd += (x - m) * (x - m);
  sd = xs.size() > 1 ? std::sqrt(sd / static_cast<double>(xs.size() - 1)) : 0;
  return strprintf("%.2f ± %.2f (%.2f–%.2f, n=%zu)", m, sd, lo, hi, xs.size());
}

std::string short_name(const std::string& n) { return n.size() <= 60 ? n : utf8_prefix(n, 57) + "..."; }

std::string median_us(const candidate_result& c) { return c.median_ns ? strprintf("%.2f", *c.median_ns / 1e3) : std::string("-"); }

std::string stop_cell(const loop_report& rep) {
  if (rep.stop) return rep.stop->code + ": " + rep.stop->message;
  if (rep.outcome == loop_result::failed) return "step failed: " + rep.error.value_or("").substr(0, 300);
  return "-";
}

}  // namespace

std::string summary_table(const loop_report& rep) {
  auto tp = side(rep, "output_throughput"), tpot = side(rep, "tpot_mean_ms");
  static const std::vector<run_record> none;
  const std::vector<run_record>& before = rep.baseline_runs ? *rep.baseline_runs : rep.initial_runs ? *rep.initial_runs : none;
  if (tp[0] == "-") tp[0] = runs_only(before, "output_throughput");
  if (tpot[0] == "-") tpot[0] = runs_only(before, "tpot_mean_ms");
  std::string warm;
  for (const auto& w : rep.warmups ? *rep.warmups : std::vector<warmup_record>{})
    warm += (warm.empty() ? "" : "; ") + w.tag + " " + std::to_string(w.num_prompts) + " req in " + f(w.duration_s) + " s";
  auto count = [](const auto& x) { return x ? std::to_string(*x) : std::string("-"); };
  const auto& design = rep.design;
  const auto& ch = rep.chosen;
  const auto& k = rep.kernel;
  const auto& pred = rep.prediction;
  std::vector<std::pair<std::string, std::string>> rows = {
      {"outcome", (rep.outcome ? loop_result_name(*rep.outcome) : "-") + (rep.control_result ? " (" + *rep.control_result + ")" : "")},
      {"prompts per run", strprintf("%s (concurrency %s)", count(rep.num_prompts).c_str(),
                                    rep.benchmark ? std::to_string(rep.benchmark->concurrency).c_str() : "-")},
      {"warm-up passes (discarded)", warm.empty() ? "-" : warm},
      {"measurement design", !design ? "-" : strprintf("%s, servers %s, %lld pairs, %lld server starts", design->order.c_str(),
                                                       design->servers.c_str(), static_cast<long long>(design->pairs),
                                                       static_cast<long long>(design->server_starts))},
      {"baseline output tok/s", tp[0]}, {"baseline TPOT ms", tpot[0]},
      {"chosen kernel", !ch ? "-" : strprintf("%s (#%d, %.2f%% of window, op %s)", short_name(ch->kernel).c_str(), ch->rank,
                                              ch->pct_total, ch->op.c_str())},
      {"source", !ch ? "-" : strprintf("%s:%lld (confidence %s)", ch->file.c_str(), static_cast<long long>(ch->line),
                                       f(ch->confidence).c_str())},
      {"kernel speedup", k && k->win ? strprintf("%s: %.3fx (95%% CI %.3f–%.3f) vs %s", k->win->id.c_str(), k->win->speedup,
                                                 k->win->ci_low, k->win->ci_high, k->baseline_id.c_str())
                                     : "-"},
      {"new output tok/s", tp[1]}, {"new TPOT ms", tpot[1]},
      {"e2e change (throughput)", tp[2]}, {"e2e change (TPOT)", tpot[2]},
      {"kernel gain predicts", !pred ? "-" : strprintf("%.2f%% of GPU time x (1 - 1/%.3f) = %+.2f%% GPU time; %+.2f%% throughput if GPU-bound (measured %+.2f%%)",
                                                       pred->predicted.op_share_pct, pred->predicted.speedup,
                                                       pred->predicted.gpu_time_change_pct, pred->predicted.throughput_change_pct,
                                                       pred->measured_change_pct)},
      {"stop reason", stop_cell(rep)}};
  size_t w = 0;
  for (const auto& [a, b] : rows) w = std::max(w, a.size());
  std::string out;
  for (const auto& [a, b] : rows) out += a + std::string(w - a.size() + 2, ' ') + b + "\n";
  return out;
}

std::string report_markdown(const loop_report& rep) {
  std::string md = "# Optimization loop report\n\n```\n" + summary_table(rep) + "```\n\n";
  static const std::vector<ranked_kernel> no_ranking;
  const std::vector<ranked_kernel>& ranking = rep.ranking ? *rep.ranking : no_ranking;
  if (!ranking.empty()) {
    md += "## Kernel ranking (steady-state window, by total time)\n\n| # | kernel | calls | total µs | % | disposition | why |\n|---|---|---|---|---|---|---|\n";
    for (size_t i = 0; i < ranking.size() && i < 15; ++i) {
      const ranked_kernel& r = ranking[i];
      md += strprintf("| %d | `%s` | %lld | %.1f | %.2f | %s | %s |\n", r.rank, replace_all(r.name.substr(0, 70), "|", "/").c_str(),
                      static_cast<long long>(r.calls), r.total_us, r.pct_total, disposition_name(r.disposition),
                      replace_all(r.why.substr(0, 90), "|", "/").c_str());
    }
    md += "\n";
  }
  if (const auto& ch = rep.chosen)
    md += strprintf("Chosen: `%s` → `%s:%lld` (op `%s`).\n\n", ch->kernel.c_str(), ch->file.c_str(), static_cast<long long>(ch->line),
                    ch->op.c_str());
  if (const auto& k = rep.kernel) {
    md += "## Candidates (magpie compare, correctness gate vs " + (k->reference.empty() ? std::string("-") : k->reference) +
          ")\n\n| id | outcome | verdict | speedup | 95% CI | median µs | why not ranked |\n|---|---|---|---|---|---|---|\n";
    for (const auto& c : k->kernels) {
      // The interval says enough for faster/slower/same; the others say why they do not rank.
      const bool interval_says = c.verdict && (*c.verdict == verdict_kind::baseline || *c.verdict == verdict_kind::faster ||
                                               *c.verdict == verdict_kind::slower || *c.verdict == verdict_kind::same);
      const std::string why = interval_says ? "" : replace_all(utf8_prefix(c.reason, 160), "|", "/");
      md += strprintf("| %s | %s | %s | %s | %s–%s | %s | %s |\n", c.id.c_str(), kernel_outcome_name(c.outcome),
                      c.verdict ? verdict_kind_name(*c.verdict) : "", f(c.speedup, "%.3f").c_str(), f(c.ci_low, "%.3f").c_str(),
                      f(c.ci_high, "%.3f").c_str(), median_us(c).c_str(), why.c_str());
    }
    md += "\n";
  }
  if (const auto& d = rep.design) {
    md += "## End-to-end series\n\nOrder of runs: " + join(d->sequence, " ") + "\n\n";
    md += "| run | side | server | output tok/s | TPOT ms | workspace |\n|---|---|---|---|---|---|\n";
    static const std::vector<run_record> none;
    const std::vector<run_record>* after = rep.after_runs ? &*rep.after_runs : &none;
    for (const auto* rows : {rep.baseline_runs ? &*rep.baseline_runs : &none, after})
      for (size_t i = 0; i < rows->size(); ++i) {
        const run_record& r = (*rows)[i];
        md += strprintf("| %zu | %s | %s | %s | %s | %s |\n", i, rows != after ? "A (baseline)" : "B (candidate)", r.server.c_str(),
                        f(metric_of(r, "output_throughput")).c_str(), f(metric_of(r, "tpot_mean_ms"), "%.3f").c_str(),
                        r.workspace.c_str());
      }
    if (d->power.budget_stop) md += "\nTime budget: " + *d->power.budget_stop + "\n";
    md += "\n";
  }
  md += "## Steps\n\n| step | status | seconds |\n|---|---|---|\n";
  for (const auto& s : rep.steps)
    md += strprintf("| %s | %s%s | %s |\n", s.name.c_str(), step_status_name(s.status), s.resumed ? " (resumed)" : "", f(s.seconds).c_str());
  md += "\nFull data: loop_report.json; commands and logs: logs/.\n";
  return md;
}

}  // namespace magpie::optimize
