// Logging to stderr only (stdout is reserved for machine output and the MCP protocol).
#pragma once

#include <string>

namespace magpie::log {

enum class level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

void set_level(level l);
level get_level();
bool enabled(level l);
/// Writes "<HH:MM:SS.mmm> <LEVEL> <message>\n" to stderr (thread-safe, clears a progress line).
void write(level l, const std::string& message);
/// Parses "debug|info|warn|warning|error|off" (case-insensitive).
bool parse_level(const std::string& s, level* out);

}  // namespace magpie::log

#define MAGPIE_LOG_AT(lvl, ...)                                               \
  do {                                                                        \
    if (::magpie::log::enabled(lvl)) ::magpie::log::write(lvl, ::magpie::strprintf(__VA_ARGS__)); \
  } while (0)
#define MAGPIE_LOG_DEBUG(...) MAGPIE_LOG_AT(::magpie::log::level::debug, __VA_ARGS__)
#define MAGPIE_LOG_INFO(...) MAGPIE_LOG_AT(::magpie::log::level::info, __VA_ARGS__)
#define MAGPIE_LOG_WARN(...) MAGPIE_LOG_AT(::magpie::log::level::warn, __VA_ARGS__)
#define MAGPIE_LOG_ERROR(...) MAGPIE_LOG_AT(::magpie::log::level::error, __VA_ARGS__)

#include "core/strings.h"
