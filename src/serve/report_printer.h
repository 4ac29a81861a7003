// The printers of a serving benchmark's report (serve/report.h): benchmark_report.json and
// summary.txt. Measuring never formats; these are the only writers of both.
#pragma once

#include <string>

#include "core/json.h"
#include "serve/report.h"

namespace magpie::serve {

/// benchmark_report.json (upstream Magpie's BenchmarkResult keys plus ours).
json benchmark_report_json(const benchmark_report& r);
/// upstream Magpie's get_summary() text (60 '=' lines, throughput, latency, bottlenecks, gap
/// analysis, errors, workspace, execution time).
std::string summary_text(const benchmark_report& r);

}  // namespace magpie::serve
