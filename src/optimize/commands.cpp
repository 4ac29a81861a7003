// command_runner: children with logs, timeouts and prompt stop on a recorded signal.
#include "optimize/commands.h"

#include <csignal>
#include <cstring>

#include "core/log.h"
#include "core/signal_capture.h"
#include "core/strings.h"
#include "core/subprocess.h"

namespace magpie::optimize {

std::string interrupted() {
  int s = signal_capture::last_signal();
  return s ? strprintf("interrupted by signal %d (%s)", s, strsignal(s)) : std::string();
}

std::string tail_of(const command_result& r, size_t max_bytes) {
  std::string t = r.err.size() > max_bytes ? r.err.substr(r.err.size() - max_bytes) : r.err;
  if (t.size() < max_bytes / 2) {
    size_t keep = max_bytes - t.size();
    t = (r.out.size() > keep ? r.out.substr(r.out.size() - keep) : r.out) + t;
  }
  return std::string(trim(t));
}

command_runner::command_runner(fs::path workspace) : m_workspace(std::move(workspace)), m_logs(m_workspace / "logs") {
  (void)make_dirs(m_logs);
}

command_result command_runner::run(const std::string& name, const std::vector<std::string>& argv, const fs::path& cwd,
                                   const env_list& env, double timeout_s) {
  command_result r;
  double t0 = monotonic_seconds();
  spawn_spec s;
  s.argv = argv;
  s.cwd = cwd;
  s.env = env;
  s.env.emplace_back("MAGPIE_NO_PROGRESS", "1");
  auto child = child_process::spawn(s);
  if (!child.ok()) {
    r.rc = 127;
    r.err = "cannot run " + (argv.empty() ? std::string("(nothing)") : argv.front()) + ": " + child.get_status().message();
  } else {
    bool stopped = false;
    while ((*child)->poll_output(0.2)) {
      bool late = timeout_s > 0 && monotonic_seconds() - t0 > timeout_s;
      if (!interrupted().empty() || late) {
        (*child)->kill_group();
        r.rc = late ? 124 : 130;
        stopped = true;
        break;
      }
    }
    run_result rr = (*child)->wait(5.0);
    r.out = rr.out;
    r.err = rr.err;
    if (!stopped) r.rc = rr.term_signal ? 128 + rr.term_signal : rr.exit_code;
    if (stopped) r.err += r.rc == 124 ? strprintf("\n[magpie optimize] stopped after %.0f s\n", timeout_s)
                                      : "\n[magpie optimize] " + interrupted() + "\n";
  }
  r.seconds = monotonic_seconds() - t0;
  (void)write_file_atomic(m_logs / (name + ".out"), r.out);
  (void)write_file_atomic(m_logs / (name + ".err"), r.err);
  json envj = json::object();
  for (const auto& [k, v] : env) envj[k] = v;
  m_commands.push_back({{"name", name}, {"argv", argv}, {"cwd", cwd.empty() ? json(nullptr) : json(cwd.string())},
                        {"env", envj}, {"rc", r.rc}, {"seconds", r.seconds}, {"stdout", "logs/" + name + ".out"},
                        {"stderr", "logs/" + name + ".err"}});
  MAGPIE_LOG_INFO("%s rc=%d (%.1f s)", name.c_str(), r.rc, r.seconds);
  return r;
}

void command_runner::record(const std::string& name, const std::vector<std::string>& equivalent, double seconds, int rc,
                            const std::string& log_file) {
  json c = {{"name", name}, {"in_process", true}, {"argv", equivalent}, {"rc", rc}, {"seconds", seconds}};
  if (!log_file.empty()) c["stdout"] = log_file;
  m_commands.push_back(std::move(c));
}

void command_runner::prepend(const json& earlier) {
  if (!earlier.is_array()) return;
  json all = earlier;
  for (const auto& c : m_commands) all.push_back(c);
  m_commands = std::move(all);
}

}  // namespace magpie::optimize
