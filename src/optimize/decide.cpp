// Kernel choice (gap ranking × source mapping × op registry) and the compare gate.
#include "optimize/decide.h"

#include <regex>

#include "core/csv.h"
#include "core/enum_names.h"
#include "core/strings.h"
#include "optimize/decide_codec.h"
#include "optimize/decide_printer.h"

namespace magpie::optimize {

std::string stop_category(const std::string& code) {
  static const std::map<std::string, std::string> k = {
      {"source_mapping_ambiguous", "source mapping uncertain"},
      {"source_mapping_low_confidence", "source mapping uncertain"},
      {"source_mapping_disagrees", "source mapping uncertain"},
      {"no_mappable_kernel", "source mapping uncertain"},
      {"no_candidates", "nothing to try"},
      {"correctness_unproven", "correctness unproven"},
      {"no_correct_candidate", "correctness unproven"},
      {"no_faster_candidate", "no kernel-level gain"},
      {"inputs_changed", "benchmark inputs changed"},
      {"e2e_within_noise", "end-to-end gain within noise"},
      {"e2e_regression", "end-to-end regression"},
  };
  auto it = k.find(code);
  return it == k.end() ? "infrastructure" : it->second;
}

namespace {

constexpr std::pair<disposition, const char*> k_disposition_names[] = {
    {disposition::ours, "ours"},
    {disposition::external, "external"},
    {disposition::ambiguous, "ambiguous"},
    {disposition::low_confidence, "low_confidence"},
    {disposition::disagrees, "disagrees"}};

double num(const std::string& s) {
  auto v = parse_double(trim(s));
  return v ? *v : 0.0;
}

}  // namespace

const char* disposition_name(disposition d) { return enum_name(k_disposition_names, d, "external"); }
std::optional<disposition> parse_disposition(std::string_view word) { return enum_parse(k_disposition_names, word); }

status_or<std::vector<ranked_kernel>> read_gap_csv(const std::string& text) {
  MAGPIE_ASSIGN_OR_RETURN(auto table, parse_csv(text, true));
  std::vector<ranked_kernel> out;
  if (table.empty()) return out;
  const auto& head = table.front();
  auto col = [&](const std::vector<std::string>& row, const char* name) -> std::string {
    for (size_t i = 0; i < head.size() && i < row.size(); ++i)
      if (head[i] == name) return row[i];
    return {};
  };
  for (size_t i = 1; i < table.size(); ++i) {
    const auto& row = table[i];
    if (row.size() == 1 && trim(row[0]).empty()) continue;
    ranked_kernel k;
    k.rank = static_cast<int>(out.size()) + 1;
    k.name = col(row, "Name");
    k.calls = static_cast<int64_t>(num(col(row, "Calls")));
    k.total_us = num(col(row, "Self CUDA total (us)"));
    k.avg_us = num(col(row, "Avg time (us)"));
    k.pct_total = num(col(row, "% Total"));
    k.kind = col(row, "kind");
    k.category = col(row, "category");
    k.source_resolution = col(row, "source_resolution");
    k.source_error = col(row, "source_error");
    k.source_file = col(row, "source_file");
    k.input_shapes = col(row, "Input Shapes");
    auto [file, line] = parse_source_file(k.source_file);
    k.file = file;
    k.line = line;
    out.push_back(std::move(k));
  }
  return out;
}

std::pair<std::string, int64_t> parse_source_file(const std::string& s) {
  static const std::regex re("^(?:\\$[A-Za-z0-9_]+/)?(.+):(\\d+)$");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return {"", 0};
  return {m[1].str(), std::stoll(m[2].str())};
}

source_confidence_map source_confidences(const json& sources) {
  std::map<std::string, std::pair<std::optional<double>, std::vector<std::string>>> out;
  if (!sources.is_object() || !sources.contains("kernels") || !sources["kernels"].is_array()) return out;
  for (const auto& k : sources["kernels"]) {
    if (!k.is_object()) continue;
    std::optional<double> c;
    if (auto v = json_as_number(json_value(k, "confidence"))) c = *v;
    std::vector<std::string> cands;
    if (k.contains("candidates") && k["candidates"].is_array())
      for (const auto& x : k["candidates"])
        cands.push_back(json_as_string(x).value_or(dump_compact(x)));
    out[json_string(k, "name")] = {c, cands};
  }
  return out;
}

void classify(std::vector<ranked_kernel>& rows,
              const std::map<std::string, std::pair<std::optional<double>, std::vector<std::string>>>& conf,
              const optimize_config& cfg) {
  for (auto& d : rows) {
    if (auto it = conf.find(d.name); it != conf.end()) {
      d.confidence = it->second.first;
      d.candidates = it->second.second;
    }
    d.op = cfg.op_of_kernel(d.name, &d.symbol);
    const std::string& res = d.source_resolution;
    const std::string& err = d.source_error;
    if (res == "resolved") {
      if (d.op.empty()) {
        d.disposition = disposition::disagrees;
        d.why = "resolved to " + d.source_file + " but not a kernel of any op (ops.*.kernels)";
      } else if (d.confidence && *d.confidence < cfg.decision.min_confidence) {
        d.disposition = disposition::low_confidence;
        d.why = strprintf("confidence %.2f < %.2f", *d.confidence, cfg.decision.min_confidence);
      } else {
        d.disposition = disposition::ours;
        d.why = "defined at " + d.source_file;
      }
    } else if (ends_with(err, "_ambiguous")) {
      d.disposition = disposition::ambiguous;
      d.why = "several definitions: " + (d.candidates.empty() ? err : join(d.candidates, ", "));
    } else if (!d.op.empty()) {
      d.disposition = disposition::disagrees;
      d.why = "kernel " + d.symbol + " of op " + d.op + " not resolved by the mapper (" + (err.empty() ? res : err) + ")";
    } else {
      d.disposition = disposition::external;
      d.why = (res.empty() ? std::string("unmapped") : res) + ": " + (err.empty() ? std::string("no source column") : err);
    }
  }
}

std::variant<size_t, stop_reason> choose_kernel(const std::vector<ranked_kernel>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& d = rows[i];
    if (d.disposition == disposition::ours) return i;
    if (d.disposition == disposition::external) continue;
    std::string code = d.disposition == disposition::ambiguous        ? "source_mapping_ambiguous"
                       : d.disposition == disposition::low_confidence ? "source_mapping_low_confidence"
                                                           : "source_mapping_disagrees";
    return stop_reason{code, strprintf("kernel #%d %s: %s", d.rank, d.name.substr(0, 80).c_str(), d.why.c_str()),
                       {{"kernel", ranked_kernel_json(d)}}};
  }
  return stop_reason{"no_mappable_kernel",
                     strprintf("none of the %zu ranked kernels is defined in the searched source trees", rows.size()),
                     {{"ranked", rows.size()}}};
}

