#include "kernel/gpu_holders.h"

#include <algorithm>
#include <tuple>

#include "core/proc_stat.h"
#include "core/process_tree.h"

namespace magpie::kernel {

process_table process_table_live() {
  process_table t;
  t.row = [](pid_t pid) -> std::optional<proc_row> {
    const auto st = proc_stat_of(pid);
    if (!st) return std::nullopt;
    return proc_row{st->ppid, st->pgrp, st->session, st->start_time};
  };
  t.tree_chain = [](pid_t pid) { return process_tree_chain(pid); };
  return t;
}

harness_root harness_root_of(pid_t pid, const std::string& tag) {
  const auto st = proc_stat_of(pid);
  return {pid, st ? st->start_time : 0, tag, false};
}

namespace {

bool contains_pid(const std::vector<pid_t>& v, pid_t p) { return std::find(v.begin(), v.end(), p) != v.end(); }

const harness_root* live_root(const std::vector<harness_root>& roots, pid_t pid) {
  for (const auto& r : roots)
    if (!r.finished && r.pid == pid) return &r;
  return nullptr;
}

/// The harness an escaped holder counts against, why, and (tag claims only) the sampled harness
/// too (attribute_gpu_holders' rules).
struct blame {
  pid_t harness = 0;
  blame_basis basis = blame_basis::none;
  pid_t also = 0;
};

blame blame_escaped(pid_t pid, pid_t sampled_root, const std::vector<harness_root>& roots, const process_table& table) {
  const auto row = table.row(pid);
  if (!row) return {sampled_root, blame_basis::sampled};  // gone since the snapshot
  if (live_root(roots, row->sid)) return {row->sid, blame_basis::session};
  if (live_root(roots, row->pgrp)) return {row->pgrp, blame_basis::session};
  std::vector<const harness_root*> before, live_before;  // started no later than the holder
  for (const auto& r : roots)
    if (r.start_time <= row->start_time) {
      before.push_back(&r);
      if (!r.finished) live_before.push_back(&r);
    }
  const bool sampled_before =
      std::any_of(live_before.begin(), live_before.end(), [&](const harness_root* r) { return r->pid == sampled_root; });
  // The claim: the live harnesses its tag chain names, innermost last; the sampled one first.
  const auto chain = table.tree_chain ? table.tree_chain(pid) : std::vector<std::string>();
  const harness_root* claimed = nullptr;
  for (const auto& tag : chain)
    for (const auto* r : live_before)
      if (!tag.empty() && r->tag == tag && (claimed == nullptr || claimed->pid != sampled_root)) claimed = r;
  if (claimed) return {claimed->pid, blame_basis::tree_tag, claimed->pid != sampled_root && sampled_before ? sampled_root : 0};
  if (before.size() == 1 && !before[0]->finished) return {before[0]->pid, blame_basis::start_time};
  if (sampled_before || live_before.empty()) return {sampled_root, blame_basis::sampled};
  return {};
}

}  // namespace

std::vector<gpu_holder> attribute_gpu_holders(const std::vector<gpu::gpu_process>& holders, pid_t self,
                                              pid_t sampled_root, const std::vector<pid_t>& sampled_tree,
                                              const std::vector<harness_root>& roots, const process_table& table) {
  std::vector<gpu_holder> out;
  for (const auto& p : holders) {
    if (std::any_of(out.begin(), out.end(), [&](const gpu_holder& h) { return h.process.pid == p.pid; })) continue;
    gpu_holder h;
    h.process = p;
    if (const auto row = table.row(p.pid)) h.start_time = row->start_time;
    if (p.pid == self) {
      h.kind = holder_kind::supervisor;
    } else if (contains_pid(sampled_tree, p.pid)) {
      h.kind = holder_kind::sampled_tree;
      h.harness = sampled_root;
    } else {
      // Up the parent chain: the first live harness root met owns it; reaching magpie first, it
      // left every harness tree (re-parented to the subreaper).
      pid_t at = p.pid;
      for (int depth = 0; at > 1 && depth < 64; ++depth) {
        if (at == self) {
          h.kind = holder_kind::escaped;
          break;
        }
        if (live_root(roots, at)) {
          h.kind = at == sampled_root ? holder_kind::sampled_tree : holder_kind::other_harness;
          h.harness = at;
          break;
        }
        const auto row = table.row(at);
        if (!row) break;
        at = row->ppid;
      }
      if (h.kind == holder_kind::escaped) {
        const blame b = blame_escaped(p.pid, sampled_root, roots, table);
        h.harness = b.harness;
        h.basis = b.basis;
        h.also = b.also;
      }
    }
    out.push_back(h);
  }
  return out;
}

std::string holder_tally::describe() const {
  static const char* const why[] = {"", "its session", "its tree tag", "its start time", "sampled while it held a GPU"};
  std::string s;
  for (const auto* list : {&tree, &escaped})
    for (const auto& h : *list) {
      s += (s.empty() ? "" : ", ") + std::to_string(h.process.pid) + " (" + h.process.name;
      if (list == &escaped) s += std::string(", outside the harness's tree; by ") + why[static_cast<int>(h.basis)];
      s += ")";
    }
  return s;
}

void harness_registry::add(const harness_root& root) {
  std::lock_guard<std::mutex> lock(m_mu);
  m_roots.erase(std::remove_if(m_roots.begin(), m_roots.end(), [&](const harness_root& r) { return r.pid == root.pid; }),
                m_roots.end());  // a pid used again: the earlier harness is long gone
  m_roots.push_back(root);
  m_tallies[root.pid] = holder_tally{};
  // A long-lived magpie (the MCP server) starts harnesses without end: keep the latest finished
  // ones, which are all a holder started during this timing can descend from.
  constexpr size_t k_keep = 4096;
  if (m_roots.size() > k_keep) m_roots.erase(m_roots.begin(), m_roots.begin() + static_cast<long>(m_roots.size() - k_keep));
}

void harness_registry::remove(pid_t root) {
  std::lock_guard<std::mutex> lock(m_mu);
  for (auto& r : m_roots)
    if (r.pid == root) r.finished = true;
  m_tallies.erase(root);
}

std::vector<harness_root> harness_registry::known() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_roots;
}

void harness_registry::tally(const std::vector<gpu_holder>& holders) {
  std::lock_guard<std::mutex> lock(m_mu);
  for (const auto& h : holders) {
    record(h, h.harness);
    if (h.also != 0) {
      gpu_holder as_sampled = h;
      as_sampled.basis = blame_basis::sampled;
      record(as_sampled, h.also);
    }
  }
}

void harness_registry::record(const gpu_holder& h, pid_t root) {
  auto it = m_tallies.find(root);
  if (root == 0 || it == m_tallies.end()) return;
  std::vector<gpu_holder>* list = h.kind == holder_kind::escaped ? &it->second.escaped
                                  : h.kind == holder_kind::sampled_tree || h.kind == holder_kind::other_harness
                                      ? &it->second.tree
                                      : nullptr;
  if (list == nullptr) return;
  const bool seen = std::any_of(list->begin(), list->end(), [&](const gpu_holder& o) {
    return o.process.pid == h.process.pid && o.start_time == h.start_time;
  });
  if (!seen) list->push_back(h);
}

holder_tally harness_registry::tally_of(pid_t root) const {
  std::lock_guard<std::mutex> lock(m_mu);
  auto it = m_tallies.find(root);
  return it == m_tallies.end() ? holder_tally{} : it->second;
}

harness_registry& harness_roots() {
  static harness_registry r;
  return r;
}

}  // namespace magpie::kernel
