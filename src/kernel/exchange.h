// Observations of a harness process that the candidate's code cannot touch (issue 35,
// docs/harness-protocol.md "Threat model"): the exchange memory the supervisor creates and
// reads itself, the CPU time of the whole process tree from the kernel's accounting, and
// stopping that tree while its outputs are read.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/npy.h"
#include "core/status.h"

namespace magpie::kernel {

/// One output's place in the exchange memory (announced by the harness's ready line).
struct exchange_output {
  std::string name;
  dtype type = dtype::f32;
  std::vector<int64_t> shape;
  size_t offset = 0, bytes = 0;
};

/// The layout a ready line announces (kernel/harness_protocol.h decodes it).
struct exchange_layout {
  bool announced = false;                ///< an "exchange" object with an "outputs" array
  std::vector<exchange_output> outputs;  ///< in order, up to the first malformed one
  std::string problem;                   ///< that malformed output (unknown dtype, bad shape); "" when none
};

/// Supervisor-owned shared memory (memfd, no path) handed to a timing harness: after every
/// sample, inside the supervisor's clock, the harness copies its outputs there. The harness
/// sizes it once (before `ready`); the supervisor then seals it against resizing and reads it
/// through its own descriptor while the candidate's processes are stopped.
class exchange_memory {
 public:
  exchange_memory() = default;
  exchange_memory(const exchange_memory&) = delete;
  exchange_memory& operator=(const exchange_memory&) = delete;
  ~exchange_memory();

  status create();
  int fd() const { return m_fd; }
  /// Checks the ready line's layout against the file's size, takes it, seals the file
  /// (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL).
  status adopt(const exchange_layout& layout);
  const std::vector<exchange_output>& outputs() const { return m_outputs; }
  size_t bytes() const { return m_bytes; }
  /// The outputs as tensors, read with pread from our descriptor.
  status_or<std::vector<tensor>> read() const;
  /// The same into `out`, reusing the buffers of the tensors it holds from an earlier read (no
  /// allocation, zero-fill or page faults per checked sample: 64 MB outputs, issue 36); large
  /// outputs are read in parallel slices.
  status read_into(std::vector<tensor>* out) const;

 private:
  int m_fd = -1;
  size_t m_bytes = 0;
  std::vector<exchange_output> m_outputs;
};

/// `root` and its live descendants, from /proc/<pid>/task/<tid>/children (parents first).
std::vector<pid_t> live_descendants(pid_t root);

/// CPU time (ns) of every process of the tree rooted at `root`, all threads including exited
/// ones (clock_getcpuclockid), plus the children they have reaped (cutime + cstime).
uint64_t tree_cpu_ns(pid_t root);

/// CPU time (ns) of each live thread of the tree (tid → ns, /proc/<pid>/task/<tid>/schedstat).
/// Threads that exited and reaped children are in tree_cpu_ns only.
std::vector<std::pair<pid_t, uint64_t>> thread_cpu_ns(pid_t root);
/// The largest CPU time one live thread gained between two thread_cpu_ns snapshots.
uint64_t busiest_thread_ns(const std::vector<std::pair<pid_t, uint64_t>>& before,
                           const std::vector<std::pair<pid_t, uint64_t>>& after);

/// CPUs online on this machine: a process tree cannot run more threads at once (the most it can
/// spread its CPU time over, kernel/session.cpp's CPU floor of a sample).
int online_cpus();

/// SIGSTOP to the root's whole process group at once (one kill: every thread of every member
/// stops without waiting for a walk of /proc), then to every process of the tree (members that
/// left the group), then waits (up to `timeout_s`) until each is stopped; `stopped` gets the
/// pids to resume. Error when a process would not stop.
status stop_tree(pid_t root, double timeout_s, std::vector<pid_t>* stopped);
/// SIGCONT to each (the root's group included when the root is in `stopped`).
void resume_tree(const std::vector<pid_t>& stopped);

}  // namespace magpie::kernel
