// magpie results list|show|compare|register: the SQLite results store.
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/subcommand.h"
#include "core/args.h"
#include "core/json.h"
#include "core/log.h"
#include "core/strings.h"
#include "store/compare.h"
#include "store/compare_printer.h"
#include "store/results_store.h"
#include "store/run_printer.h"

namespace magpie::cli {
namespace {

constexpr const char* k_results_usage =
    "usage: magpie results <action> [options]\n"
    "actions:\n"
    "  register WORKSPACE...   add run workspaces (analyze/compare/benchmark) to the database\n"
    "  list                    registered runs, newest first\n"
    "  show RUN                one run and its metrics (RUN = id or workspace path)\n"
    "  compare A B             metric-by-metric comparison with direction, ratio and noise verdict\n"
    "The store: every finished run registers itself in the per-user store ($MAGPIE_RESULTS, else\n"
    "$XDG_DATA_HOME/magpie/results.sqlite, else ~/.local/share/magpie/results.sqlite) and in\n"
    "<output-dir>/magpie_results.sqlite beside its workspace; actions read the per-user store unless\n"
    "--results FILE or -o DIR picks another.\n"
    "Run 'magpie results <action> --help' for its options.\n";

void add_db_flags(arg_parser& p) {
  p.add_value("--results", "", "FILE",
              "results database (default: the per-user store: $MAGPIE_RESULTS, else "
              "$XDG_DATA_HOME/magpie/results.sqlite, else ~/.local/share/magpie/results.sqlite; "
              "'magpie results list' prints which file it read)")
      .add_value("--db", "", "FILE", "the same as --results")
      .add_value("--output-dir", "-o", "DIR", "use the store beside an output directory, DIR/magpie_results.sqlite "
                                             "(every run is registered there too)")
      .add_bool("--json", "", "machine-readable JSON on stdout");
}

/// --results/--db, else <output-dir>/magpie_results.sqlite, else the per-user store ("" when
/// none can be named).
fs::path db_path(const arg_parser& p) {
  if (p.has("--results")) return p.value("--results");
  if (p.has("--db")) return p.value("--db");
  if (p.has("--output-dir")) return store::default_db_path(p.value("--output-dir"));
  return store::user_db_path();
}

bool explicit_db(const arg_parser& p) { return p.has("--results") || p.has("--db") || p.has("--output-dir"); }

int results_fail(const status& st) {
  std::fprintf(stderr, "magpie results: %s\n", st.message().c_str());
  return k_exit_failure;
}

/// Opens an existing store for reading. A missing one is an error (nothing is created), naming
/// the path and how to pick another.
status_or<store::results_store> open_existing(const fs::path& db) {
  if (db.empty())
    return not_found("no results store: neither MAGPIE_RESULTS nor HOME is set (give --results FILE or -o DIR)");
  std::error_code ec;
  if (!fs::exists(db, ec))
    return not_found("no results store at %s: no run has been registered there yet (runs register when they "
                     "finish; --results FILE or -o DIR reads another store)",
                     db.c_str());
  return store::results_store::open(db);
}


int run_register(const std::vector<std::string>& args) {
  arg_parser p("magpie results register", "Register run workspaces in the results database.");
  p.add_positional("WORKSPACE", "workspace directories holding *_report.json", true, true)
      .add_value("--group", "", "NAME", "replicate group (default: runs with equal configuration hash are replicates)");
  add_db_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  json out = json::array();
  for (const auto& ws : p.positionals()) {
    // Like a finished run: its output directory's store and the per-user one, unless one is named.
    std::vector<fs::path> dbs = explicit_db(p) ? std::vector<fs::path>{db_path(p)} : store::run_db_paths(ws);
    for (const auto& db : dbs) {
      auto id = store::register_workspace(db, ws, {p.value("--group")});
      if (!id.ok()) return results_fail(id.get_status());
      out.push_back({{"id", *id}, {"workspace", absolute_path(ws).string()}, {"db", absolute_path(db).string()}});
      if (!p.has("--json")) std::printf("registered run %lld: %s (%s)\n", static_cast<long long>(*id), ws.c_str(), db.c_str());
    }
  }
  if (p.has("--json")) std::fputs(dump_pretty(out).c_str(), stdout);
  return k_exit_ok;
}

int run_results_list(const std::vector<std::string>& args) {
  arg_parser p("magpie results list", "List registered runs, newest first.");
  p.add_value("--mode", "", "MODE", "only this mode", {"analyze", "compare", "benchmark"})
      .add_value("--limit", "-n", "N", "at most N runs (default 20; 0 = all)");
  add_db_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  auto limit = p.integer("--limit", 20);
  if (!limit.ok()) return results_fail(limit.get_status());
  auto st = open_existing(db_path(p));
  if (!st.ok()) return results_fail(st.get_status());
  auto rows = st->list(p.value("--mode"), static_cast<int>(*limit));
  if (!rows.ok()) return results_fail(rows.get_status());
  if (p.has("--json")) {
    json a = json::array();
    for (const auto& r : *rows) a.push_back(store::run_to_json(r));
    std::fputs(dump_pretty(a).c_str(), stdout);
    return k_exit_ok;
  }
  std::printf("Store: %s\n", db_path(p).c_str());
  std::printf("%5s  %-10s %-16s %-7s %-16s %s\n", "id", "mode", "timestamp", "success", "config", "name / workspace");
  for (const auto& r : *rows)
    std::printf("%5lld  %-10s %-16s %-7s %-16s %s  %s\n", static_cast<long long>(r.id), r.mode.c_str(),
                r.timestamp.c_str(), r.state == "interrupted" ? "INTERR." : r.success ? "yes" : "no", r.config_hash.c_str(), r.name.c_str(),
                r.workspace.c_str());
  return k_exit_ok;
}

int run_show(const std::vector<std::string>& args) {
  arg_parser p("magpie results show", "Show one run and its metrics.");
  p.add_positional("RUN", "run id or workspace path", false, true);
  add_db_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  auto st = open_existing(db_path(p));
  if (!st.ok()) return results_fail(st.get_status());
  auto run = st->find(p.positionals()[0]);
  if (!run.ok()) return results_fail(run.get_status());
  auto ms = st->metrics(run->id);
  if (!ms.ok()) return results_fail(ms.get_status());
  auto reps = st->replicates(*run);
  json j = store::run_to_json(*run);
  j["replicates"] = json::array();
  if (reps.ok())
    for (const auto& r : *reps) j["replicates"].push_back(r.id);
  j["metrics"] = json::array();
  for (const auto& m : *ms)
    j["metrics"].push_back({{"name", m.name}, {"value", m.value}, {"unit", m.unit}, {"direction", m.direction}});
  if (p.has("--json")) {
    std::fputs(dump_pretty(j).c_str(), stdout);
    return k_exit_ok;
  }
  std::printf("run %lld  %s  %s  success=%s  state=%s\nworkspace: %s\nconfig: %s  replicates: %s\n",
              static_cast<long long>(run->id), run->mode.c_str(), run->timestamp.c_str(), run->success ? "yes" : "no",
              run->state.c_str(),
              run->workspace.c_str(), run->config_hash.c_str(), dump_compact(j["replicates"]).c_str());
  for (const auto& m : *ms)
    std::printf("  %-48s %14.6g %-6s (%s is better)\n", m.name.c_str(), m.value, m.unit.c_str(), m.direction.c_str());
  return k_exit_ok;
}

int run_compare(const std::vector<std::string>& args) {
  arg_parser p("magpie results compare",
               "Compare two runs metric by metric: direction (higher/lower is better), ratio B/A and whether the\n"
               "difference is beyond run-to-run noise. Noise is measured only from repeated runs of the same\n"
               "configuration (same config hash, or the same --group at register time): Welch's t-test across\n"
               "replicates. With one run per side the noise verdict is 'unknown' (insufficient_data).");
  p.add_positional("A", "baseline: run id or workspace (comma-separated list for several runs)", false, true)
      .add_positional("B", "candidate: run id or workspace (comma-separated list)", false, true)
      .add_value("--alpha", "", "P", "two-sided significance level (default 0.05)")
      .add_multi("--metric", "-m", "SUBSTR", "only metrics whose name contains SUBSTR (repeatable)")
      .add_bool("--no-replicates", "", "use only the named runs (do not add their replicates)")
      .add_bool("--register", "", "register A and B first when they are workspace paths");
  add_db_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  store::compare_options o;
  auto alpha = p.number("--alpha", 0.05);
  if (!alpha.ok() || *alpha <= 0 || *alpha >= 0.5) return results_fail(invalid_argument("--alpha must be in (0, 0.5)"));
  o.alpha = *alpha;
  o.metric_filters = p.values("--metric");
  o.expand_replicates = !p.has("--no-replicates");
  std::vector<std::string> a = split(p.positionals()[0], ','), b = split(p.positionals()[1], ',');
  fs::path db = db_path(p);
  if (p.has("--register")) {
    for (const auto* side : {&a, &b})
      for (const auto& ref : *side)
        if (!parse_int(ref))
          if (auto id = store::register_workspace(db, ref); !id.ok()) return results_fail(id.get_status());
  }
  auto st = open_existing(db);
  if (!st.ok()) return results_fail(st.get_status());
  auto c = store::compare_runs(*st, a, b, o);
  if (!c.ok()) return results_fail(c.get_status());
  if (p.has("--json")) std::fputs(dump_pretty(store::comparison_to_json(*c, o)).c_str(), stdout);
  else std::fputs(store::comparison_table(*c).c_str(), stdout);
  return k_exit_ok;
}

int run_results(const std::vector<std::string>& args, const global_options& g) {
  (void)g;
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(k_results_usage, args.empty() ? stderr : stdout);
    return args.empty() ? k_exit_usage : k_exit_ok;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  using action = int (*)(const std::vector<std::string>&);
  static const std::pair<const char*, action> k_actions[] = {
      {"register", run_register}, {"list", run_results_list}, {"show", run_show}, {"compare", run_compare}};
  for (const auto& [name, run] : k_actions)
    if (args[0] == std::string_view(name)) return run(rest);
  return unknown_action("magpie results", args[0], {"register", "list", "show", "compare"}, k_results_usage);
}

}  // namespace
MAGPIE_SUBCOMMAND(results, "results", "list, show, compare and register runs in the SQLite results store",
                  run_results);
}  // namespace magpie::cli
