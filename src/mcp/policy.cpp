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

/// Argument names that hold paths, in every tool.
const std::set<std::string>& path_keys() {
  static const std::set<std::string> k = {
      "kernel_path", "kernel_paths", "reference_path", "working_dir", "output_dir", "output_path", "trace_dir",
      "trace_file", "trace_files", "kernel_source_repos", "project_path", "workspace_dir", "workspace_dirs",
      "db_path", "config", "workspace", "resume", "shared_dir", "ray_shared_storage_path", "hf_cache_path",
      "inferencex_path", "benchmark_script"};
  return k;
}

status refuse_path(const std::string& field, const std::string& value, const status& why) {
  std::string shown = replace_all(value, std::string(1, '\0'), "\\0");  // %s would stop at a NUL
  return error(status_code::permission_denied, "argument '%s': path '%s' refused: %s", field.c_str(), shown.c_str(),
               why.message().c_str());
}

status confine_value(const trust_policy& p, const std::string& field, json* v) {
  if (auto s = json_as_string(*v)) {
    if (s->empty()) return ok_status();
    MAGPIE_ASSIGN_OR_RETURN(fs::path r, confine_path(p, field, *s));
    *v = r.string();
  } else if (v->is_array()) {
    for (size_t i = 0; i < v->size(); ++i) MAGPIE_RETURN_IF_ERROR(confine_value(p, strprintf("%s[%zu]", field.c_str(), i), &(*v)[i]));
  }
  return ok_status();
}

status check_command_string(const trust_policy& p, const std::string& field, const json& v, const fs::path& cwd) {
  auto s = json_as_string(v);
  if (!s || trim(*s).empty()) return ok_status();
  for (const auto& argv : command_from_string(*s)) MAGPIE_RETURN_IF_ERROR(check_command(p, field, argv, cwd));
  return ok_status();
}

/// The directory relative commands of a kernel tool call run in: working_dir, else the kernel's.
fs::path command_dir(const json& args) {
  std::string wd = json_string(args, "working_dir");
  if (!wd.empty()) return wd;
  std::string k = json_string(args, "kernel_path");
  if (k.empty() && args.contains("kernel_paths") && args["kernel_paths"].is_array() && !args["kernel_paths"].empty())
    k = json_as_string(args["kernel_paths"][0]).value_or("");
  return k.empty() ? fs::path() : fs::path(k).parent_path();
}

status_or<json> apply(const std::string& tool, json args, const trust_policy& p, const std::string& prefix) {
  if (!args.is_object()) return args;
  for (auto it = args.begin(); it != args.end(); ++it)
    if (path_keys().count(it.key())) MAGPIE_RETURN_IF_ERROR(confine_value(p, prefix + it.key(), &it.value()));
  for (const char* key : {"batch", "task_id"}) {  // a batch directory, or a name under the shared directory
    std::string v = json_string(args, key);
    if (v.empty() || (starts_with(v, "run-") && v.find('/') == std::string::npos)) continue;
    if (v.find('/') != std::string::npos || v == "." || v == "..") {
      json j = v;
      MAGPIE_RETURN_IF_ERROR(confine_value(p, prefix + key, &j));
      args[key] = j;
    }
  }
  // A model given as a local directory (benchmark / benchmark_batch configs) is a path too.
  if (std::string m = json_string(args, "model"); !m.empty() && (m[0] == '/' || m[0] == '.' || m[0] == '~')) {
    json j = m;
    MAGPIE_RETURN_IF_ERROR(confine_value(p, prefix + "model", &j));
    args["model"] = j;
  }
  fs::path cwd = command_dir(args);
  for (const char* key : {"compile_command", "testcase_command"})
    if (args.contains(key)) MAGPIE_RETURN_IF_ERROR(check_command_string(p, prefix + key, args[key], cwd));
  if (args.contains("testcase_commands") && args["testcase_commands"].is_array())
    for (size_t i = 0; i < args["testcase_commands"].size(); ++i)
      MAGPIE_RETURN_IF_ERROR(
          check_command_string(p, strprintf("%stestcase_commands[%zu]", prefix.c_str(), i), args["testcase_commands"][i], cwd));
  if (tool == "optimize" && !json_string(args, "python").empty())
    MAGPIE_RETURN_IF_ERROR(check_command(p, prefix + "python", {json_string(args, "python")}, {}));
  if (args.contains("extra_args") && args["extra_args"].is_array()) {
    std::vector<std::string> xs;
    for (const auto& x : args["extra_args"]) xs.push_back(json_as_string(x).value_or(dump_compact(x)));
    MAGPIE_ASSIGN_OR_RETURN(auto checked, check_benchmark_args(p, prefix + "extra_args", xs));
    args["extra_args"] = checked;
  }
  if (args.contains("extra_envs") && args["extra_envs"].is_object())
    for (auto it = args["extra_envs"].begin(); it != args["extra_envs"].end(); ++it)
      if (env_needs_trust(it.key()))
        MAGPIE_RETURN_IF_ERROR(require_trust(p, prefix + "extra_envs." + it.key(),
                                             "an environment variable that loads code or picks programs or their arguments"));
  if (!json_string(args, "docker_image").empty())
    MAGPIE_RETURN_IF_ERROR(require_trust(p, prefix + "docker_image", "a client-chosen container image (its entrypoint runs)"));
  if (tool == "benchmark_batch" && args.contains("configs") && args["configs"].is_array())
    for (size_t i = 0; i < args["configs"].size(); ++i) {
      MAGPIE_ASSIGN_OR_RETURN(json c, apply("benchmark", args["configs"][i], p, strprintf("%sconfigs[%zu].", prefix.c_str(), i)));
      args["configs"][i] = std::move(c);
    }
  return args;
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

status_or<json> apply_trust_policy(const std::string& tool, const json& args, const trust_policy& p) {
  return apply(tool, args, p, "");
}

}  // namespace magpie::mcp
