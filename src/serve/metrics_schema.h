// The JSON Schemas of magpie_throughput_json / magpie_latency_json (benchmark_report.json's
// throughput and latency blocks), generated from the same key tables as the writers
// (metrics_json.cpp). The MCP benchmark_status tool's result takes them.
#pragma once

#include "core/json.h"

namespace magpie::serve {

/// A closed object: every throughput key with its JSON type.
json magpie_throughput_schema();
/// A closed object: one stats object (mean_ms ... count, p<N>_ms) per distribution.
json magpie_latency_schema();

}  // namespace magpie::serve
