#include "sched/job_state.h"

#include <utility>

#include "core/strings.h"

namespace magpie::sched {

namespace {

struct state_name {
  job_state state;
  const char* name;
  const char* code;  ///< squeue %t compact code
};

constexpr state_name k_states[] = {
    {job_state::pending, "PENDING", "PD"},       {job_state::configuring, "CONFIGURING", "CF"},
    {job_state::running, "RUNNING", "R"},        {job_state::suspended, "SUSPENDED", "S"},
    {job_state::completing, "COMPLETING", "CG"}, {job_state::requeued, "REQUEUED", "RQ"},
    {job_state::completed, "COMPLETED", "CD"},   {job_state::failed, "FAILED", "F"},
    {job_state::timeout, "TIMEOUT", "TO"},       {job_state::cancelled, "CANCELLED", "CA"},
    {job_state::node_fail, "NODE_FAIL", "NF"},   {job_state::out_of_memory, "OUT_OF_MEMORY", "OOM"},
    {job_state::preempted, "PREEMPTED", "PR"},   {job_state::boot_fail, "BOOT_FAIL", "BF"},
    {job_state::deadline, "DEADLINE", "DL"},     {job_state::revoked, "REVOKED", "RV"},
    {job_state::special_exit, "SPECIAL_EXIT", "SE"},
};

}  // namespace

job_state parse_job_state(std::string_view text) {
  std::string t(trim(text));
  for (auto& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // "CANCELLED by 1000", "CANCELLED+" (sacct's truncation mark): the first word decides.
  size_t cut = t.find_first_of(" +");
  if (cut != std::string::npos) t.resize(cut);
  if (t.empty()) return job_state::unknown;
  for (const auto& s : k_states)
    if (t == s.name || t == s.code) return s.state;
  if (t == "REQUEUE_FED" || t == "REQUEUE_HOLD" || t == "RESV_DEL_HOLD") return job_state::pending;
  if (t == "RESIZING" || t == "SIGNALING" || t == "STAGE_OUT" || t == "STOPPED") return job_state::running;
  return job_state::unknown;
}

const char* job_state_name(job_state s) {
  if (s == job_state::unknown) return "UNKNOWN";
  if (s == job_state::not_submitted) return "NOT_SUBMITTED";
  for (const auto& x : k_states)
    if (x.state == s) return x.name;
  return "UNKNOWN";
}

std::vector<std::string> job_state_names() {
  std::vector<std::string> out;
  for (int i = 0; i <= static_cast<int>(job_state::special_exit); ++i) out.push_back(job_state_name(static_cast<job_state>(i)));
  return out;
}

bool is_terminal(job_state s) {
  switch (s) {
    case job_state::completed:
    case job_state::failed:
    case job_state::timeout:
    case job_state::cancelled:
    case job_state::node_fail:
    case job_state::out_of_memory:
    case job_state::preempted:
    case job_state::boot_fail:
    case job_state::deadline:
    case job_state::revoked:
    case job_state::special_exit:
      return true;
    default:
      return false;
  }
}

}  // namespace magpie::sched
