// The gpu module's results as JSON: `magpie gpu-info --json`, the serving report's
// gpu_assignment, and TraceLens's arch JSON for a GPU spec (report.json "analysis"."gpu_spec").
#pragma once

#include "core/json.h"
#include "gpu/detect.h"
#include "gpu/select.h"
#include "gpu/specs.h"

namespace magpie::gpu {

/// {vendor, architecture, compiler, profiler, driver_version (null when unknown), devices[]}.
json gpu_info_json(const gpu_info& g);
/// {vendor, indices, env, observed[], busy}.
json selection_json(const selection& s);
/// TraceLens arch JSON: {name, mem_bw_gbps, memory_gb, max_achievable_tflops{…}, _reference}.
json gpu_spec_json(const gpu_spec& s);

}  // namespace magpie::gpu
