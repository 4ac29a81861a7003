// File-system helpers. Writes of reports go through write_file_atomic so a crash
// never leaves a half-written file under the final name.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/status.h"

namespace magpie {

namespace fs = std::filesystem;

status_or<std::string> read_file(const fs::path& path);
/// Writes to "<path>.tmp.<pid>", fsyncs, then renames over `path`.
status write_file_atomic(const fs::path& path, std::string_view content);
status make_dirs(const fs::path& dir);
/// Creates a fresh directory "<parent>/<prefix>XXXXXX".
status_or<fs::path> make_temp_dir(const fs::path& parent, const std::string& prefix);
/// Absolute, lexically normal form (no symlink resolution, file need not exist).
fs::path absolute_path(const fs::path& p);
/// Directory containing the running executable.
fs::path executable_dir();
/// Resolves a command name the way exec in a child with working directory `cwd` does (and
/// Python's subprocess with cwd=): a name containing '/' is a path, relative ones resolved
/// against `cwd` (ours when empty); a bare name is searched on PATH (or the given PATH
/// string). Returns the executable's path, or empty if none.
std::string find_executable(const std::string& name, const std::string& path_env = {}, const fs::path& cwd = {});

/// Removes a directory tree when destroyed unless release() was called.
class scoped_dir {
 public:
  explicit scoped_dir(fs::path p) : m_path(std::move(p)) {}
  ~scoped_dir();
  scoped_dir(const scoped_dir&) = delete;
  scoped_dir& operator=(const scoped_dir&) = delete;
  const fs::path& path() const { return m_path; }
  void release() { m_path.clear(); }

 private:
  fs::path m_path;
};

}  // namespace magpie
