// The input-health table printed: one sentence per problem (with its count, as the reports and
// stderr show it) and the reports' {"status", "problems"} block (schema: report_schema.h,
// health_schema).
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "trace/health.h"

namespace magpie::trace {

const char* input_status_name(input_status s);  ///< "ok" | "partial" | "unusable"
/// The problem as a sentence with its count, prefixed by "<scope>: " when it has a scope.
std::string problem_text(const read_problem& p);
std::vector<std::string> problem_texts(const input_health& h);
/// {"status": …, "problems": [sentence, …]}
json input_health_json(const input_health& h);

}  // namespace magpie::trace
