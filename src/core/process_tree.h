// One process-tree rule for every magpie process (CLI and MCP server alike): magpie is the
// subreaper of what it starts (PR_SET_CHILD_SUBREAPER), so a descendant whose parent exits, one
// that called setsid included, is re-parented to magpie instead of init and can still be found
// and ended. Every child started through child_process carries the tag chain MAGPIE_PROCESS_TREE
// (the parent's chain, ':', a tag of its own) in its environment; descendants inherit it, so a
// re-parented orphan is attributed to the run it came from.
//
// A tree is ended as a whole on timeouts, cancellation and Ctrl-C: SIGTERM to every member and
// to its process group, SIGKILL after a grace period to what is left, zombies reaped.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace magpie {

/// Makes this process the subreaper of its descendants. Idempotent; call early in main.
status become_subreaper();
/// True once become_subreaper() succeeded in this process.
bool is_subreaper();

/// The value a child's MAGPIE_PROCESS_TREE gets: ours (if any) + ":" + `tag`.
std::string child_tree_chain(const std::string& tag);
/// A fresh tag for a child of this process ("<our pid>.<counter>").
std::string new_tree_tag();

/// The components of `pid`'s MAGPIE_PROCESS_TREE chain as /proc/<pid>/environ shows it now
/// (every MAGPIE_PROCESS_TREE entry's; empty: none, or unreadable). That is the environment the process was started with *as it is
/// in its own memory*: a process can overwrite it (or exec with another), so a chain is its claim,
/// true for processes that leave their environment alone.
std::vector<std::string> process_tree_chain(pid_t pid);

/// `root` and every descendant of it (from /proc), parents before children.
std::vector<pid_t> process_tree(pid_t root);

/// The members of the run tagged `tag`: process_tree(root) (root <= 0: none) plus every
/// descendant of this process whose environment's MAGPIE_PROCESS_TREE chain holds `tag`
/// (orphans re-parented to us). Processes kept with keep_on_exit() and their trees are left out.
std::vector<pid_t> tree_members(pid_t root, const std::string& tag);

/// Ends the run's tree (tree_members): SIGTERM to each member and its process group (never ours),
/// then, after at most `grace_s` (earlier once all are gone), SIGKILL to what is left and to
/// members that appeared meanwhile; reaps members that are our children (except `root`, whose
/// status belongs to its owner). Returns how many processes were signalled.
size_t end_process_tree(pid_t root, const std::string& tag, double grace_s);

/// Ends every descendant of this process except kept ones: the Ctrl-C path. Async-signal-safe
/// (raw /proc reads into static buffers, no allocation): the termination handler calls it.
void end_all_descendants_signal_safe(double grace_s);

/// Writes v in decimal to out (at least 20 bytes), no terminator; returns the digit count.
/// Async-signal-safe (no allocation, no locale): for messages written from signal handlers.
size_t format_decimal_signal_safe(char* out, unsigned long v);

/// A process deliberately left running after magpie exits (a persistent inference server,
/// docs/serving.md): it and its tree are never ended by the sweeps above.
void keep_on_exit(pid_t pid);

/// Registers a direct child started by spawn_in_new_session (its owner reaps it), so that
/// reap_orphans() leaves its exit status alone; forget_direct_child() when its owner is done.
void note_direct_child(pid_t pid);
void forget_direct_child(pid_t pid);
/// Reaps zombie children that are re-parented orphans (not direct children of ours).
void reap_orphans();

}  // namespace magpie
