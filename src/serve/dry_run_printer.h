// `magpie benchmark --dry-run`'s output: the plan of a run as JSON.
#pragma once

#include "core/json.h"
#include "serve/orchestrator.h"

namespace magpie::serve {

/// {server (when magpie launches it; server_plan_json), client {url, endpoint, model, dataset,
/// num_prompts, input_len, output_len, range_ratio, range_style, max_concurrency, request_rate
/// ("inf" when unpaced), burstiness, num_warmups, limits {request_timeout_s, max_event_bytes,
/// max_response_bytes ("auto: <rule>" when derived), keep_generated_text}}, config, run_kind}.
json dry_run_plan_json(const dry_run_plan& p);

}  // namespace magpie::serve
