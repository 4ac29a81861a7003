// JSON of the timing stage's results as reports print them (kernel/timing.h): a kernel entry's
// `timing`, its parts, and the compare report's `timing_order`.
#pragma once

#include "core/json.h"
#include "kernel/timing.h"

namespace magpie::kernel {

/// A kernel entry's `timing` (eval_schema's timing_result_schema); `p`: the policy it ran under.
json timing_result_json(const timing_result& r, const timing_policy& p);
json process_result_json(const process_result& pr);
json check_outcome_json(const check_outcome& c);
json sampling_record_json(const sampling_record& s);
json channel_findings_json(const channel_findings& f);
json supervisor_cost_json(const supervisor_cost& c);
/// The ready line as the report echoes it (timing.harness; null: no process got ready).
json ready_line_json(const std::optional<ready_line>& r);
/// A compare report's `timing_order` (eval_schema's timing_order_schema).
json timing_order_json(const timing_order& o);

}  // namespace magpie::kernel
