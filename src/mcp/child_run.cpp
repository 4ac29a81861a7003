// Child-process runs for MCP tools (see child_run.h).
#include "mcp/child_run.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>

namespace magpie::mcp {

namespace {

/// Signals every process of `tree` and each one's process group (children of magpie's CLI
/// run in their own sessions, so the root's group alone would leave them running).
void signal_tree(const std::vector<pid_t>& tree, int sig) {
  for (pid_t p : tree) {
    pid_t g = ::getpgid(p);
    if (g > 1 && g != ::getpgrp()) ::kill(-g, sig);
    ::kill(p, sig);
  }
}

}  // namespace

cancel_watch::cancel_watch(pid_t pid, std::string tag, std::function<bool()> should_cancel, double grace_s) {
  m_thread = std::thread([this, pid, tag = std::move(tag), should_cancel = std::move(should_cancel), grace_s] {
    using namespace std::chrono;
    steady_clock::time_point term_at{};
    std::vector<pid_t> tree;
    bool killed = false;
    while (!m_stop.load()) {
      if (!m_fired.load() && should_cancel()) {
        m_fired = true;
        tree = tree_members(pid, tag);  // snapshot before anyone dies and is re-parented
        signal_tree(tree, SIGTERM);
        term_at = steady_clock::now();
      } else if (m_fired.load() && !killed && steady_clock::now() - term_at > duration<double>(grace_s)) {
        signal_tree(tree, SIGKILL);
        killed = true;
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    if (m_fired.load() && !killed) {  // the root exited within the grace: its descendants may not have
      std::vector<pid_t> alive;
      for (pid_t p : tree)
        if (p != pid && ::kill(p, 0) == 0) alive.push_back(p);
      if (!alive.empty()) {
        std::this_thread::sleep_for(milliseconds(200));
        signal_tree(alive, SIGKILL);
      }
    }
  });
}

cancel_watch::~cancel_watch() {
  m_stop = true;
  if (m_thread.joinable()) m_thread.join();
}

void line_splitter::feed(std::string_view chunk) {
  m_buf.append(chunk);
  size_t start = 0;
  for (size_t nl = m_buf.find('\n'); nl != std::string::npos; nl = m_buf.find('\n', start)) {
    std::string line = m_buf.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    m_on_line(line);
    start = nl + 1;
  }
  m_buf.erase(0, start);
  if (m_buf.size() > (1u << 20)) {  // a runaway line: deliver what we have
    m_on_line(m_buf);
    m_buf.clear();
  }
}

void line_splitter::flush() {
  if (!m_buf.empty()) m_on_line(m_buf);
  m_buf.clear();
}

status_or<child_outcome> run_self(const std::string& self_exe, const std::vector<std::string>& args,
                                  const fs::path& cwd, double timeout_s, const std::function<bool()>& should_cancel,
                                  const std::function<void(const std::string&)>& on_line) {
  spawn_spec spec;
  spec.argv.push_back(self_exe);
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  spec.env.emplace_back("MAGPIE_NO_PROGRESS", "1");
  auto splitter = std::make_shared<line_splitter>(on_line ? on_line : [](const std::string&) {});
  spec.on_stderr = [splitter](std::string_view c) { splitter->feed(c); };
  MAGPIE_ASSIGN_OR_RETURN(auto child, child_process::spawn(spec));
  child_outcome out;
  {
    cancel_watch watch(child->pid(), child->tree_tag(), should_cancel);
    out.result = child->wait(timeout_s);
    out.cancelled = watch.fired();
  }
  splitter->flush();
  return out;
}

}  // namespace magpie::mcp
