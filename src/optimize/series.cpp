// Steps switch_in, after_benchmarks (the interleaved A/B series), inputs_check and e2e.
//   Sides: A = the baseline variant, B = the winner's variant (the baseline again under the
//   A/A control). Order per pair: abab → A B, A B, …; abba → A B, B A, A B, …
//   Servers: restart → every run on a freshly started, warmed server (on one port, so the
//   benchmark commands are identical); concurrent → one warmed server per side, both up.
#include <algorithm>
#include <set>

#include "core/log.h"
#include "core/strings.h"
#include "optimize/loop_run.h"
#include "optimize/loop_report_codec.h"
#include "optimize/server_info_codec.h"
#include "store/compare.h"
#include "store/results_store.h"

namespace magpie::optimize {

namespace {

const char* store_name(const std::string& m) {
  static const std::map<std::string, const char*> k = {
      {"output_throughput", "throughput.output_throughput"}, {"request_throughput", "throughput.request_throughput"},
      {"total_token_throughput", "throughput.total_token_throughput"}, {"tpot_mean_ms", "latency.tpot.mean_ms"},
      {"tpot_median_ms", "latency.tpot.median_ms"}, {"ttft_mean_ms", "latency.ttft.mean_ms"},
      {"itl_mean_ms", "latency.itl.mean_ms"}, {"e2el_mean_ms", "latency.e2el.mean_ms"}};
  auto it = k.find(m);
  return it == k.end() ? "" : it->second;
}

}  // namespace

std::string loop_run::candidate_variant() const {
  if (m_cfg.e2e.control == "aa") return m_cfg.server.baseline;
  const auto& k = m_report.kernel;
  auto v = expand_placeholders(m_cfg.server.variant, {{"baseline", m_cfg.server.baseline},
                                                      {"op", m_report.chosen ? m_report.chosen->op : std::string()},
                                                      {"impl", k && k->win ? k->win->impl : std::string()}});
  return v.ok() ? *v : std::string();
}

status loop_run::check_identity(const variant_server& s, bool candidate) {
  if (auto stop = identity_mismatch(m_report.server_baseline.value_or(server_info{}), s.info(), s.tag(), m_cfg.server.identity_keys))
    m_stop = *stop;
  if (candidate && m_cfg.e2e.control != "aa" && !m_cfg.server.variant_check.empty()) {
    const auto& k = m_report.kernel;
    std::string op = m_report.chosen ? m_report.chosen->op : std::string(), impl = k && k->win ? k->win->impl : std::string();
    std::string got = reported_impl(s.info(), m_cfg.server.variant_check, op);
    if (got != impl)
      return error(status_code::failed_precondition, "switch_failed: the %s server runs %s for %s, not %s", s.tag().c_str(),
                                 got.empty() ? "(nothing reported)" : got.c_str(), op.c_str(), impl.c_str());
  }
  return ok_status();
}

status loop_run::step_switch_in() {
  std::string variant = candidate_variant();
  if (variant.empty()) return error(status_code::failed_precondition, "switch_failed: no winner in the report to switch in");
  if (m_port == 0) {
    MAGPIE_ASSIGN_OR_RETURN(m_port, serve::free_port());
  }
  switch_record sw{variant, m_cfg.e2e.control, m_cfg.e2e.servers, {}, std::nullopt};
  if (!m_report.servers) m_report.servers.emplace();
  if (m_cfg.e2e.servers == "concurrent") {
    MAGPIE_ASSIGN_OR_RETURN(m_port_b, serve::free_port());
    // Both spawn first so their start-up overlaps; then each is checked and warmed.
    MAGPIE_ASSIGN_OR_RETURN(auto a, variant_server::spawn(m_cfg, m_env, "A", m_cfg.server.baseline, m_port));
    MAGPIE_ASSIGN_OR_RETURN(auto b, variant_server::spawn(m_cfg, m_env, "B", variant, m_port_b));
    MAGPIE_RETURN_IF_ERROR(a->wait_ready(m_cfg.server.ready_timeout_s));
    MAGPIE_RETURN_IF_ERROR(b->wait_ready(m_cfg.server.ready_timeout_s));
    m_starts += 2;
    for (auto* s : {a.get(), b.get()}) {
      m_report.servers->push_back(server_record_of(*s));
      MAGPIE_RETURN_IF_ERROR(check_identity(*s, s == b.get()));
      if (m_stop) return ok_status();
      MAGPIE_RETURN_IF_ERROR(warm_up(*s));
    }
    sw.server = b->info();
    sw.baseline_server = a->info();
    m_side_a = std::move(a);
    m_side_b = std::move(b);
  } else {
    // The candidate's server must start and identify itself before any run is spent on it.
    MAGPIE_ASSIGN_OR_RETURN(auto b, variant_server::spawn(m_cfg, m_env, "B_check", variant, m_port));
    MAGPIE_RETURN_IF_ERROR(b->wait_ready(m_cfg.server.ready_timeout_s));
    ++m_starts;
    m_report.servers->push_back(server_record_of(*b));
    MAGPIE_RETURN_IF_ERROR(check_identity(*b, true));
    sw.server = b->info();
    b->stop();
  }
  m_report.switched = std::move(sw);
  return ok_status();
}

status loop_run::run_side(const std::string& side, int pair, std::vector<bench_result>& runs) {
  MAGPIE_ASSIGN_OR_RETURN(int64_t n, calibrated_prompts());
  std::string variant = side == "A" ? m_cfg.server.baseline : candidate_variant();
  std::string name = strprintf("bench_%s_%d", side == "A" ? "baseline" : "after", static_cast<int>(runs.size()));
  if (m_cfg.e2e.servers == "concurrent") {
    MAGPIE_ASSIGN_OR_RETURN(bench_result r, bench(name, side == "A" ? *m_side_a : *m_side_b, n, "bench/" + name.substr(6)));
    runs.push_back(std::move(r));
  } else {
    MAGPIE_ASSIGN_OR_RETURN(auto s, start_warm(strprintf("%s_%d", side.c_str(), pair), variant, m_port, side == "B"));
    if (m_stop) return ok_status();
    MAGPIE_ASSIGN_OR_RETURN(bench_result r, bench(name, *s, n, "bench/" + name.substr(6)));
    s->stop();
    m_report.servers->back().exit = server_record_of(*s).exit;
    runs.push_back(std::move(r));
  }
  const run_metrics& m = runs.back().metrics;
  MAGPIE_LOG_INFO("pair %d %s: %.1f tok/s output, TPOT %.3f ms", pair, side.c_str(), m.at("output_throughput"),
                  m.count("tpot_mean_ms") ? m.at("tpot_mean_ms") : 0.0);
  return ok_status();
}

bool loop_run::need_more_pairs(const std::vector<bench_result>& a, const std::vector<bench_result>& b, series_power* power,
                               const series_clock& clock) const {
  const std::string& primary = m_cfg.decision.metrics.front();
  std::vector<double> va, vb;
  for (const auto& r : a) va.push_back(r.metrics.count(primary) ? r.metrics.at(primary) : 0);
  for (const auto& r : b) vb.push_back(r.metrics.count(primary) ? r.metrics.at(primary) : 0);
  double mde = minimum_detectable_change_pct(va, vb, m_cfg.decision.alpha, m_cfg.e2e.power);
  power->history.push_back({static_cast<int64_t>(a.size()), mde});
  if (static_cast<int64_t>(a.size()) < m_cfg.e2e.pairs) return true;
  if (static_cast<int64_t>(a.size()) >= m_cfg.e2e.max_pairs || m_cfg.e2e.target_mde_pct <= 0) return false;
  if (mde <= m_cfg.e2e.target_mde_pct) return false;
  double budget = m_cfg.e2e.max_series_s;
  if (budget > 0 && clock.elapsed_s + clock.longest_pair_s > budget) {
    power->budget_stop = strprintf("no pair after %zu: %.1f s so far + %.1f s (longest pair) > max_series_s %g; "
                                        "the smallest detectable change stays %.2f%% (target %g%%)",
                                        a.size(), clock.elapsed_s, clock.longest_pair_s, budget, mde, m_cfg.e2e.target_mde_pct);
    MAGPIE_LOG_WARN("%s", power->budget_stop->c_str());
    return false;
  }
  return true;
}

status loop_run::step_after_benchmarks() {
  std::vector<bench_result> a, b;
  std::vector<std::string> order;
  series_power power;
  series_clock clock;
  const double t_series = monotonic_seconds();
  // The runs done so far stay in the report, also when a later run fails or is interrupted.
  auto record = [&] {
    std::vector<run_record> ar, br;
    for (const auto& r : a) ar.push_back(run_record_of(r));
    for (const auto& r : b) br.push_back(run_record_of(r));
    m_report.baseline_runs = std::move(ar);
    m_report.after_runs = std::move(br);
    m_report.design = loop_design{m_cfg.e2e.order, m_cfg.e2e.servers, order, static_cast<int64_t>(std::min(a.size(), b.size())),
                                  m_starts, power, clock.elapsed_s, m_cfg.e2e.max_series_s};
  };
  status st = ok_status();
  for (int pair = 0; st.ok() && !m_stop; ++pair) {
    const double t_pair = monotonic_seconds();
    bool flip = m_cfg.e2e.order == "abba" && pair % 2 == 1;
    for (const char* side : {flip ? "B" : "A", flip ? "A" : "B"}) {
      st = run_side(side, pair, side[0] == 'A' ? a : b);
      if (!st.ok() || m_stop) break;
      order.push_back(std::string(side));
    }
    clock.longest_pair_s = std::max(clock.longest_pair_s, monotonic_seconds() - t_pair);
    clock.elapsed_s = monotonic_seconds() - t_series;
    if (st.ok() && !m_stop && !need_more_pairs(a, b, &power, clock)) break;
  }
  record();
  for (auto* s : {&m_side_a, &m_side_b})
    if (*s) (*s)->stop();
  return st;
}

status loop_run::step_inputs_check() {
  std::vector<fingerprint> before, after;
  for (const auto& r : m_report.baseline_runs.value_or(std::vector<run_record>{})) before.push_back(r.fp);
  for (const auto& r : m_report.after_runs.value_or(std::vector<run_record>{})) after.push_back(r.fp);
  if (auto s = check_inputs(before, after)) {
    m_stop = *s;
    return ok_status();
  }
  m_report.inputs = inputs_record{before.empty() ? std::nullopt : std::optional<std::string>(before.front().total),
                                  static_cast<int64_t>(before.size() + after.size())};
  return ok_status();
}

bool loop_run::results_compare(const std::vector<std::string>& a_ws, const std::vector<std::string>& b_ws,
                               const std::set<std::string>& urls, e2e_record* e2e, std::map<std::string, external_verdict>* theirs) {
  const auto& d = m_cfg.decision;
  fs::path db = m_opts.workspace / "results.sqlite";
  double t0 = monotonic_seconds();
  status reg = ok_status();
  for (const auto* side : {&a_ws, &b_ws})
    for (const auto& ws : *side)
      if (auto id = store::register_workspace(db, ws); !id.ok() && reg.ok()) reg = id.get_status();
  auto st = store::results_store::open(db);
  store::compare_options co;
  co.alpha = d.alpha;
  co.expand_replicates = false;
  auto cmp = reg.ok() && st.ok() ? store::compare_runs(*st, a_ws, b_ws, co)
                                 : status_or<store::comparison>(reg.ok() ? st.get_status() : reg);
  std::vector<std::string> equivalent = {"magpie", "results", "compare", join(a_ws, ","), join(b_ws, ","), "--register", "--db", db.string()};
  m_cmds.record("results_compare", equivalent, monotonic_seconds() - t0, cmp.ok() ? 0 : 1);
  if (!cmp.ok()) {
    e2e->results_compare_error = cmp.get_status().message();
    return false;
  }
  auto& verdicts = e2e->results_compare.emplace();
  for (const auto& m : d.metrics)
    for (const auto& mc : cmp->metrics)
      if (mc.name == store_name(m)) {
        external_verdict v{mc.name, mc.verdict, mc.basis, mc.beyond_noise, mc.change_pct};
        (*theirs)[m] = v;
        auto it = std::find_if(verdicts.begin(), verdicts.end(), [&](const auto& x) { return x.first == m; });
        if (it == verdicts.end()) verdicts.emplace_back(m, v);
        else it->second = v;
      }
  std::set<std::string> ha, hb;
  for (const auto& r : cmp->a_runs) ha.insert(r.config_hash);
  for (const auto& r : cmp->b_runs) hb.insert(r.config_hash);
  if (ha == hb && ha.size() == 1) return false;
  if (urls.size() == 1) {
    m_stop = stop_reason{"inputs_changed", "magpie results compare sees different benchmark configurations",
                         {{"a", std::vector<std::string>(ha.begin(), ha.end())}, {"b", std::vector<std::string>(hb.begin(), hb.end())}}};
    return true;
  }
  e2e->store_hash_warning = "config hashes differ because the servers listened on different URLs (" +
                            join(std::vector<std::string>(urls.begin(), urls.end()), ", ") +
                            "); the workload part of every run's config was compared instead (inputs_check)";
  return false;
}

status loop_run::step_e2e() {
  std::vector<run_metrics> before, after;
  std::vector<std::string> a_ws, b_ws;
  std::set<std::string> urls;
  for (const auto& r : m_report.baseline_runs.value_or(std::vector<run_record>{})) {
    before.push_back(r.metrics);
    a_ws.push_back(r.workspace);
    urls.insert(r.url);
  }
  for (const auto& r : m_report.after_runs.value_or(std::vector<run_record>{})) {
    after.push_back(r.metrics);
    b_ws.push_back(r.workspace);
    urls.insert(r.url);
  }
  const auto& d = m_cfg.decision;
  auto change = e2e_change(before, after, d.alpha, m_cfg.e2e.power);
  e2e_record e2e{change, d.metrics.front(), d.metrics, d.alpha, std::nullopt, std::nullopt, std::nullopt};
  // magpie results compare over the same workspaces (its own Welch test and config hashes).
  std::map<std::string, external_verdict> theirs;
  if (results_compare(a_ws, b_ws, urls, &e2e, &theirs)) {
    m_report.e2e = std::move(e2e);
    return ok_status();
  }
  power_statement power{d.alpha, m_cfg.e2e.power, static_cast<int64_t>(before.size()), m_cfg.e2e.target_mde_pct, {}, false};
  for (const auto& m : d.metrics) {
    auto it = std::find_if(power.mde_pct.begin(), power.mde_pct.end(), [&](const auto& x) { return x.first == m; });
    if (it == power.mde_pct.end()) power.mde_pct.emplace_back(m, change[m].mde_pct);
    else it->second = change[m].mde_pct;
  }
  power.reached = m_cfg.e2e.target_mde_pct <= 0 || change[d.metrics.front()].mde_pct <= m_cfg.e2e.target_mde_pct;
  m_report.power = power;
  if (m_report.kernel && m_report.kernel->win && m_cfg.e2e.control != "aa") {
    const winner& w = *m_report.kernel->win;
    loop_prediction p;
    p.predicted = predict_kernel_gain(m_report.chosen ? m_report.chosen->op_share_pct : 0, w.speedup, w.ci_low, w.ci_high);
    p.measured_change_pct = change["output_throughput"].change_pct;
    p.measured_tpot_change_pct = change["tpot_mean_ms"].change_pct;
    m_report.prediction = p;
  }
  m_report.e2e = std::move(e2e);
  auto dec = e2e_decision(change, d.metrics, theirs);
  if (auto* s = std::get_if<stop_reason>(&dec)) m_stop = *s;
  else m_report.outcome = parse_loop_result(std::get<std::string>(dec)).value_or(loop_result::improved);
  if (m_cfg.e2e.control == "aa") {
    bool within = m_stop && m_stop->code == "e2e_within_noise";
    m_control_failed = !within;
    m_report.control_result = within ? "passed: the A/A control came out within noise"
                                     : "FAILED: the A/A control came out beyond noise; this measurement cannot be trusted";
  }
  return ok_status();
}

}  // namespace magpie::optimize
