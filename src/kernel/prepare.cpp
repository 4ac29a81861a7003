#include "kernel/prepare.h"

#include <cstdlib>
#include <vector>

#include "core/log.h"
#include "core/strings.h"
#include "magpie_generated/version.h"

namespace magpie::kernel {

fs::path resource_dir(const std::string& name) {
  fs::path exe = executable_dir();
  std::vector<fs::path> cands;
  if (const char* home = std::getenv("MAGPIE_HOME")) cands.push_back(fs::path(home) / name);
  // next to the binary; installed layout; a build directory inside the source tree; the tree
  // the binary was configured from.
  for (const fs::path& p : {exe / name, exe / ".." / "share" / "magpie" / name, exe / ".." / name,
                            fs::path(MAGPIE_SOURCE_DIR) / name})
    cands.push_back(p);
  for (const fs::path& p : cands) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) return absolute_path(p);
  }
  return absolute_path(fs::path(MAGPIE_SOURCE_DIR) / name);
}

namespace {

std::string python_exe() {
  const char* p = std::getenv("MAGPIE_PYTHON");
  return p && *p ? p : "python3";
}

argv_list default_python_testcase(const kernel_spec& s) {
  std::vector<std::string> argv = {python_exe(), "-m", "magpie_bench"};
  std::string module = !s.source_files.empty() ? s.source_files[0] : (s.target ? s.target->module : "");
  argv.insert(argv.end(), {"--module", module});
  std::string entry = s.entry;
  if (entry.empty() && s.target && !s.target->callable.empty()) entry = s.target->callable;
  if (!entry.empty()) argv.insert(argv.end(), {"--entry", entry});
  if (!s.inputs_from.empty()) argv.insert(argv.end(), {"--inputs-from", s.inputs_from});
  std::string gi = s.target && !s.target->get_inputs.empty() ? s.target->get_inputs : s.get_inputs_func;
  if (gi != "get_inputs") argv.insert(argv.end(), {"--get-inputs", gi});
  if (s.get_init_inputs_func != "get_init_inputs") argv.insert(argv.end(), {"--get-init-inputs", s.get_init_inputs_func});
  return {argv};
}

std::vector<std::string> default_compile(const kernel_spec& s, const prepare_context& ctx, const fs::path& out) {
  std::string inc = "-I" + resource_dir("include").string();
  std::vector<std::string> argv;
  switch (s.type) {
    case kernel_type::host:
      argv = {"g++", "-O2", "-std=c++17", inc};
      break;
    case kernel_type::cuda: {
      std::string arch = starts_with(ctx.gpu_arch, "sm_") ? ctx.gpu_arch : "sm_90";
      argv = {"nvcc", "-O3", "-std=c++17", "-arch=" + arch, inc};
      break;
    }
    case kernel_type::hip: {
      std::string arch = starts_with(ctx.gpu_arch, "gfx") ? ctx.gpu_arch : "gfx942";
      argv = {"hipcc", "-O3", "-std=c++17", "--offload-arch=" + arch, inc};
      break;
    }
    default:
      return {};
  }
  argv.insert(argv.end(), s.source_files.begin(), s.source_files.end());
  argv.insert(argv.end(), {"-o", out.string()});
  return argv;
}

void run_compile(const kernel_spec& s, const prepare_context& ctx, const argv_list& cmds, stage_result* st) {
  double t0 = monotonic_seconds();
  json ran = json::array();
  for (size_t i = 0; i < cmds.size(); ++i) {
    spawn_spec sp;
    sp.argv = cmds[i];
    sp.cwd = s.working_dir;
    sp.env = s.env;
    ran.push_back(argv_to_display(cmds[i]));
    if (ctx.log_commands)
      MAGPIE_LOG_INFO("[%s] compile %zu/%zu: %s", s.id.c_str(), i + 1, cmds.size(), argv_to_display(cmds[i]).c_str());
    auto r = run_command(sp, ctx.compile_timeout_s);
    if (!r.ok() || !r->success()) {
      st->state = stage_state::failed;
      std::string why = r.ok() ? r->describe() + ": " + r->output_tail() : r.get_status().message();
      st->errors.push_back(strprintf("Compile command %zu/%zu failed: %s", i + 1, cmds.size(), why.c_str()));
      break;
    }
  }
  if (st->state != stage_state::failed) st->state = stage_state::success;
  st->detail["commands"] = ran;
  st->detail["duration_s"] = monotonic_seconds() - t0;
}

}  // namespace

prepared_kernel prepare_kernel(const kernel_spec& spec, const prepare_context& ctx, stage_result* compile) {
  prepared_kernel pk;
  pk.spec = spec;
  pk.cwd = spec.working_dir;
  pk.env = spec.env;
  pk.testcase = spec.testcase_command;
  *compile = stage_result{};
  if (is_python(spec.type)) {
    pk.env.emplace_back("PYTHONPATH", resource_dir("python").string());
    if (pk.testcase.empty()) pk.testcase = default_python_testcase(spec);
    if (!spec.compile_command.empty()) run_compile(spec, ctx, spec.compile_command, compile);
    return pk;
  }
  argv_list cmds = spec.compile_command;
  bool want_default = cmds.empty() && !spec.source_files.empty() && (spec.testcase_command.empty() || ctx.enable_default_compile);
  fs::path out = ctx.build_root / sanitize_label(spec.id) / sanitize_label(spec.id);
  if (want_default) {
    auto argv = default_compile(spec, ctx, out);
    if (!argv.empty()) {
      cmds.push_back(argv);
      (void)make_dirs(out.parent_path());
    }
  }
  if (!cmds.empty()) run_compile(spec, ctx, cmds, compile);
  if (pk.testcase.empty() && want_default) pk.testcase = {{out.string()}};
  return pk;
}

}  // namespace magpie::kernel
