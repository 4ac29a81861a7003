// Report state words: each enum has one spelling (state_codec.cpp), rows with unknown or
// mistyped states read as the caller's default.
#include <gtest/gtest.h>

#include "core/state_row_codec.h"
#include "core/states.h"

using namespace magpie;

TEST(states, spellings_round_trip) {
  for (auto s : {stage_state::success, stage_state::failed, stage_state::skipped})
    EXPECT_EQ(parse_stage_state(stage_state_name(s)), s);
  for (auto o : {kernel_outcome::passed, kernel_outcome::incorrect, kernel_outcome::failed, kernel_outcome::timeout,
                 kernel_outcome::skipped})
    EXPECT_EQ(parse_kernel_outcome(kernel_outcome_name(o)), o);
  EXPECT_EQ(stage_state_names(), (std::vector<std::string>{"SUCCESS", "FAILED", "SKIPPED"}));
  EXPECT_EQ(kernel_outcome_names(), (std::vector<std::string>{"passed", "incorrect", "failed", "timeout", "skipped"}));
  EXPECT_EQ(parse_task_status("STOPPED"), task_status::stopped);
  EXPECT_EQ(task_status_names({task_status::pending, task_status::failed}), (std::vector<std::string>{"PENDING", "FAILED"}));
  EXPECT_FALSE(parse_stage_state("success").has_value());  // Magpie's words are upper case
  EXPECT_FALSE(parse_kernel_outcome("PASSED").has_value());
  for (auto b : {correctness_basis::none, correctness_basis::outputs, correctness_basis::exit_code, correctness_basis::reference})
    EXPECT_EQ(parse_correctness_basis(correctness_basis_name(b)), b);
  EXPECT_EQ(correctness_basis_names(), (std::vector<std::string>{"none", "outputs", "exit_code", "reference"}));
  EXPECT_EQ(json(correctness_basis::exit_code), json("exit_code"));
  EXPECT_FALSE(parse_correctness_basis("auto").has_value());  // a policy word, not a basis
}

TEST(states, rows_read_defaults_for_unknown_or_mistyped_states) {
  EXPECT_TRUE(row_correct({{"correctness_state", "SUCCESS"}}));
  EXPECT_FALSE(row_correct({{"correctness_state", "FAILED"}}));
  EXPECT_FALSE(row_correct({{"correctness_state", 1}}));
  EXPECT_FALSE(row_correct(json::array()));
  EXPECT_EQ(row_stage_state({{"compiling_state", "maybe"}}, "compiling_state", stage_state::skipped), stage_state::skipped);
  EXPECT_EQ(row_outcome({{"outcome", "timeout"}}, kernel_outcome::failed), kernel_outcome::timeout);
  EXPECT_EQ(row_outcome(json(nullptr), kernel_outcome::failed), kernel_outcome::failed);
  EXPECT_EQ(row_correctness_basis({{"correctness_method", "outputs"}}, correctness_basis::none), correctness_basis::outputs);
  EXPECT_EQ(row_correctness_basis({{"correctness_method", 3}}, correctness_basis::none), correctness_basis::none);
  EXPECT_EQ(row_correctness_basis(json::object(), correctness_basis::reference), correctness_basis::reference);
}
