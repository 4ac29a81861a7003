// The trust model applied to a tools/call's JSON arguments (see policy_args_codec.h).
#include "mcp/policy_args_codec.h"

#include <set>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/strings.h"

namespace magpie::mcp {
namespace {

/// Argument names that hold paths, in every tool.
const std::set<std::string>& path_keys() {
  static const std::set<std::string> k = {
      "kernel_path", "kernel_paths", "reference_path", "working_dir", "output_dir", "output_path", "trace_dir",
      "trace_file", "trace_files", "kernel_source_repos", "project_path", "workspace_dir", "workspace_dirs",
      "db_path", "config", "workspace", "resume", "shared_dir", "ray_shared_storage_path", "hf_cache_path",
      "inferencex_path", "benchmark_script"};
  return k;
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

status_or<json> apply_trust_policy(const std::string& tool, const json& args, const trust_policy& p) {
  return apply(tool, args, p, "");
}

}  // namespace magpie::mcp
