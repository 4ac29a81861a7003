#include "core/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "core/progress.h"

namespace magpie::log {
namespace {
std::atomic<int> g_level{static_cast<int>(level::info)};
std::mutex g_mu;

const char* name(level l) {
  switch (l) {
    case level::debug: return "DEBUG";
    case level::info: return "INFO";
    case level::warn: return "WARN";
    case level::error: return "ERROR";
    default: return "";
  }
}
}  // namespace

void set_level(level l) { g_level = static_cast<int>(l); }
level get_level() { return static_cast<level>(g_level.load()); }
bool enabled(level l) { return static_cast<int>(l) >= g_level.load() && l != level::off; }

void write(level l, const std::string& message) {
  using clock = std::chrono::system_clock;
  auto now = clock::now();
  std::time_t t = clock::to_time_t(now);
  int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::lock_guard<std::mutex> lock(g_mu);
  progress_bar::clear_line_for_log();
  std::fprintf(stderr, "%02d:%02d:%02d.%03d %-5s %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec, ms, name(l),
               message.c_str());
  std::fflush(stderr);
  progress_bar::redraw_after_log();
}

bool parse_level(const std::string& s, level* out) {
  std::string v;
  for (char c : s) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "debug") *out = level::debug;
  else if (v == "info") *out = level::info;
  else if (v == "warn" || v == "warning") *out = level::warn;
  else if (v == "error") *out = level::error;
  else if (v == "off" || v == "quiet") *out = level::off;
  else return false;
  return true;
}

}  // namespace magpie::log
