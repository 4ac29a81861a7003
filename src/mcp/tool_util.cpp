// Tool helpers (see tool_util.h).
#include "mcp/tool_util.h"

#include <atomic>
#include <set>

#include <unistd.h>

#include "core/log.h"
#include "core/workspace.h"
#include "core/strings.h"
#include "mcp/run_registry.h"
#include "core/json_schema.h"

namespace magpie::mcp {

using namespace magpie::schema;  // the one schema library (core/json_schema.h)

std::string arg_str(const json& a, const char* k, const std::string& d) { return json_string(a, k, d); }
double arg_num(const json& a, const char* k, double d) { return json_number(a, k, d); }
bool arg_bool(const json& a, const char* k, bool d) { return json_bool(a, k, d); }
std::vector<std::string> arg_strings(const json& a, const char* k) {
  std::vector<std::string> out;
  if (a.contains(k) && a[k].is_array())
    for (const auto& x : a[k])
      if (auto s = json_as_string(x)) out.push_back(*s);
  return out;
}

bool arg_set(const json& a, const char* k) {
  if (!a.contains(k)) return false;
  const json& v = a[k];
  if (v.is_null()) return false;
  if (auto s = json_as_string(v)) return !s->empty();
  if (v.is_array() || v.is_object()) return !v.empty();
  if (auto b = json_as_bool(v)) return *b;
  if (auto d = json_as_number(v)) return *d != 0;
  return true;
}

const std::vector<std::string>& kernel_types() {
  static const std::vector<std::string> k = {"hip", "cuda", "triton", "pytorch", "host"};
  return k;
}

status_or<fs::path> output_dir_path(const std::string& v, const tool_context& ctx) {
  fs::path p = absolute_path(v.empty() ? ctx.settings().default_output_dir : fs::path(v));
  MAGPIE_RETURN_IF_ERROR(make_dirs(p));
  return p;
}

namespace {

std::set<std::string> dir_names(const fs::path& d) {
  std::set<std::string> s;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(d, ec))
    if (e.is_directory(ec)) s.insert(e.path().filename().string());
  return s;
}

}  // namespace

status_or<cli_run> run_magpie(tool_context& ctx, const std::vector<std::string>& args, double timeout_s,
                              const fs::path& out_dir, const std::string& workspace_prefix) {
  cli_run run;
  std::set<std::string> before = out_dir.empty() ? std::set<std::string>() : dir_names(out_dir);
  double step = 0;
  std::string last_line;
  auto on_line = [&](const std::string& line) {
    if (trim(line).empty()) return;
    last_line = line;
    step += 1;
    ctx.progress(step, 0, std::string(trim(line)).substr(0, 300));
  };
  MAGPIE_LOG_INFO("mcp: running magpie %s", argv_to_display(args).c_str());
  MAGPIE_ASSIGN_OR_RETURN(run.outcome, run_self(ctx.settings().self_exe.string(), args, fs::path(), timeout_s,
                                                [&ctx] { return ctx.cancelled(); }, on_line));
  const run_result& r = run.outcome.result;
  if (run.outcome.cancelled) return error(status_code::cancelled, "cancelled");
  if (r.timed_out) return error(status_code::timeout, "magpie %s timed out after %.0f s", args[0].c_str(), timeout_s);
  if (contains(r.err, "unknown subcommand") || (args.size() > 1 && contains(r.err, "unknown action")))
    return error(status_code::failed_precondition, "this magpie build has no '%s' command: %s",
                 argv_to_display({args.begin(), args.begin() + std::min<size_t>(2, args.size())}).c_str(),
                 std::string(trim(r.output_tail(400))).c_str());
  for (const auto& l : split(r.out, '\n')) {
    run.stdout_lines.push_back(l);
    std::string_view t = trim(l);
    if (starts_with(t, "Workspace:")) run.workspace = std::string(trim(t.substr(10)));
  }
  if (run.workspace.empty() && !out_dir.empty()) {
    for (const auto& n : dir_names(out_dir))
      if (!before.count(n) && (workspace_prefix.empty() || starts_with(n, workspace_prefix)))
        if (run.workspace.empty() || n > run.workspace.filename().string()) run.workspace = out_dir / n;
  }
  return run;
}

status_or<fs::path> write_request_file(const fs::path& out_dir, const std::string& stem, const std::string& ext,
                                       const std::string& text) {
  static std::atomic<int> counter{0};
  fs::path dir = out_dir / ".mcp_requests";
  MAGPIE_RETURN_IF_ERROR(make_dirs(dir));
  fs::path f = dir / strprintf("%s_%s_%d_%d.%s", sanitize_label(stem).c_str(), timestamp_now().c_str(),
                               static_cast<int>(::getpid()), counter.fetch_add(1), ext.c_str());
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(f, text));
  return f;
}

}  // namespace magpie::mcp
