// eval_request ↔ JSON, so that a batch job on another node evaluates exactly the request the
// submitting magpie built (kernels, reference, seeds, every policy). Every field of
// kernel_spec and of the policies is written; the round trip is unit-tested.
#pragma once

#include "core/json.h"
#include "kernel/spec.h"
#include "sched/options.h"

namespace magpie::sched {

json kernel_spec_to_json(const kernel::kernel_spec& k);
status_or<kernel::kernel_spec> kernel_spec_from_json(const json& j);

/// The request plus the scheduler options it was submitted with (key "scheduler", kept for the
/// merged report; jobs ignore it).
json request_to_json(const kernel::eval_request& req, const scheduler_options& so);
/// Errors name the missing or mistyped key.
status_or<kernel::eval_request> request_from_json(const json& j);

}  // namespace magpie::sched
