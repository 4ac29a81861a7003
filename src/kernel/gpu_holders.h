// Whose is a process that holds a GPU (issue 35, docs/harness-protocol.md "gpu_processes"): the
// NVML snapshot taken while a harness's tree is stopped for a checked sample sees every compute
// process; each is attributed from the process table to the tree being sampled, to another live
// harness's tree, to magpie itself, to a process that left its harness's tree while staying
// magpie's descendant (a double fork re-parents it to magpie, the subreaper), or to nobody of ours.
// Every snapshot counts for every live harness (harness_registry): a process is charged with
// each distinct GPU holder seen at any snapshot of its run, not only at its own.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpu/nvml_procs.h"

namespace magpie::kernel {

/// One row of the process table (core/proc_stat.h): fields the kernel sets and the candidate
/// cannot forge (parent, group and session change only by fork, setpgid and setsid; the start
/// time never).
struct proc_row {
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t sid = 0;
  uint64_t start_time = 0;  ///< clock ticks since boot
};

/// The process table as it is now. `row`: nullopt when there is no such process. `tree_chain`:
/// the MAGPIE_PROCESS_TREE tags in its environment (core/process_tree.h) — a *claim*: the
/// process can rewrite its own environment. process_table_live() reads /proc.
struct process_table {
  std::function<std::optional<proc_row>(pid_t)> row;
  std::function<std::vector<std::string>(pid_t)> tree_chain;
};
process_table process_table_live();

/// A timing harness of this magpie process: its root process (session leader), when it started,
/// its tree tag.
struct harness_root {
  pid_t pid = 0;
  uint64_t start_time = 0;  ///< clock ticks since boot; 0: unknown (starts before everything)
  std::string tag;          ///< child_process::tree_tag(): its descendants inherit it
  bool finished = false;    ///< it has exited: its descendants may live on, its pid is not its own
};
/// `pid`'s start time from /proc (0 when gone).
harness_root harness_root_of(pid_t pid, const std::string& tag);

enum class holder_kind {
  sampled_tree,   ///< a process of the tree being sampled
  other_harness,  ///< inside another live harness's tree
  escaped,        ///< magpie's descendant outside every live harness tree
  supervisor,     ///< magpie itself
  foreign,        ///< not magpie's descendant (gpu_processes warns once after the stage)
};

/// Why an escaped holder counts against the harness it does (strongest first).
enum class blame_basis {
  none,        ///< not escaped, or counted against nobody at this snapshot (see attribute_gpu_holders)
  session,     ///< its session or process group is the harness's (kernel-set: conclusive)
  tree_tag,    ///< its environment's tag names the harness (a claim; see attribute_gpu_holders)
  start_time,  ///< the only live harness that started before it
  sampled,     ///< none of the above: the harness being sampled, which started before it
};

struct gpu_holder {
  gpu::gpu_process process;
  uint64_t start_time = 0;  ///< with process.pid, the identity of the holder over the run
  holder_kind kind = holder_kind::foreign;
  /// sampled_tree, other_harness, escaped: the harness root it counts against (0: none).
  pid_t harness = 0;
  blame_basis basis = blame_basis::none;
  /// Escaped, charged by its tree tag to another harness: the sampled harness too when it started
  /// before the holder and could have spawned it (a tag never clears a harness; 0: none).
  pid_t also = 0;
};

/// Attributes every holder of a snapshot. `self`: magpie's pid; `sampled_root` and `sampled_tree`:
/// the stopped harness (its root and the processes stop_tree found); `roots`: every harness of
/// this magpie process, live (the sampled one included) and finished.
///
/// An escaped holder (magpie's descendant outside every live tree: it left its harness's tree by a
/// double fork) counts against, in this order: the live harness that leads its session or process
/// group; else a live one named by its tree tag that started before it (a process cannot descend
/// from one that started after it); else the only harness, live or finished, that started before
/// it, if that one lives; else the
/// sampled harness if that started before it, or if none did (a helper of a finished harness:
/// it holds the GPU while this timing runs). Else — several started before it, the sampled one
/// did not — nobody at this snapshot: it is counted when one of them is sampled.
///
/// The tag is the candidate's to rewrite: it can move blame *to* the tree it names, never off a
/// harness that could have spawned the holder. A tag naming another harness than the sampled one
/// charges both (`also`) when the sampled one started before the holder: an attacker that copied
/// an honest harness's tag is still charged at its own snapshots, and an honest harness sampled
/// beside an escaped helper is spared only when it started after it (docs/harness-protocol.md,
/// "What remains").
std::vector<gpu_holder> attribute_gpu_holders(const std::vector<gpu::gpu_process>& holders, pid_t self,
                                              pid_t sampled_root, const std::vector<pid_t>& sampled_tree,
                                              const std::vector<harness_root>& roots, const process_table& table);

/// What one harness process is charged with over its run: the distinct processes (pid and start
/// time) of its tree and the escaped ones attributed to it, seen holding a GPU at any snapshot of
/// any harness while it lived. One process of its tree may hold a GPU (the harness); no other.
struct holder_tally {
  std::vector<gpu_holder> tree;
  std::vector<gpu_holder> escaped;
  size_t extra() const { return (tree.empty() ? 0 : tree.size() - 1) + escaped.size(); }
  /// "pid (comm), ..." of every holder beyond none: the tree's, then the escaped ones.
  std::string describe() const;
};

/// The live timing harnesses of this magpie process and their tallies (thread-safe).
class harness_registry {
 public:
  void add(const harness_root& root);
  /// Marks the harness finished and forgets its tally.
  void remove(pid_t root);
  /// Every harness added so far, live and finished (finished ones flagged).
  std::vector<harness_root> known() const;
  /// Adds a snapshot's attributed holders to the tallies of the live harnesses they count against.
  void tally(const std::vector<gpu_holder>& holders);
  holder_tally tally_of(pid_t root) const;

 private:
  void record(const gpu_holder& h, pid_t root);  ///< m_mu held
  mutable std::mutex m_mu;
  std::vector<harness_root> m_roots;
  std::map<pid_t, holder_tally> m_tallies;
};

/// This magpie process's registry (timing_session adds each harness from spawn to finish).
harness_registry& harness_roots();

}  // namespace magpie::kernel
