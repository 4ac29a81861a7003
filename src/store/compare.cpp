// Results comparison (see compare.h).
#include "store/compare.h"

#include <cmath>
#include <map>
#include <set>

#include "core/json_schema.h"
#include "core/stats.h"
#include "core/strings.h"
#include "store/compare_printer.h"
#include "store/run_kind_codec.h"

namespace magpie::store {
namespace {

status_or<std::vector<run_row>> resolve_side(const results_store& st, const std::vector<std::string>& refs,
                                             bool expand) {
  std::vector<run_row> runs;
  for (const auto& r : refs) {
    MAGPIE_ASSIGN_OR_RETURN(run_row row, st.find(r));
    runs.push_back(std::move(row));
  }
  if (expand && runs.size() == 1) {
    MAGPIE_ASSIGN_OR_RETURN(auto reps, st.replicates(runs[0]));
    if (!reps.empty()) runs = std::move(reps);
  }
  return runs;
}

bool kernel_mode(const std::string& m) {
  const std::optional<run_kind> k = parse_run_kind(m);
  return k && is_kernel_run(*k);
}

struct side_values {
  std::vector<double> values;
  std::string unit, direction;
  json extra;  // of the first run (single-run within-run spread)
};

status collect(const results_store& st, const std::vector<run_row>& runs, std::map<std::string, side_values>* out,
               std::vector<std::map<std::string, std::vector<double>>>* samples) {
  for (const auto& r : runs) {
    MAGPIE_ASSIGN_OR_RETURN(auto ms, st.metrics(r.id));
    for (const auto& m : ms) {
      auto& sv = (*out)[m.name];
      if (sv.values.empty()) {
        sv.unit = m.unit;
        sv.direction = m.direction;
        sv.extra = m.extra;
      }
      sv.values.push_back(m.value);
    }
    MAGPIE_ASSIGN_OR_RETURN(auto s, st.samples(r.id));
    samples->push_back(std::move(s));
  }
  return ok_status();
}

/// Within-run test of a median from timing spread (n, p25, p75): normal approximation with
/// se(median) ≈ 1.2533·(IQR/1.349)/√n.
noise_test spread_test(const json& ea, const json& eb, double a, double b, double alpha) {
  noise_test t;
  t.method = "none";
  double na = json_number(ea, "n", 0), nb = json_number(eb, "n", 0);
  if (na < 5 || nb < 5 || a <= 0) return t;
  auto se = [](const json& e, double n) {
    return 1.2533 * ((json_number(e, "p75", 0) - json_number(e, "p25", 0)) / 1.349) / std::sqrt(n);
  };
  double s = std::sqrt(se(ea, na) * se(ea, na) + se(eb, nb) * se(eb, nb));
  t.method = "timing_spread_within_run";
  t.tested = true;
  t.ratio = b / a;
  double z = 1.959963984540054;  // 95%; other alphas use the t critical value with large df
  if (std::fabs(alpha - 0.05) > 1e-12) z = student_t_critical(alpha, 1e6);
  t.ratio_low = (b - z * s) / a;
  t.ratio_high = (b + z * s) / a;
  t.significant = s > 0 ? std::fabs(b - a) > z * s : b != a;
  t.p_value = std::nan("");
  return t;
}

std::string verdict_for(const metric_comparison& m) {
  if (m.direction == "none") return "info";
  if (!m.beyond_noise.has_value()) return "insufficient_data";
  if (!*m.beyond_noise) return "no_significant_change";
  bool up = m.b > m.a;
  return (up == (m.direction == "higher")) ? "improved" : "regressed";
}

metric_comparison compare_metric(const std::string& name, const side_values& a, const side_values& b,
                                 const std::vector<std::map<std::string, std::vector<double>>>& sa,
                                 const std::vector<std::map<std::string, std::vector<double>>>& sb,
                                 const compare_options& o) {
  metric_comparison m;
  m.name = name;
  m.unit = a.unit;
  m.direction = a.direction;
  m.n_a = a.values.size();
  m.n_b = b.values.size();
  m.a = mean(a.values);
  m.b = mean(b.values);
  m.ratio = m.a != 0 ? m.b / m.a : 0;
  m.change_pct = m.a != 0 ? (m.b - m.a) / m.a * 100 : 0;
  m.run_to_run = compare_replicates(a.values, b.values, o.alpha);
  if (m.run_to_run.tested) {
    m.beyond_noise = m.run_to_run.significant;
    m.basis = strprintf("%s over %zu vs %zu runs, p=%.3g", m.run_to_run.method.c_str(), m.n_a, m.n_b,
                        m.run_to_run.p_value);
  } else {
    m.basis = "one run per side: run-to-run noise unknown (register repeated runs of the same configuration)";
  }
  if (m.n_a == 1 && m.n_b == 1) {
    std::string family = name.substr(0, name.rfind('.') == std::string::npos ? 0 : name.rfind('.'));
    std::string stat = statistic_of_metric(name);
    if (!sa.empty() && !sb.empty() && sa[0].count(family) && sb[0].count(family) && !stat.empty()) {
      m.within_run = compare_samples(sa[0].at(family), sb[0].at(family), stat, o.alpha, o.resamples, o.seed);
      if (m.within_run.tested) m.basis += "; within-run bootstrap over per-request samples";
    } else if (a.extra.contains("p25") && b.extra.contains("p25")) {
      m.within_run = spread_test(a.extra, b.extra, m.a, m.b, o.alpha);
      if (m.within_run.tested) m.basis += "; within-run timing spread";
    }
    if (m.within_run.tested) m.within_run_significant = m.within_run.significant;
  }
  m.verdict = verdict_for(m);
  return m;
}

bool selected(const std::string& name, const compare_options& o) {
  if (o.metric_filters.empty()) return true;
  for (const auto& f : o.metric_filters)
    if (contains(name, f)) return true;
  return false;
}

}  // namespace

status_or<comparison> compare_runs(const results_store& st, const std::vector<std::string>& a_refs,
                                   const std::vector<std::string>& b_refs, const compare_options& opts) {
  if (a_refs.empty() || b_refs.empty()) return invalid_argument("compare needs runs on both sides");
  comparison c;
  MAGPIE_ASSIGN_OR_RETURN(c.a_runs, resolve_side(st, a_refs, opts.expand_replicates));
  MAGPIE_ASSIGN_OR_RETURN(c.b_runs, resolve_side(st, b_refs, opts.expand_replicates));
  std::set<int64_t> ids_a;
  for (const auto& r : c.a_runs) ids_a.insert(r.id);
  bool overlap = false;
  for (const auto& r : c.b_runs) overlap = overlap || ids_a.count(r.id);
  if (overlap) {  // both refs are replicates of one configuration: compare the named runs only
    MAGPIE_ASSIGN_OR_RETURN(c.a_runs, resolve_side(st, a_refs, false));
    MAGPIE_ASSIGN_OR_RETURN(c.b_runs, resolve_side(st, b_refs, false));
    c.notes.emplace_back("A and B share one configuration (replicates of each other): comparing the named runs only");
  }
  const std::string& ma = c.a_runs[0].mode;
  for (const auto* side : {&c.a_runs, &c.b_runs})
    for (const auto& r : *side)
      if (r.mode != ma && !(kernel_mode(r.mode) && kernel_mode(ma)))
        return invalid_argument("cannot compare a %s run with a %s run", ma.c_str(), r.mode.c_str());
  std::map<std::string, side_values> va, vb;
  std::vector<std::map<std::string, std::vector<double>>> sa, sb;
  MAGPIE_RETURN_IF_ERROR(collect(st, c.a_runs, &va, &sa));
  MAGPIE_RETURN_IF_ERROR(collect(st, c.b_runs, &vb, &sb));
  // Metric order: the first A run's order, restricted to metrics both sides have.
  MAGPIE_ASSIGN_OR_RETURN(auto order, st.metrics(c.a_runs[0].id));
  std::set<std::string> done;
  for (const auto& m : order) {
    if (!vb.count(m.name) || !va.count(m.name) || !selected(m.name, opts) || !done.insert(m.name).second) continue;
    c.metrics.push_back(compare_metric(m.name, va[m.name], vb[m.name], sa, sb, opts));
  }
  if (c.metrics.empty()) c.notes.emplace_back("the two sides share no metric");
  return c;
}

json comparison_schema() {
  using namespace schema;
  json run = closed({{"id", typed("integer", "run id")}, {"workspace", typed("string", "workspace")},
                     {"timestamp", typed("string", "YYYYmmdd_HHMMSS")}, {"config_hash", typed("string", "hash")}});
  json test = closed({{"method", typed("string", "welch_t | prediction_interval | bootstrap_within_run | timing_spread_within_run")},
                      {"p_value", typed_or_null("number", "p")},
                      {"ratio_ci", list_of(typed_or_null("number", "bound"), "[low, high] of B/A")},
                      {"df", typed("number", "degrees of freedom")},
                      {"significant", typed("boolean", "beyond alpha")}});
  test["type"] = {"object", "null"};
  json metric = closed({{"metric", typed("string", "metric")}, {"unit", typed("string", "unit")},
                        {"direction", words("better when", {"higher", "lower", "none"})},
                        {"a", typed_or_null("number", "side A mean")}, {"b", typed_or_null("number", "side B mean")},
                        {"ratio", typed_or_null("number", "B/A")}, {"change_pct", typed_or_null("number", "%")},
                        {"n_a", typed("integer", "runs on A")}, {"n_b", typed("integer", "runs on B")},
                        {"beyond_noise", typed_or_null("boolean", "null: run-to-run noise unknown")},
                        {"verdict", words("verdict", {"improved", "regressed", "no_significant_change", "insufficient_data",
                                                      "info"})},
                        {"run_to_run", test}, {"within_run", test},
                        {"within_run_significant", typed_or_null("boolean", "one run per side only")},
                        {"basis", typed("string", "what the decision rests on")}});
  return closed({{"alpha", typed("number", "significance level")}, {"a_runs", list_of(run, "side A")},
                 {"b_runs", list_of(run, "side B")}, {"metrics", list_of(metric, "metric by metric")},
                 {"notes", list_of(typed("string", "note"), "notes")}});
}

json comparison_to_json(const comparison& c, const compare_options& opts) {
  auto runs = [](const std::vector<run_row>& v) {
    json a = json::array();
    for (const auto& r : v) a.push_back({{"id", r.id}, {"workspace", r.workspace.string()}, {"timestamp", r.timestamp},
                                         {"config_hash", r.config_hash}});
    return a;
  };
  auto test = [](const noise_test& t) -> json {
    if (!t.tested) return nullptr;
    return {{"method", t.method}, {"p_value", json_finite(t.p_value)}, {"ratio_ci", {t.ratio_low, t.ratio_high}},
            {"df", t.df}, {"significant", t.significant}};
  };
  json ms = json::array();
  for (const auto& m : c.metrics) {
    ms.push_back({{"metric", m.name}, {"unit", m.unit}, {"direction", m.direction}, {"a", m.a}, {"b", m.b},
                  {"ratio", m.ratio}, {"change_pct", m.change_pct}, {"n_a", m.n_a}, {"n_b", m.n_b},
                  {"beyond_noise", m.beyond_noise ? json(*m.beyond_noise) : json(nullptr)},
                  {"verdict", m.verdict}, {"run_to_run", test(m.run_to_run)}, {"within_run", test(m.within_run)},
                  {"within_run_significant",
                   m.within_run_significant ? json(*m.within_run_significant) : json(nullptr)},
                  {"basis", m.basis}});
  }
  return {{"alpha", opts.alpha}, {"a_runs", runs(c.a_runs)}, {"b_runs", runs(c.b_runs)}, {"metrics", ms},
          {"notes", c.notes}};
}

std::string comparison_table(const comparison& c) {
  auto ids = [](const std::vector<run_row>& v) {
    std::vector<std::string> s;
    for (const auto& r : v) s.push_back(std::to_string(r.id));
    return join(s, ",");
  };
  std::string out = strprintf("A: runs %s (%s)\nB: runs %s (%s)\n", ids(c.a_runs).c_str(), c.a_runs[0].name.c_str(),
                              ids(c.b_runs).c_str(), c.b_runs[0].name.c_str());
  out += strprintf("%-44s %-7s %14s %14s %8s %8s %-7s %s\n", "metric", "better", "A", "B", "B/A", "change",
                   "noise", "verdict");
  for (const auto& m : c.metrics) {
    const char* noise = !m.beyond_noise ? "unknown" : *m.beyond_noise ? "beyond" : "within";
    out += strprintf("%-44s %-7s %14.4g %14.4g %8.4f %+7.2f%% %-7s %s\n", m.name.c_str(), m.direction.c_str(), m.a, m.b,
                     m.ratio, m.change_pct, noise, m.verdict.c_str());
  }
  for (const auto& n : c.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace magpie::store
