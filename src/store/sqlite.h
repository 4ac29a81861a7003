// Thin RAII adapter over the SQLite C API (the only file that talks to libsqlite3).
// Every call returns status; statements bind by 1-based index.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/fs.h"
#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace magpie::store {

class statement {
 public:
  statement() = default;
  ~statement();
  statement(statement&& o) noexcept : m_stmt(o.m_stmt), m_db(o.m_db) { o.m_stmt = nullptr; }
  statement& operator=(statement&& o) noexcept;
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  statement& bind(int i, int64_t v);
  statement& bind(int i, double v);
  statement& bind(int i, const std::string& v);
  statement& bind_null(int i);
  statement& bind_opt(int i, const std::optional<double>& v);
  /// Advances: true with a row, false when done; error status on failure.
  status_or<bool> step();
  /// Runs to completion (INSERT/UPDATE/DELETE).
  status run();
  status reset();

  int64_t column_int(int i) const;
  double column_double(int i) const;
  std::string column_text(int i) const;
  bool column_is_null(int i) const;

 private:
  friend class database;
  sqlite3_stmt* m_stmt = nullptr;
  sqlite3* m_db = nullptr;
  status m_bind_error;
};

class database {
 public:
  /// Opens (creating) `path` with a busy timeout (concurrent writers wait, ms) and foreign keys on.
  static status_or<std::unique_ptr<database>> open(const fs::path& path, int busy_timeout_ms = 10000);
  ~database();
  database(const database&) = delete;
  database& operator=(const database&) = delete;

  status exec(const std::string& sql);
  status_or<statement> prepare(const std::string& sql);
  int64_t last_insert_id() const;
  const fs::path& path() const { return m_path; }

 private:
  database() = default;
  sqlite3* m_db = nullptr;
  fs::path m_path;
};

/// BEGIN IMMEDIATE … COMMIT, rolled back on destruction unless commit() succeeded.
class transaction {
 public:
  explicit transaction(database& db) : m_db(db) {}
  status begin() { return m_db.exec("BEGIN IMMEDIATE"); }
  status commit();
  ~transaction();

 private:
  database& m_db;
  bool m_done = false;
};

}  // namespace magpie::store
