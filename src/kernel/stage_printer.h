// JSON of the kernel pipeline's stage values as reports print them: a stage's result
// (kernel/prepare.h), the correctness verdict (kernel/correctness.h), the
// compare workers (kernel/workers.h).
#pragma once

#include "core/json.h"
#include "kernel/correctness.h"
#include "kernel/prepare.h"
#include "kernel/workers.h"

namespace magpie::kernel {

/// {success, errors, ...detail}; null for a skipped stage with nothing to say.
json stage_result_json(const stage_result& s);
json tensor_diff_json(const tensor_diff& d);
json trial_verdict_json(const trial_verdict& t);
json correctness_verdict_json(const correctness_verdict& v);
json worker_plan_json(const worker_plan& w);

}  // namespace magpie::kernel
