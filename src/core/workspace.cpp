#include "core/workspace.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/strings.h"

namespace magpie {

std::string timestamp_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d_%H%M%S", &tm);
  return buf;
}

std::string iso_time_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

status_or<workspace> create_workspace(const fs::path& output_dir, const std::string& mode,
                                      const std::string& label) {
  MAGPIE_RETURN_IF_ERROR(make_dirs(output_dir));
  workspace ws;
  ws.timestamp = timestamp_now();
  std::string base = mode;
  std::string clean = sanitize_label(label);
  if (!clean.empty()) base += "_" + clean;
  base += "_" + ws.timestamp;
  for (int attempt = 1; attempt < 1000; ++attempt) {
    std::string name = attempt == 1 ? base : base + "_" + std::to_string(attempt);
    fs::path dir = absolute_path(output_dir / name);
    if (::mkdir(dir.c_str(), 0755) == 0) {
      ws.dir = dir;
      return ws;
    }
    if (errno != EEXIST) return io_error("cannot create workspace %s: %s", dir.c_str(), std::strerror(errno));
  }
  return io_error("cannot find a free workspace name under %s", output_dir.c_str());
}

}  // namespace magpie
