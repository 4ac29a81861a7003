// Results store on SQLite (see results_store.h).
#include "store/results_store.h"

#include <cstdlib>

#include "core/log.h"
#include "core/strings.h"
#include "core/workspace.h"
#include "store/run_printer.h"
#include "store/sqlite.h"

namespace magpie::store {
namespace {

constexpr const char* k_schema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '1');
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY,
  workspace TEXT NOT NULL UNIQUE,
  mode TEXT NOT NULL,
  name TEXT,
  timestamp TEXT,
  registered_at TEXT NOT NULL,
  config_hash TEXT,
  replicate_group TEXT,
  success INTEGER NOT NULL DEFAULT 0,
  report_path TEXT,
  summary TEXT);
CREATE INDEX IF NOT EXISTS runs_group ON runs(mode, config_hash, replicate_group);
CREATE TABLE IF NOT EXISTS metrics(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL,
  unit TEXT,
  direction TEXT,
  extra TEXT,
  PRIMARY KEY(run_id, name));
CREATE TABLE IF NOT EXISTS samples(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  family TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY(run_id, family));
)sql";

constexpr const char* k_run_columns =
    "id, workspace, mode, name, timestamp, registered_at, config_hash, replicate_group, success, report_path, summary, "
    "state";

run_row read_row(const statement& s) {
  run_row r;
  r.id = s.column_int(0);
  r.workspace = s.column_text(1);
  r.mode = s.column_text(2);
  r.name = s.column_text(3);
  r.timestamp = s.column_text(4);
  r.registered_at = s.column_text(5);
  r.config_hash = s.column_text(6);
  r.replicate_group = s.column_text(7);
  r.success = s.column_int(8) != 0;
  r.report_path = s.column_text(9);
  auto j = parse_json(s.column_text(10), "summary");
  r.summary = j.ok() ? *j : json::object();
  r.state = s.column_text(11);
  if (r.state.empty()) r.state = "complete";
  return r;
}

status_or<std::vector<run_row>> query_runs(database& db, const std::string& where,
                                           const std::vector<std::string>& args, const std::string& tail) {
  MAGPIE_ASSIGN_OR_RETURN(statement s, db.prepare(std::string("SELECT ") + k_run_columns + " FROM runs " + where + " " + tail));
  for (size_t i = 0; i < args.size(); ++i) s.bind(static_cast<int>(i + 1), args[i]);
  std::vector<run_row> out;
  for (;;) {
    MAGPIE_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    out.push_back(read_row(s));
  }
  return out;
}

}  // namespace

fs::path default_db_path(const fs::path& output_dir) { return output_dir / k_default_db_name; }

fs::path user_db_path() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : std::string();
  };
  if (std::string v = env("MAGPIE_RESULTS"); !v.empty()) return v;
  // XDG base directories: a relative XDG_DATA_HOME is invalid and ignored.
  if (std::string v = env("XDG_DATA_HOME"); !v.empty() && v[0] == '/') return fs::path(v) / "magpie" / "results.sqlite";
  if (std::string v = env("HOME"); !v.empty()) return fs::path(v) / ".local" / "share" / "magpie" / "results.sqlite";
  return {};
}

std::vector<fs::path> run_db_paths(const fs::path& workspace_dir) {
  std::vector<fs::path> out = {default_db_path(absolute_path(workspace_dir).parent_path())};
  fs::path user = user_db_path();
  std::error_code ec;
  if (!user.empty() && absolute_path(user) != out[0] && !fs::equivalent(user, out[0], ec)) out.push_back(user);
  return out;
}

int64_t register_after_run(const fs::path& workspace_dir) {
  const char* off = std::getenv("MAGPIE_NO_STORE");
  if (off != nullptr && std::string(off) == "1") return 0;
  int64_t first = 0;
  std::vector<fs::path> dbs = run_db_paths(workspace_dir);
  for (size_t i = 0; i < dbs.size(); ++i) {
    auto id = register_workspace(dbs[i], workspace_dir);
    if (!id.ok()) {
      MAGPIE_LOG_WARN("results store: %s not registered in %s: %s", workspace_dir.c_str(), dbs[i].c_str(),
                      id.get_status().message().c_str());
      continue;
    }
    if (i == 0) first = *id;
    MAGPIE_LOG_INFO("results store: run %lld in %s", static_cast<long long>(*id), dbs[i].c_str());
  }
  return first;
}

