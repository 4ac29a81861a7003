// The MCP trust model (see policy.h).
#include "mcp/policy.h"

#include <cctype>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>

#include "core/config.h"
#include "core/strings.h"
#include "serve/bench_config.h"

namespace magpie::mcp {

namespace {

bool inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q) {
    if (r->empty()) continue;  // a trailing separator of the root
    if (q == p.end() || *r != *q) return false;
  }
  return true;
}

std::string allow_hint(const std::string& program) {
  return "start `magpie mcp` with --allow-command " + (program.empty() ? std::string("PROGRAM") : program) +
         " to allow this program, or --trust-client to allow any (docs/mcp.md, Trust model)";
}

/// `magpie benchmark` flags by what a client may do with them.
enum class flag_kind { boolean, safe, safe_multi, path, path_multi, trusted };

const std::map<std::string, flag_kind>& benchmark_flags() {
  static const std::map<std::string, flag_kind> k = [] {
    std::map<std::string, flag_kind> m;
    for (const char* f : {"--model", "-m", "--precision", "-p", "--tp", "--concurrency", "--input-len", "--output-len",
                          "--run-mode", "--run-kind", "--timeout", "--base-url", "--client-defaults", "--endpoint",
                          "--served-model-name", "--dataset-name", "--num-prompts", "--request-rate", "--burstiness",
                          "--max-concurrency", "--random-input-len", "--random-output-len", "--random-range-ratio",
                          "--temperature", "--num-warmups", "--seed", "--metric-percentiles", "--percentile-metrics",
                          "--label", "--request-timeout", "--timestamps", "--port", "--ready-timeout",
                          "--profile-prompts", "--top-k", "--start-pct", "--end-pct", "--min-duration-us",
                          "--agentx-mode", "--ray-address"})
      m[f] = flag_kind::safe;
    for (const char* f : {"--torch-profiler", "--system-profiler", "--ignore-eos", "--no-continuous-usage", "--dry-run",
                          "--no-rank-csv", "--clamped-traces", "--allow-partial", "--find-kernel-sources", "--agentx"})
      m[f] = flag_kind::boolean;
    for (const char* f : {"--goodput", "--header", "--categories", "--ignore-categories"}) m[f] = flag_kind::safe_multi;
    for (const char* f : {"--dataset-path", "--output-dir", "-o", "--server-trace-dir", "--trace-dir",
                          "--inferencex-path", "--benchmark-script"})
      m[f] = flag_kind::path;
    for (const char* f : {"--kernel-source-repos", "--rank-file"}) m[f] = flag_kind::path_multi;
    for (const char* f : {"--server-args", "--docker-image", "--benchmark-config", "-b"}) m[f] = flag_kind::trusted;
    return m;
  }();
  return k;
}

status refuse_path(const std::string& field, const std::string& value, const status& why) {
  std::string shown = replace_all(value, std::string(1, '\0'), "\\0");  // %s would stop at a NUL
  return error(status_code::permission_denied, "argument '%s': path '%s' refused: %s", field.c_str(), shown.c_str(),
               why.message().c_str());
}

}  // namespace

std::string trust_policy::describe() const {
  std::string s = "workspace root " + root.string();
  for (const auto& d : also_allowed) s += ", results " + d.string();
  if (trust_client) return s + "; client trusted: any command";
  return s + "; client-chosen programs: " + (allowed_programs.empty() ? std::string("none") : join(allowed_programs, ", "));
}

status_or<trust_policy> make_trust_policy(const fs::path& root, const fs::path& output_dir,
                                          std::vector<std::string> allowed_programs, bool trust_client) {
  trust_policy p;
  std::error_code ec;
  p.root = fs::canonical(absolute_path(root), ec);
  if (ec || !fs::is_directory(p.root, ec))
    return invalid_argument("--workspace-root %s is not an existing directory", root.c_str());
  if (!output_dir.empty()) {
    MAGPIE_ASSIGN_OR_RETURN(fs::path out, resolve_path(fs::current_path(ec), output_dir.string()));
    if (!inside(p.root, out)) p.also_allowed.push_back(out);
  }
  for (const auto& prog : allowed_programs)
    if (trim(prog).empty()) return invalid_argument("--allow-command needs a program name or path");
  p.allowed_programs = std::move(allowed_programs);
  p.trust_client = trust_client;
  return p;
}

status_or<fs::path> resolve_path(const fs::path& root, const std::string& value) {
  if (value.find('\0') != std::string::npos) return invalid_argument("it holds a NUL byte");
  std::string v = value;
  if (v == "~" || starts_with(v, "~/")) {  // as magpie's configs expand it
    const char* home = std::getenv("HOME");
    v = std::string(home ? home : "/") + v.substr(1);
  }
  fs::path p(v);
  if (p.is_relative()) p = root / p;
  std::deque<std::string> todo;
  for (const auto& c : p.relative_path()) todo.push_back(c.string());
  fs::path cur = "/";
  int links = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      cur = cur.parent_path();
      continue;
    }
    fs::path next = cur / c;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(next, ec))) {
      if (++links > 40) return invalid_argument("too many symbolic links (a loop?) at %s", next.c_str());
      fs::path target = fs::read_symlink(next, ec);
      if (ec) return io_error("cannot read the symbolic link %s: %s", next.c_str(), ec.message().c_str());
      std::deque<std::string> t;
      for (const auto& x : target.relative_path()) t.push_back(x.string());
      todo.insert(todo.begin(), t.begin(), t.end());
      if (target.is_absolute()) cur = "/";
      continue;
    }
    cur = next;
  }
  return cur;
}

