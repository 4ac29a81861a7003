#include "core/status.h"

#include <cstdarg>

#include "core/strings.h"

namespace magpie {

const char* status_code_name(status_code c) {
  switch (c) {
    case status_code::ok: return "ok";
    case status_code::invalid_argument: return "invalid_argument";
    case status_code::not_found: return "not_found";
    case status_code::io_error: return "io_error";
    case status_code::parse_error: return "parse_error";
    case status_code::timeout: return "timeout";
    case status_code::failed_precondition: return "failed_precondition";
    case status_code::unavailable: return "unavailable";
    case status_code::cancelled: return "cancelled";
    case status_code::internal: return "internal";
    case status_code::permission_denied: return "permission_denied";
  }
  return "unknown";
}

std::string status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(m_code)) + ": " + m_message;
}

status status::with_context(const std::string& prefix) const {
  if (ok()) return *this;
  return status(m_code, prefix + ": " + m_message);
}

#define MAGPIE_STATUS_FN(name, code)                  \
  status name(const char* fmt, ...) {                 \
    va_list ap;                                       \
    va_start(ap, fmt);                                \
    std::string msg = vstrprintf(fmt, ap);            \
    va_end(ap);                                       \
    return status(code, std::move(msg));              \
  }

MAGPIE_STATUS_FN(invalid_argument, status_code::invalid_argument)
MAGPIE_STATUS_FN(io_error, status_code::io_error)
MAGPIE_STATUS_FN(not_found, status_code::not_found)
MAGPIE_STATUS_FN(parse_error, status_code::parse_error)

status error(status_code code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string msg = vstrprintf(fmt, ap);
  va_end(ap);
  return status(code, std::move(msg));
}

}  // namespace magpie
