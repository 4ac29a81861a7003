// The `integrity` block of a kernel's report entry: every check the supervisor made so that
// code under test holds nothing the verdict depends on, with what it found
// (docs/harness-protocol.md, "Integrity"). Printed by kernel/integrity_printer.h.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace magpie::kernel {

/// What one check found; a fail rejects the kernel (see integrity_report::rejected).
enum class check_status { pass, fail, warn, skipped };
/// "pass", "fail", "warn", "skipped".
const char* check_status_name(check_status s);
std::vector<std::string> check_status_names();

struct check_field;
class check_value;

/// A check's measurements: named values in the order they were set (a report prints them so).
class check_data {
 public:
  check_data() = default;
  check_data(std::initializer_list<check_field> fields);
  /// Sets `name`: replaced where it is, else appended.
  void set(const std::string& name, const check_value& v);
  /// The number named `name`; `dflt` when absent or not a number.
  double number(const std::string& name, double dflt) const;
  const std::vector<check_field>& fields() const { return m_fields; }
  bool empty() const { return m_fields.empty(); }

 private:
  std::vector<check_field> m_fields;
};

/// One value of a check's data: null, a flag, an integer, a number, a word, a list, or a record
/// (e.g. one row per harness process). Built like the report's JSON: `{{"pairs", n}, {"source", "cpu"}}`.
class check_value {
 public:
  using list = std::vector<check_value>;
  using value = std::variant<std::monostate, bool, int64_t, uint64_t, double, std::string, list, check_data>;

  check_value() = default;
  check_value(std::nullptr_t) {}
  check_value(bool b) : m_v(b) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  check_value(T x) {
    if constexpr (std::is_signed_v<T>) m_v = static_cast<int64_t>(x);
    else m_v = static_cast<uint64_t>(x);
  }
  check_value(double x) : m_v(x) {}
  check_value(const char* s) : m_v(std::string(s)) {}
  check_value(std::string s) : m_v(std::move(s)) {}
  check_value(check_data record) : m_v(std::move(record)) {}
  check_value(std::initializer_list<check_field> record);
  check_value(const std::vector<double>& numbers);
  check_value(const std::vector<check_data>& rows);

  const value& get() const { return m_v; }
  /// Nothing to print: null, an empty list or an empty record.
  bool empty() const;
  /// A record's number named `name`; `dflt` otherwise.
  double number(const std::string& name, double dflt) const;

 private:
  value m_v;
};

struct check_field {
  std::string name;
  check_value value;
};

struct integrity_check {
  std::string name;    ///< e.g. reference_inputs, timed_outputs, cupti_channel, physical_floor
  check_status status = check_status::skipped;
  std::string detail;  ///< one line, shown on the console when status is fail
  check_value data;    ///< a record, or a list of records (clock_bracket: one per process); printed when not empty
};

struct integrity_report {
  std::vector<integrity_check> checks;
  /// Adds or replaces the check named `name`.
  void set(const std::string& name, check_status status, const std::string& detail, check_value data = {});
  const integrity_check* find(const std::string& name) const;
  bool rejected() const;
  /// The first failed check's detail ("" when nothing failed).
  std::string reason() const;
  /// "6 passed, 1 warning, 2 skipped".
  std::string summary() const;
};

}  // namespace magpie::kernel
