// command_runner: children with logs, timeouts and prompt stop on a recorded signal.
#include "optimize/commands.h"

#include <algorithm>
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
  // One entry per variable (a later duplicate replaces the earlier value in place).
  std::vector<std::pair<std::string, std::string>> vars;
  for (const auto& [k, v] : env) {
    auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& e) { return e.first == k; });
    if (it == vars.end()) vars.emplace_back(k, v);
    else it->second = v;
  }
  m_commands.push_back({name, false, argv, cwd.empty() ? std::nullopt : std::optional<std::string>(cwd.string()), std::move(vars), r.rc,
                        r.seconds, "logs/" + name + ".out", "logs/" + name + ".err"});
  MAGPIE_LOG_INFO("%s rc=%d (%.1f s)", name.c_str(), r.rc, r.seconds);
  return r;
}

void command_runner::record(const std::string& name, const std::vector<std::string>& equivalent, double seconds, int rc,
                            const std::string& log_file) {
  m_commands.push_back({name, true, equivalent, std::nullopt, {}, rc, seconds,
                        log_file.empty() ? std::nullopt : std::optional<std::string>(log_file), std::nullopt});
}

void command_runner::prepend(const std::vector<command_record>& earlier) {
  m_commands.insert(m_commands.begin(), earlier.begin(), earlier.end());
}

}  // namespace magpie::optimize
