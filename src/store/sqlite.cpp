// SQLite adapter (see sqlite.h).
#include "store/sqlite.h"

#include <sqlite3.h>

namespace magpie::store {
namespace {

status sql_error(sqlite3* db, const char* what) {
  return error(status_code::io_error, "sqlite %s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
}

}  // namespace

statement::~statement() {
  if (m_stmt) sqlite3_finalize(m_stmt);
}

statement& statement::operator=(statement&& o) noexcept {
  if (this != &o) {
    if (m_stmt) sqlite3_finalize(m_stmt);
    m_stmt = o.m_stmt;
    m_db = o.m_db;
    o.m_stmt = nullptr;
  }
  return *this;
}

statement& statement::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(m_stmt, i, v) != SQLITE_OK && m_bind_error.ok()) m_bind_error = sql_error(m_db, "bind");
  return *this;
}
statement& statement::bind(int i, double v) {
  if (sqlite3_bind_double(m_stmt, i, v) != SQLITE_OK && m_bind_error.ok()) m_bind_error = sql_error(m_db, "bind");
  return *this;
}
statement& statement::bind(int i, const std::string& v) {
  if (sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK &&
      m_bind_error.ok())
    m_bind_error = sql_error(m_db, "bind");
  return *this;
}
statement& statement::bind_null(int i) {
  if (sqlite3_bind_null(m_stmt, i) != SQLITE_OK && m_bind_error.ok()) m_bind_error = sql_error(m_db, "bind");
  return *this;
}
statement& statement::bind_opt(int i, const std::optional<double>& v) { return v ? bind(i, *v) : bind_null(i); }

status_or<bool> statement::step() {
  if (!m_bind_error.ok()) return m_bind_error;
  int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return sql_error(m_db, "step");
}

status statement::run() {
  for (;;) {
    MAGPIE_ASSIGN_OR_RETURN(bool row, step());
    if (!row) return ok_status();
  }
}

status statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
  m_bind_error = ok_status();
  return ok_status();
}

int64_t statement::column_int(int i) const { return sqlite3_column_int64(m_stmt, i); }
double statement::column_double(int i) const { return sqlite3_column_double(m_stmt, i); }
std::string statement::column_text(int i) const {
  const unsigned char* t = sqlite3_column_text(m_stmt, i);
  return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(m_stmt, i)))
           : std::string();
}
bool statement::column_is_null(int i) const { return sqlite3_column_type(m_stmt, i) == SQLITE_NULL; }

status_or<std::unique_ptr<database>> database::open(const fs::path& path, int busy_timeout_ms) {
  std::unique_ptr<database> db(new database());
  db->m_path = path;
  int rc = sqlite3_open_v2(path.c_str(), &db->m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    status st = error(status_code::io_error, "cannot open results database '%s': %s", path.c_str(),
                      db->m_db ? sqlite3_errmsg(db->m_db) : "out of memory");
    return st;
  }
  sqlite3_busy_timeout(db->m_db, busy_timeout_ms);
  MAGPIE_RETURN_IF_ERROR(db->exec("PRAGMA foreign_keys = ON"));
  return db;
}

database::~database() {
  if (m_db) sqlite3_close_v2(m_db);
}

status database::exec(const std::string& sql) {
  char* msg = nullptr;
  if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    status st = error(status_code::io_error, "sqlite: %s (in: %.80s)", msg ? msg : "error", sql.c_str());
    sqlite3_free(msg);
    return st;
  }
  return ok_status();
}

status_or<statement> database::prepare(const std::string& sql) {
  statement s;
  s.m_db = m_db;
  if (sqlite3_prepare_v2(m_db, sql.c_str(), static_cast<int>(sql.size()), &s.m_stmt, nullptr) != SQLITE_OK)
    return sql_error(m_db, "prepare");
  return s;
}

int64_t database::last_insert_id() const { return sqlite3_last_insert_rowid(m_db); }

status transaction::commit() {
  MAGPIE_RETURN_IF_ERROR(m_db.exec("COMMIT"));
  m_done = true;
  return ok_status();
}

transaction::~transaction() {
  if (!m_done) (void)m_db.exec("ROLLBACK");
}

}  // namespace magpie::store
