// The decision types of optimize/decide.h as the loop report's JSON objects (loop_report.json:
// stop, ranking rows, the compare gate's `kernel` object, fingerprints, metric changes).
#pragma once

#include "core/json.h"
#include "optimize/decide.h"

namespace magpie::optimize {

/// {code, category, message, details}.
json stop_reason_json(const stop_reason& s);
json ranked_kernel_json(const ranked_kernel& k);
json candidate_result_json(const candidate_result& c);
/// The report's `kernel` object.
json gate_result_json(const gate_result& g);
/// {total, parts{workload, requests, model}}.
json fingerprint_json(const fingerprint& f);
json metric_change_json(const metric_change& c);
json external_verdict_json(const external_verdict& v);
/// {op_share_of_gpu_time_pct, kernel_speedup(_ci), gpu_time_change_pct(_ci),
///  throughput_change_pct_if_gpu_bound(_ci), formula}
json kernel_prediction_json(const kernel_prediction& p);

}  // namespace magpie::optimize
