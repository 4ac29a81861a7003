#include "kernel/spec_paths.h"

#include <cctype>
#include <fstream>
#include <set>

#include "core/log.h"
#include "core/strings.h"

namespace magpie::kernel {
namespace {

bool exists_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool exists_any(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

/// True when every relative entry of `files` exists under `base` (vacuously for none).
bool all_exist_under(const std::vector<std::string>& files, const fs::path& base) {
  for (const auto& f : files)
    if (!f.empty() && f[0] != '/' && !exists_any(base / f)) return false;
  return true;
}

/// "; $CK_HOME is not set" for each $NAME / ${NAME} left in an expanded value (Magpie's
/// expandvars keeps unknown variables), else "".
std::string unset_vars_note(const std::string& s) {
  std::string note;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '$') continue;
    size_t b = i + 1 + (i + 1 < s.size() && s[i + 1] == '{');
    size_t e = b;
    while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) ++e;
    if (e > b) note += "; $" + s.substr(b, e - b) + " is not set";
  }
  return note;
}

bool any_relative(const std::vector<std::string>& files) {
  for (const auto& f : files)
    if (!f.empty() && f[0] != '/') return true;
  return false;
}

}  // namespace

status resolve_working_dir(const std::string& wd, const config_node* at, const std::string& field,
                           const std::vector<std::string>& sources, const path_context& ctx, fs::path* out) {
  const std::string where = at ? at->where() : std::string("cli");
  if (wd.empty()) {
    // Magpie runs an entry without working_dir in the current directory.
    *out = absolute_path(ctx.cwd);
    if (!ctx.yaml_dir.empty() && any_relative(sources) && !all_exist_under(sources, ctx.cwd) &&
        all_exist_under(sources, ctx.yaml_dir)) {
      *out = absolute_path(ctx.yaml_dir);
      // Unambiguous (the files exist only there): a debug note per entry, one info line per
      // YAML directory, never a warning for running a bundled example from elsewhere.
      static std::set<fs::path> announced;
      if (announced.insert(*out).second)
        MAGPIE_LOG_INFO("kernel entries without working_dir: source_files are under the YAML file's directory %s, "
                        "not the current directory %s (Magpie's base); using the YAML file's directory",
                        out->c_str(), absolute_path(ctx.cwd).c_str());
      MAGPIE_LOG_DEBUG("%s: %s is not set; using the YAML file's directory %s", where.c_str(), field.c_str(), out->c_str());
    }
    return ok_status();
  }
  fs::path p(wd);
  if (p.is_absolute()) {
    *out = absolute_path(p);
    if (!exists_dir(*out)) return config_error(*at, field, "directory '" + wd + "' does not exist");
    return ok_status();
  }
  fs::path magpie_rule = absolute_path(ctx.cwd / p);
  if (exists_dir(magpie_rule)) {
    *out = magpie_rule;
    return ok_status();
  }
  if (!ctx.yaml_dir.empty()) {
    fs::path yaml_rule = absolute_path(ctx.yaml_dir / p);
    if (exists_dir(yaml_rule)) {
      MAGPIE_LOG_WARN("%s: %s '%s' does not exist relative to the current directory %s (Magpie's rule); using "
                      "%s, relative to the YAML file", where.c_str(), field.c_str(), wd.c_str(),
                      absolute_path(ctx.cwd).c_str(), yaml_rule.c_str());
      *out = yaml_rule;
      return ok_status();
    }
  }
  std::string msg = "directory '" + wd + "' does not exist (relative paths are resolved against the current directory " +
                    absolute_path(ctx.cwd).string() + ", as Magpie does)" + unset_vars_note(wd);
  return at ? config_error(*at, field, msg) : invalid_argument("%s: %s", field.c_str(), msg.c_str());
}

std::string resolve_entry_file(const std::string& p, const fs::path& working_dir, const path_context& ctx,
                               const std::string& where) {
  if (p.empty()) return p;
  fs::path q(p);
  if (q.is_absolute()) return absolute_path(q).string();
  fs::path in_wd = absolute_path(working_dir / q);
  if (exists_any(in_wd)) return in_wd.string();
  fs::path in_cwd = absolute_path(ctx.cwd / q);
  if (in_cwd != in_wd && exists_any(in_cwd)) {
    MAGPIE_LOG_WARN("%s: '%s' does not exist in working_dir %s (Magpie's rule); using %s, relative to the current "
                    "directory", where.c_str(), p.c_str(), working_dir.c_str(), in_cwd.c_str());
    return in_cwd.string();
  }
  return in_wd.string();
}

void warn_relative_programs(const argv_list& cmds, const fs::path& working_dir, const path_context& ctx,
                            const std::string& where) {
  for (const auto& argv : cmds) {
    if (argv.empty() || argv[0].empty() || argv[0][0] == '/' || argv[0].find('/') == std::string::npos) continue;
    if (exists_any(working_dir / argv[0])) continue;
    for (const fs::path& other : {ctx.cwd, ctx.yaml_dir}) {
      if (other.empty() || absolute_path(other) == absolute_path(working_dir) || !exists_any(other / argv[0])) continue;
      MAGPIE_LOG_WARN("%s: command '%s' runs inside working_dir %s (Magpie's rule), where it does not exist (yet); "
                      "it exists in %s", where.c_str(), argv[0].c_str(), working_dir.c_str(),
                      absolute_path(other).c_str());
      break;
    }
  }
}

namespace {

std::string head_of(const fs::path& file, size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  std::string s(max_bytes, '\0');
  in.read(s.data(), static_cast<std::streamsize>(max_bytes));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

}  // namespace

bool infer_kernel_type(const fs::path& file, kernel_type* out) {
  std::string ext = to_lower(file.extension().string());
  if (ext == ".cu" || ext == ".cuh") {
    *out = kernel_type::cuda;
    return true;
  }
  if (ext == ".hip") {
    *out = kernel_type::hip;
    return true;
  }
  if (ext == ".py") {
    std::string text = head_of(file, 1 << 20);
    *out = contains(text, "import triton") || contains(text, "from triton") ? kernel_type::triton : kernel_type::pytorch;
    return true;
  }
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c++" || ext == ".c") {
    std::string text = head_of(file, 1 << 20);
    if (contains(text, "hip_runtime") || contains(text, "hipLaunchKernelGGL") || contains(text, "hipMalloc"))
      *out = kernel_type::hip;
    else if (contains(text, "cuda_runtime") || contains(text, "cudaMalloc") || contains(text, "<<<"))
      *out = kernel_type::cuda;
    else if (contains(text, "__global__"))
      *out = kernel_type::hip;  // a device kernel without runtime headers: Magpie's default type
    else
      *out = kernel_type::host;
    return true;
  }
  return false;
}

}  // namespace magpie::kernel
