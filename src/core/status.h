// status / status_or: the error currency across module boundaries.
// A status is ok or carries a code and a human-readable message. Kernel outcomes
// (incorrect, timeout, ...) are *data* and never travel as a status.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace magpie {

enum class status_code {
  ok,
  invalid_argument,     ///< bad user input (flags, YAML, files)
  not_found,            ///< a file, tool or entity does not exist
  io_error,             ///< read/write/spawn failure
  parse_error,          ///< malformed data (JSON, CSV, npy, trace)
  timeout,              ///< a deadline passed
  failed_precondition,  ///< the environment cannot do this (no GPU, no tool)
  unavailable,          ///< a remote peer did not answer
  cancelled,            ///< the user or a signal stopped the work
  internal,             ///< a bug in magpie
  permission_denied,    ///< refused by a policy (the MCP trust model: a path or program not allowed)
};

const char* status_code_name(status_code c);

class [[nodiscard]] status {
 public:
  status() = default;
  status(status_code code, std::string message) : m_code(code), m_message(std::move(message)) {}

  static status ok_status() { return {}; }
  bool ok() const { return m_code == status_code::ok; }
  status_code code() const { return m_code; }
  const std::string& message() const { return m_message; }
  /// "<code>: <message>" for logs.
  std::string to_string() const;
  /// Returns a copy whose message is "<prefix>: <message>".
  status with_context(const std::string& prefix) const;

 private:
  status_code m_code = status_code::ok;
  std::string m_message;
};

inline status ok_status() { return {}; }
status error(status_code code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
status invalid_argument(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
status io_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
status not_found(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
status parse_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

/// A value or the status explaining why there is none.
template <class T>
class [[nodiscard]] status_or {
 public:
  status_or(T value) : m_v(std::move(value)) {}  // NOLINT: implicit by design
  status_or(status s) : m_v(std::move(s)) {      // NOLINT
    if (std::get<status>(m_v).ok()) std::abort();  // an ok status carries no value
  }
  bool ok() const { return std::holds_alternative<T>(m_v); }
  const status& get_status() const {
    static const status k_ok;
    return ok() ? k_ok : std::get<status>(m_v);
  }
  T& value() & { return std::get<T>(m_v); }
  const T& value() const& { return std::get<T>(m_v); }
  T&& value() && { return std::get<T>(std::move(m_v)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, status> m_v;
};

}  // namespace magpie

#define MAGPIE_CONCAT_INNER(a, b) a##b
#define MAGPIE_CONCAT(a, b) MAGPIE_CONCAT_INNER(a, b)

#define MAGPIE_RETURN_IF_ERROR(expr)               \
  do {                                             \
    ::magpie::status magpie_st_ = (expr);          \
    if (!magpie_st_.ok()) return magpie_st_;       \
  } while (0)

#define MAGPIE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.get_status();            \
  lhs = std::move(tmp).value()

#define MAGPIE_ASSIGN_OR_RETURN(lhs, expr) \
  MAGPIE_ASSIGN_OR_RETURN_IMPL(MAGPIE_CONCAT(magpie_so_, __LINE__), lhs, expr)