status_or<fs::path> confine_path(const trust_policy& p, const std::string& field, const std::string& value) {
  auto r = resolve_path(p.root, value);
  if (!r.ok()) return refuse_path(field, value, r.get_status());
  if (inside(p.root, *r)) return *r;
  for (const auto& d : p.also_allowed)
    if (inside(d, *r)) return *r;
  return refuse_path(field, value,
                     error(status_code::permission_denied,
                           "it resolves to %s, outside the workspace root %s (symbolic links followed; start `magpie "
                           "mcp --workspace-root DIR` to serve another directory)",
                           r->c_str(), p.root.c_str()));
}

status check_command(const trust_policy& p, const std::string& field, const std::vector<std::string>& argv,
                     const fs::path& cwd) {
  if (argv.empty() || p.trust_client) return ok_status();
  const std::string& prog = argv[0];
  std::string got = find_executable(prog, {}, cwd);
  for (const auto& allowed : p.allowed_programs) {
    if (allowed.find('/') == std::string::npos && prog == allowed) return ok_status();
    std::string want = find_executable(allowed);
    std::error_code ec;
    if (!want.empty() && !got.empty() && fs::equivalent(want, got, ec)) return ok_status();
  }
  return error(status_code::permission_denied,
               "argument '%s': the client-chosen program '%s' (command: %s) is refused: by default this server runs "
               "only magpie's own pipelines; %s",
               field.c_str(), prog.c_str(), argv_to_display(argv).substr(0, 300).c_str(), allow_hint(prog).c_str());
}

status require_trust(const trust_policy& p, const std::string& field, const std::string& what) {
  if (p.trust_client) return ok_status();
  return error(status_code::permission_denied,
               "argument '%s': %s is refused: only a server started with --trust-client accepts it (docs/mcp.md, Trust "
               "model)",
               field.c_str(), what.c_str());
}

bool env_needs_trust(const std::string& key) {
  std::string k = key;
  for (auto& c : k) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::set<std::string> exact = {"PATH", "ENV", "BASH_ENV", "SHELL", "IFS", "HOME", "CDPATH", "EDITOR",
                                              "PAGER", "BROWSER", "CUDA_INJECTION64_PATH", "HIP_PATH", "ROCM_PATH"};
  if (exact.count(k)) return true;
  for (const char* pre : {"LD_", "PYTHON", "NODE_", "PERL", "RUBY", "MAGPIE_", "GIT_", "DYLD_", "LUA_"})
    if (starts_with(k, pre)) return true;
  for (const char* suf : {"_ARGS", "_CMD", "_COMMAND", "_PATH", "_PRELOAD", "_PLUGIN", "_PLUGINS", "_LIB", "_LIBS",
                          "_EXE", "_BIN", "_SCRIPT", "_OPTIONS", "_OPTS"})
    if (ends_with(k, suf)) return true;
  return false;
}

status_or<std::vector<std::string>> check_benchmark_args(const trust_policy& p, const std::string& field,
                                                         const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], value;
    bool inline_value = false;
    if (starts_with(a, "--") && a.find('=') != std::string::npos) {
      value = a.substr(a.find('=') + 1);
      a = a.substr(0, a.find('='));
      inline_value = true;
    }
    std::string where = strprintf("%s[%zu]", field.c_str(), i);
    auto it = benchmark_flags().find(a);
    if (it == benchmark_flags().end()) {
      if (p.trust_client) { out.push_back(args[i]); continue; }
      bool positional = !starts_with(a, "-");
      if (positional && serve::parse_serving_framework(a)) { out.push_back(a); continue; }
      return require_trust(p, where, "'" + args[i] + "' (not a plain client setting of `magpie benchmark`)");
    }
    if (it->second == flag_kind::trusted) {
      MAGPIE_RETURN_IF_ERROR(require_trust(p, where, "the flag " + a + " (it chooses a program, its arguments or a config)"));
      out.push_back(args[i]);
      if (!inline_value && i + 1 < args.size()) out.push_back(args[++i]);
      continue;
    }
    out.push_back(a);
    bool takes_one = it->second == flag_kind::safe || it->second == flag_kind::path;
    bool is_path = it->second == flag_kind::path || it->second == flag_kind::path_multi;
    std::vector<std::string> values;
    if (inline_value) values.push_back(value);
    else if (takes_one && i + 1 < args.size()) values.push_back(args[++i]);
    else if (it->second != flag_kind::boolean && !takes_one)
      while (i + 1 < args.size() && !starts_with(args[i + 1], "-")) values.push_back(args[++i]);
    for (auto& v : values) {
      if (is_path) {
        MAGPIE_ASSIGN_OR_RETURN(fs::path r, confine_path(p, where + " " + a, v));
        v = r.string();
      }
      out.push_back(v);
    }
    if (inline_value && !values.empty()) {  // keep the --flag=value spelling
      out.pop_back();
      out.back() += "=" + values.back();
    }
  }
  return out;
}

}  // namespace magpie::mcp
