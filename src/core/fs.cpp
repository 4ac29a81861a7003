#include "core/fs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/strings.h"

namespace magpie {

status_or<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot open %s: %s", path.c_str(), std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return io_error("error reading %s", path.c_str());
  return ss.str();
}

status write_file_atomic(const fs::path& path, std::string_view content) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  std::string tmp = path.string() + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot create %s: %s", tmp.c_str(), std::strerror(errno));
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return io_error("cannot write %s: %s", tmp.c_str(), std::strerror(e));
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) {
    int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return io_error("fsync %s: %s", tmp.c_str(), std::strerror(e));
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    return io_error("cannot rename %s to %s: %s", tmp.c_str(), path.c_str(), std::strerror(e));
  }
  return ok_status();
}

status make_dirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return io_error("cannot create directory %s: %s", dir.c_str(), ec.message().c_str());
  return ok_status();
}

status_or<fs::path> make_temp_dir(const fs::path& parent, const std::string& prefix) {
  MAGPIE_RETURN_IF_ERROR(make_dirs(parent));
  std::string templ = (parent / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(templ.data())) return io_error("mkdtemp %s: %s", templ.c_str(), std::strerror(errno));
  return fs::path(templ);
}

fs::path absolute_path(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  if (ec) return p;
  return a.lexically_normal();
}

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::current_path();
  return exe.parent_path();
}

std::string find_executable(const std::string& name, const std::string& path_env, const fs::path& cwd) {
  if (name.find('/') != std::string::npos) {
    std::string p = name[0] == '/' || cwd.empty() ? name : (cwd / name).string();
    std::error_code ec;
    return ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p, ec) ? p : "";
  }
  std::string path = path_env;
  if (path.empty()) {
    const char* p = std::getenv("PATH");
    path = p ? p : "/usr/bin:/bin";
  }
  for (const auto& dir : split(path, ':')) {
    if (dir.empty()) continue;
    std::string cand = dir + "/" + name;
    if (::access(cand.c_str(), X_OK) == 0 && !fs::is_directory(cand)) return cand;
  }
  return "";
}

scoped_dir::~scoped_dir() {
  if (m_path.empty()) return;
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

}  // namespace magpie