std::string run_row::group_key() const {
  return replicate_group.empty() ? "hash:" + config_hash : "group:" + replicate_group;
}

results_store::results_store(results_store&&) noexcept = default;
results_store& results_store::operator=(results_store&&) noexcept = default;
results_store::~results_store() = default;
const fs::path& results_store::path() const { return m_db->path(); }

status_or<results_store> results_store::open(const fs::path& db_path) {
  fs::path parent = absolute_path(db_path).parent_path();
  MAGPIE_RETURN_IF_ERROR(make_dirs(parent));
  results_store st;
  MAGPIE_ASSIGN_OR_RETURN(st.m_db, database::open(db_path));
  MAGPIE_RETURN_IF_ERROR(st.m_db->exec(k_schema));
  // Schema 1 databases gain the run state (complete | interrupted); a repeated ALTER fails harmlessly.
  auto has_state = st.m_db->prepare("SELECT state FROM runs LIMIT 0");
  if (!has_state.ok())
    MAGPIE_RETURN_IF_ERROR(st.m_db->exec("ALTER TABLE runs ADD COLUMN state TEXT NOT NULL DEFAULT 'complete'"));
  return st;
}

status_or<int64_t> results_store::add(const run_record& rec, const register_options& opts) {
  transaction tx(*m_db);
  MAGPIE_RETURN_IF_ERROR(tx.begin());
  {
    MAGPIE_ASSIGN_OR_RETURN(statement del, m_db->prepare("DELETE FROM runs WHERE workspace = ?1"));
    MAGPIE_RETURN_IF_ERROR(del.bind(1, rec.workspace.string()).run());
  }
  MAGPIE_ASSIGN_OR_RETURN(statement ins,
                          m_db->prepare("INSERT INTO runs(workspace, mode, name, timestamp, registered_at, config_hash, "
                                        "replicate_group, success, report_path, summary, state) "
                                        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
  ins.bind(1, rec.workspace.string()).bind(2, std::string(run_kind_name(rec.mode))).bind(3, rec.name).bind(4, rec.timestamp);
  ins.bind(5, iso_time_now()).bind(6, rec.config_hash).bind(7, opts.replicate_group);
  ins.bind(8, static_cast<int64_t>(rec.success)).bind(9, rec.report_path.string()).bind(10, dump_compact(rec.summary));
  ins.bind(11, rec.state);
  MAGPIE_RETURN_IF_ERROR(ins.run());
  int64_t id = m_db->last_insert_id();
  MAGPIE_ASSIGN_OR_RETURN(statement m, m_db->prepare("INSERT OR REPLACE INTO metrics(run_id, name, value, unit, "
                                                     "direction, extra) VALUES(?1, ?2, ?3, ?4, ?5, ?6)"));
  for (const auto& x : rec.metrics) {
    m.bind(1, id).bind(2, x.name).bind(3, x.value).bind(4, x.unit).bind(5, x.direction).bind(6, dump_compact(x.extra));
    MAGPIE_RETURN_IF_ERROR(m.run());
    MAGPIE_RETURN_IF_ERROR(m.reset());
  }
  MAGPIE_ASSIGN_OR_RETURN(statement s, m_db->prepare("INSERT INTO samples(run_id, family, data) VALUES(?1, ?2, ?3)"));
  for (const auto& [family, v] : rec.samples) {
    s.bind(1, id).bind(2, family).bind(3, dump_compact(json(v)));
    MAGPIE_RETURN_IF_ERROR(s.run());
    MAGPIE_RETURN_IF_ERROR(s.reset());
  }
  MAGPIE_RETURN_IF_ERROR(tx.commit());
  return id;
}

status_or<std::vector<run_row>> results_store::list(const std::string& mode, int limit) const {
  std::string tail = "ORDER BY timestamp DESC, id DESC";
  if (limit > 0) tail += " LIMIT " + std::to_string(limit);
  if (mode.empty()) return query_runs(*m_db, "", {}, tail);
  return query_runs(*m_db, "WHERE mode = ?1", {mode}, tail);
}

status_or<run_row> results_store::find(const std::string& ref) const {
  if (auto id = parse_int(ref)) {
    MAGPIE_ASSIGN_OR_RETURN(auto rows, query_runs(*m_db, "WHERE id = ?1", {std::to_string(*id)}, ""));
    if (!rows.empty()) return rows[0];
  }
  MAGPIE_ASSIGN_OR_RETURN(auto rows, query_runs(*m_db, "WHERE workspace = ?1", {absolute_path(ref).string()}, ""));
  if (rows.empty()) return not_found("no run '%s' in %s", ref.c_str(), m_db->path().c_str());
  return rows[0];
}

status_or<std::vector<metric>> results_store::metrics(int64_t run_id) const {
  MAGPIE_ASSIGN_OR_RETURN(statement s, m_db->prepare("SELECT name, value, unit, direction, extra FROM metrics "
                                                     "WHERE run_id = ?1 ORDER BY rowid"));
  s.bind(1, run_id);
  std::vector<metric> out;
  for (;;) {
    MAGPIE_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    metric m{s.column_text(0), s.column_double(1), s.column_text(2), s.column_text(3), json::object()};
    if (auto e = parse_json(s.column_text(4), "extra"); e.ok()) m.extra = *e;
    out.push_back(std::move(m));
  }
  return out;
}

status_or<std::map<std::string, std::vector<double>>> results_store::samples(int64_t run_id) const {
  MAGPIE_ASSIGN_OR_RETURN(statement s, m_db->prepare("SELECT family, data FROM samples WHERE run_id = ?1"));
  s.bind(1, run_id);
  std::map<std::string, std::vector<double>> out;
  for (;;) {
    MAGPIE_ASSIGN_OR_RETURN(bool row, s.step());
    if (!row) break;
    auto j = parse_json(s.column_text(1), "samples");
    if (!j.ok() || !j->is_array()) continue;
    auto& v = out[s.column_text(0)];
    for (const auto& x : *j)
      if (auto d = json_as_number(x)) v.push_back(*d);
  }
  return out;
}

status_or<std::vector<run_row>> results_store::replicates(const run_row& run) const {
  if (!run.replicate_group.empty())
    return query_runs(*m_db, "WHERE mode = ?1 AND replicate_group = ?2", {run.mode, run.replicate_group},
                      "ORDER BY timestamp, id");
  return query_runs(*m_db, "WHERE mode = ?1 AND config_hash = ?2 AND (replicate_group IS NULL OR replicate_group = '')",
                    {run.mode, run.config_hash}, "ORDER BY timestamp, id");
}

status_or<int64_t> register_workspace(const fs::path& db_path, const fs::path& workspace_dir,
                                      const register_options& opts) {
  MAGPIE_ASSIGN_OR_RETURN(run_record rec, read_workspace(workspace_dir));
  MAGPIE_ASSIGN_OR_RETURN(results_store st, results_store::open(db_path));
  return st.add(rec, opts);
}

json run_to_json(const run_row& r) {
  return {{"id", r.id},
          {"workspace", r.workspace.string()},
          {"mode", r.mode},
          {"name", r.name},
          {"timestamp", r.timestamp},
          {"registered_at", r.registered_at},
          {"success", r.success},
          {"state", r.state},
          {"config_hash", r.config_hash},
          {"replicate_group", r.replicate_group.empty() ? json(nullptr) : json(r.replicate_group)},
          {"report_path", r.report_path.string()},
          {"summary", r.summary}};
}

}  // namespace magpie::store
