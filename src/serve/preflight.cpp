#include "serve/preflight.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "core/log.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "serve/client.h"
#include "serve/http_client.h"

namespace magpie::serve {

namespace {

/// " (benchmark.client.KEY in FILE)" when the run has a config file: the setting may come from it.
std::string yaml_field(const benchmark_config& c, const char* key) {
  if (c.config_path.empty()) return {};
  return strprintf(" (or benchmark.client.%s in %s)", key, c.config_path.c_str());
}

double time_left(double deadline_s) {
  return deadline_s > 0 ? deadline_s - monotonic_seconds() : std::numeric_limits<double>::infinity();
}

/// The program a launch starts (launcher.cpp's framework_argv / docker_argv) and, for a
/// `python3 -m PKG.module` launch, the package that must be importable.
std::pair<std::string, std::string> launch_program(const benchmark_config& c) {
  if (c.run_mode == server_run_mode::docker) return {"docker", ""};
  if (!c.server.command.empty()) return {c.server.command[0], ""};
  if (c.framework == serving_framework::vllm) return {"vllm", ""};
  return {"python3", c.framework == serving_framework::sglang ? "sglang" : "atom"};
}

status check_launch_program(const benchmark_config& c) {
  auto [program, package] = launch_program(c);
  auto env = current_environment();
  merge_env(env, c.envs);
  std::string path = env.count("PATH") ? env["PATH"] : std::string("/usr/bin:/bin");
  std::string exe = find_executable(program, path);
  const char* what = c.run_mode == server_run_mode::docker ? "run_mode docker needs docker" : "the server's launch command";
  if (exe.empty())
    return not_found("cannot start the server: command not found: %s (%s; searched PATH=%s)", program.c_str(), what, path.c_str());
  if (package.empty()) return ok_status();
  // find_spec locates a top-level package without importing it (no torch import, ~30 ms).
  spawn_spec s;
  s.argv = {exe, "-c", "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 3)", package};
  s.env = c.envs;
  auto r = run_command(s, 30.0);
  if (r.ok() && r->exit_code == 3)
    return not_found("cannot start the server: %s cannot import the Python package '%s' (framework %s; install it or set "
                     "PYTHONPATH in benchmark.envs)", exe.c_str(), package.c_str(), c.framework_name().c_str());
  return ok_status();  // another failure of the probe itself is left to the launch to report
}

status check_server(const benchmark_config& c, double deadline_s, preflight_result& out) {
  MAGPIE_ASSIGN_OR_RETURN(endpoint_url url, parse_base_url(c.base_url));
  limit_policy lp;
  lp.request_timeout_s = c.client.request_timeout_s;
  double t = exchange_timeout_s(lp, time_left(deadline_s));
  if (!c.client.served_model_name.empty()) {
    status st = probe_connect(url, t);
    if (!st.ok()) return status(st.code(), "the server at --base-url is not reachable: " + st.message());
    return ok_status();
  }
  auto model = first_served_model(url, t);
  if (!model.ok()) return status(model.get_status().code(), "the server at --base-url: " + model.get_status().message());
  out.served_model = *model;
  return ok_status();
}

}  // namespace

status check_output_dir(const fs::path& dir) {
  fs::path p = absolute_path(dir.empty() ? fs::path(".") : dir);
  std::error_code ec;
  fs::path probe = p;
  while (!fs::exists(probe, ec) && probe.has_parent_path() && probe.parent_path() != probe) probe = probe.parent_path();
  if (!fs::is_directory(probe, ec))
    return invalid_argument("--output-dir %s: %s is not a directory", dir.c_str(), probe.c_str());
  if (::access(probe.c_str(), W_OK | X_OK) != 0)
    return error(status_code::failed_precondition, "--output-dir %s: %s is not writable (%s)", dir.c_str(), probe.c_str(),
                 std::strerror(errno));
  return ok_status();
}

status check_dataset_file(const client_settings& s) {
  if (s.dataset_name == "random") return ok_status();
  if (s.dataset_name != "sharegpt" && s.dataset_name != "custom")
    return invalid_argument("--dataset-name / benchmark.client.dataset_name: unknown dataset '%s' (random, sharegpt, custom)",
                            s.dataset_name.c_str());
  if (s.dataset_path.empty())
    return invalid_argument("dataset %s needs a file: give --dataset-path (benchmark.client.dataset_path)", s.dataset_name.c_str());
  int fd = ::open(s.dataset_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return error(e == ENOENT ? status_code::not_found : status_code::io_error, "--dataset-path %s: %s", s.dataset_path.c_str(),
                 std::strerror(e));
  }
  char byte = 0;
  ssize_t n = ::read(fd, &byte, 1);
  int e = errno;
  ::close(fd);
  if (n < 0) return io_error("--dataset-path %s: %s", s.dataset_path.c_str(), std::strerror(e));
  if (n == 0) return invalid_argument("--dataset-path %s: the file is empty", s.dataset_path.c_str());
  return ok_status();
}

status_or<preflight_result> preflight(const benchmark_config& cfg, const run_options& opts, double deadline_s) {
  preflight_result out;
  MAGPIE_RETURN_IF_ERROR(check_output_dir(opts.output_dir));
  if (auto st = check_dataset_file(cfg.client); !st.ok()) return status(st.code(), st.message() + yaml_field(cfg, "dataset_path"));
  if (!cfg.base_url.empty()) {
    MAGPIE_RETURN_IF_ERROR(check_server(cfg, deadline_s, out));
  } else {
    MAGPIE_RETURN_IF_ERROR(check_launch_program(cfg));
  }
  return out;
}

}  // namespace magpie::serve