std::string describe_verdict(const candidate_result& c) {
  if (!c.verdict) return "no verdict in the compare report";
  if (*c.verdict == verdict_kind::not_ranked)
    return "not ranked: " + (c.reason.empty() ? std::string("the compare gave no reason") : c.reason);
  std::string s = strprintf("%s %.3fx (%.0f%% CI %.3f-%.3f)", verdict_kind_name(*c.verdict), c.speedup.value_or(0),
                            c.confidence.value_or(0.95) * 100, c.ci_low.value_or(0), c.ci_high.value_or(0));
  if (*c.verdict == verdict_kind::implausible) s += ", below the physical floor: never ranked";
  else if (*c.verdict == verdict_kind::ambiguous && c.reason.find("'faster' is not certified") != std::string::npos)
    s += ", timed only inside the candidate's process: 'faster' not certified";
  return s;
}

namespace {

candidate_result read_candidate(const compare_row_record& k, const compare_report_record& report) {
  candidate_result c;
  c.id = k.kernel_id;
  c.outcome = k.outcome;
  c.basis = k.basis;
  if (const verdict_record* v = find_verdict(report, c.id)) {
    c.verdict = v->verdict;
    c.speedup = v->speedup;
    c.ci_low = v->ci_low;
    c.ci_high = v->ci_high;
    c.confidence = v->confidence;
    c.reason = v->reason;
  }
  c.median_ns = k.median_ns;
  c.samples = k.samples;
  c.errors = k.errors;
  return c;
}

}  // namespace

gate_result choose_winner(const compare_report_record& report, const op_config& op) {
  gate_result g;
  g.baseline_id = op.baseline_id;
  for (const auto& k : report.rows) g.kernels.push_back(read_candidate(k, report));
  if (report.reference) g.reference = *report.reference;
  auto stop = [&](const char* code, std::string msg) {
    g.stop = stop_reason{code, std::move(msg), gate_result_json(g)};
    return g;
  };
  const candidate_result* base = nullptr;
  for (const auto& k : g.kernels)
    if (k.id == op.baseline_id) base = &k;
  if (!base) return stop("correctness_unproven", "baseline " + op.baseline_id + " is not in the compare report");
  if (g.reference.empty()) return stop("correctness_unproven", "the compare had no reference implementation");
  std::vector<std::string> unproven;
  for (const auto& k : g.kernels)
    if (k.outcome == kernel_outcome::passed && k.basis != correctness_basis::outputs) unproven.push_back(k.id);
  if (!unproven.empty()) return stop("correctness_unproven", "correctness not checked on outputs for " + join(unproven, ", "));
  if (base->outcome != kernel_outcome::passed)
    return stop("correctness_unproven", "the baseline " + op.baseline_id + " itself failed against the reference (" +
                                            kernel_outcome_name(base->outcome) + ")");
  std::vector<const candidate_result*> cands, correct, faster;
  for (const auto& [id, impl] : op.candidates)
    for (const auto& k : g.kernels)
      if (k.id == id) cands.push_back(&k);
  if (cands.empty()) return stop("no_candidates", "no candidate of " + op.baseline_id + " was in the compare");
  std::vector<std::string> failed, slow;
  for (const auto* c : cands) {
    if (c->outcome != kernel_outcome::passed) {
      failed.push_back(c->id + " (" + kernel_outcome_name(c->outcome) + ")");
      continue;
    }
    correct.push_back(c);
    if (c->verdict == verdict_kind::faster && c->ci_low.value_or(0) > 1.0) faster.push_back(c);
    else slow.push_back(c->id + " " + describe_verdict(*c));
  }
  if (correct.empty()) return stop("no_correct_candidate", "every candidate failed the correctness gate: " + join(failed, ", "));
  if (faster.empty()) return stop("no_faster_candidate", "no correct candidate is faster beyond its CI: " + join(slow, "; "));
  const candidate_result* w = faster.front();
  for (const auto* c : faster)
    if (c->speedup.value_or(0) > w->speedup.value_or(0)) w = c;
  winner win;
  win.id = w->id;
  for (const auto& [id, impl] : op.candidates)
    if (id == w->id) win.impl = impl;
  win.speedup = w->speedup.value_or(0);
  win.ci_low = w->ci_low.value_or(0);
  win.ci_high = w->ci_high.value_or(0);
  win.baseline_median_ns = base->median_ns;
  win.winner_median_ns = w->median_ns;
  g.win = win;
  return g;
}

}  // namespace magpie::optimize
