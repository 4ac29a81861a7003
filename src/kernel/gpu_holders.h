// Whose is a process that holds a GPU (issue 35, docs/harness-protocol.md "gpu_processes"): the
// NVML snapshot taken while a harness's tree is stopped for a checked sample sees every compute
// process; each is attributed from the process table to the tree being sampled, to another live
// harness's tree, to magpie itself, to a process that left its harness's tree while staying
// magpie's descendant (a double fork re-parents it to magpie, the subreaper), or to nobody of ours.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpu/nvml_procs.h"

namespace magpie::kernel {

/// One row of the process table: parent and session (/proc/<pid>/stat fields 4 and 6).
struct proc_row {
  pid_t ppid = 0;
  pid_t sid = 0;
};
/// The process table as it is now (nullopt: no such process). proc_lookup_live() reads /proc.
using proc_lookup = std::function<std::optional<proc_row>(pid_t)>;
proc_lookup proc_lookup_live();

enum class holder_kind {
  sampled_tree,   ///< a process of the tree being sampled
  other_harness,  ///< inside another live harness's tree (its own snapshots count it)
  escaped,        ///< magpie's descendant outside every live harness tree
  supervisor,     ///< magpie itself
  foreign,        ///< not magpie's descendant (gpu_processes warns once after the stage)
};

struct gpu_holder {
  gpu::gpu_process process;
  holder_kind kind = holder_kind::foreign;
  /// sampled_tree, other_harness, escaped: the harness root it counts against. An escaped process
  /// counts against the harness whose session it is still in (harness roots lead their session;
  /// a double fork keeps it), else against the one being sampled: its timing is running.
  pid_t harness = 0;
};

/// Attributes every holder of a snapshot. `self`: magpie's pid; `sampled_root` and `sampled_tree`:
/// the stopped harness (its root and the processes stop_tree found); `live_roots`: the roots of every
/// live harness process (the sampled one included).
std::vector<gpu_holder> attribute_gpu_holders(const std::vector<gpu::gpu_process>& holders, pid_t self,
                                              pid_t sampled_root, const std::vector<pid_t>& sampled_tree,
                                              const std::vector<pid_t>& live_roots, const proc_lookup& lookup);

/// The roots of every live timing harness of this magpie process (timing_session registers each
/// from spawn to finish); thread-safe.
void register_harness_root(pid_t root);
void unregister_harness_root(pid_t root);
std::vector<pid_t> live_harness_roots();

}  // namespace magpie::kernel
