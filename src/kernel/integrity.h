// The `integrity` block of a kernel's report entry: every check the supervisor made so that
// code under test holds nothing the verdict depends on, with what it found
// (docs/harness-protocol.md, "Integrity").
#pragma once

#include <string>
#include <vector>

#include "core/json.h"

namespace magpie::kernel {

/// What one check found; a fail rejects the kernel (see integrity_report::rejected).
enum class check_status { pass, fail, warn, skipped };
/// "pass", "fail", "warn", "skipped".
const char* check_status_name(check_status s);
std::vector<std::string> check_status_names();
inline void to_json(json& j, check_status s) { j = check_status_name(s); }

struct integrity_check {
  std::string name;    ///< e.g. reference_inputs, timed_outputs, cupti_channel, physical_floor
  check_status status = check_status::skipped;
  std::string detail;  ///< one line, shown on the console when status is fail
  json data = json::object();
};

struct integrity_report {
  std::vector<integrity_check> checks;
  /// Adds or replaces the check named `name`.
  void set(const std::string& name, check_status status, const std::string& detail, json data = json::object());
  const integrity_check* find(const std::string& name) const;
  bool rejected() const;
  /// The first failed check's detail ("" when nothing failed).
  std::string reason() const;
  /// "6 passed, 1 warning, 2 skipped".
  std::string summary() const;
  json to_json() const;
};

}  // namespace magpie::kernel
