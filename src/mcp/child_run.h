// Running this binary's own CLI as a child process for MCP tools: output streamed line by
// line (for progress), cancellation by killing the child's process group, a timeout.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/process_tree.h"
#include "core/status.h"
#include "core/subprocess.h"

namespace magpie::mcp {

/// Once `should_cancel` turns true, sends SIGTERM to the process tree of `pid` (every process
/// and its process group: magpie's CLI starts each child in its own session; re-parented
/// members carrying the tree `tag`, core/process_tree.h), SIGKILL after `grace_s`; polls every
/// 50 ms until destroyed.
class cancel_watch {
 public:
  cancel_watch(pid_t pid, std::string tag, std::function<bool()> should_cancel, double grace_s = 2.0);
  ~cancel_watch();
  cancel_watch(const cancel_watch&) = delete;
  cancel_watch& operator=(const cancel_watch&) = delete;
  bool fired() const { return m_fired.load(); }

 private:
  std::atomic<bool> m_stop{false}, m_fired{false};
  std::thread m_thread;
};

/// Splits chunks into lines (without '\n'); calls `on_line` per complete line.
class line_splitter {
 public:
  explicit line_splitter(std::function<void(const std::string&)> on_line) : m_on_line(std::move(on_line)) {}
  void feed(std::string_view chunk);
  void flush();

 private:
  std::function<void(const std::string&)> m_on_line;
  std::string m_buf;
};

struct child_outcome {
  run_result result;
  bool cancelled = false;
};

/// Runs `self_exe args…` (stdin closed, MAGPIE_NO_PROGRESS=1, --quiet not forced) in `cwd`
/// with `timeout_s` (<= 0: none). `on_line` sees each stderr line as it arrives.
status_or<child_outcome> run_self(const std::string& self_exe, const std::vector<std::string>& args,
                                  const fs::path& cwd, double timeout_s, const std::function<bool()>& should_cancel,
                                  const std::function<void(const std::string&)>& on_line);

}  // namespace magpie::mcp
