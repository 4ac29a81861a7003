// The states of a kernel_eval row (a report's results entry, read back from a file another
// process wrote) decoded into the enums of core/states.h.
#pragma once

#include "core/json.h"
#include "core/states.h"

namespace magpie {

/// The state in `row[key]` of a kernel_eval row (a report's results entry); `dflt` when the
/// key is absent or holds no known state.
stage_state row_stage_state(const json& row, const char* key, stage_state dflt);
/// True when the row's correctness_state is SUCCESS.
bool row_correct(const json& row);
kernel_outcome row_outcome(const json& row, kernel_outcome dflt);
/// The row's correctness_method; `dflt` when absent or not a known word.
correctness_basis row_correctness_basis(const json& row, correctness_basis dflt);

}  // namespace magpie
