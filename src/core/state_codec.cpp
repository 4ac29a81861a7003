// The spelling of report states (upstream Magpie's upper-case stage states and task words, our
// lower-case kernel outcomes). Every other file uses the enums of core/states.h.
#include "core/states.h"
#include "core/state_row_codec.h"

#include "core/enum_names.h"

namespace magpie {

namespace {
constexpr std::pair<stage_state, const char*> k_stage_names[] = {
    {stage_state::success, "SUCCESS"}, {stage_state::failed, "FAILED"}, {stage_state::skipped, "SKIPPED"}};
constexpr std::pair<kernel_outcome, const char*> k_outcome_names[] = {
    {kernel_outcome::passed, "passed"},   {kernel_outcome::incorrect, "incorrect"}, {kernel_outcome::failed, "failed"},
    {kernel_outcome::timeout, "timeout"}, {kernel_outcome::skipped, "skipped"}};
constexpr std::pair<correctness_basis, const char*> k_basis_names[] = {
    {correctness_basis::none, "none"},
    {correctness_basis::outputs, "outputs"},
    {correctness_basis::exit_code, "exit_code"},
    {correctness_basis::reference, "reference"}};
constexpr std::pair<verdict_kind, const char*> k_verdict_names[] = {
    {verdict_kind::baseline, "baseline"},   {verdict_kind::faster, "faster"},         {verdict_kind::slower, "slower"},
    {verdict_kind::same, "same"},           {verdict_kind::ambiguous, "ambiguous"}, {verdict_kind::not_ranked, "not_ranked"},
    {verdict_kind::implausible, "implausible"}};
constexpr std::pair<task_status, const char*> k_task_names[] = {
    {task_status::submitted, "SUBMITTED"}, {task_status::pending, "PENDING"}, {task_status::running, "RUNNING"},
    {task_status::succeeded, "SUCCEEDED"}, {task_status::failed, "FAILED"},   {task_status::stopped, "STOPPED"},
    {task_status::unknown, "UNKNOWN"}};
}  // namespace

const char* stage_state_name(stage_state s) { return enum_name(k_stage_names, s, "FAILED"); }
std::optional<stage_state> parse_stage_state(std::string_view s) { return enum_parse(k_stage_names, s); }
const char* kernel_outcome_name(kernel_outcome o) { return enum_name(k_outcome_names, o, "failed"); }
std::optional<kernel_outcome> parse_kernel_outcome(std::string_view s) { return enum_parse(k_outcome_names, s); }
const char* correctness_basis_name(correctness_basis b) { return enum_name(k_basis_names, b, "none"); }
std::optional<correctness_basis> parse_correctness_basis(std::string_view s) { return enum_parse(k_basis_names, s); }
const char* verdict_kind_name(verdict_kind k) { return enum_name(k_verdict_names, k, "not_ranked"); }
std::optional<verdict_kind> parse_verdict_kind(std::string_view word) { return enum_parse(k_verdict_names, word); }
const char* task_status_name(task_status s) { return enum_name(k_task_names, s, "UNKNOWN"); }
std::optional<task_status> parse_task_status(std::string_view s) { return enum_parse(k_task_names, s); }

std::vector<std::string> stage_state_names() { return enum_words(k_stage_names); }
std::vector<std::string> kernel_outcome_names() { return enum_words(k_outcome_names); }
std::vector<std::string> correctness_basis_names() { return enum_words(k_basis_names); }
std::vector<std::string> verdict_kind_names() { return enum_words(k_verdict_names); }
std::vector<std::string> task_status_names(std::initializer_list<task_status> which) {
  std::vector<std::string> out;
  for (task_status s : which) out.emplace_back(task_status_name(s));
  return out;
}

stage_state row_stage_state(const json& row, const char* key, stage_state dflt) {
  auto text = json_as_string(json_value(row, key));
  auto s = text ? parse_stage_state(*text) : std::nullopt;
  return s.value_or(dflt);
}

bool row_correct(const json& row) {
  return row_stage_state(row, "correctness_state", stage_state::failed) == stage_state::success;
}

kernel_outcome row_outcome(const json& row, kernel_outcome dflt) {
  auto text = json_as_string(json_value(row, "outcome"));
  auto o = text ? parse_kernel_outcome(*text) : std::nullopt;
  return o.value_or(dflt);
}

correctness_basis row_correctness_basis(const json& row, correctness_basis dflt) {
  auto text = json_as_string(json_value(row, "correctness_method"));
  auto b = text ? parse_correctness_basis(*text) : std::nullopt;
  return b.value_or(dflt);
}

}  // namespace magpie
