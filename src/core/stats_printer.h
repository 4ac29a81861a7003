// JSON of the descriptive statistics of core/stats.h (the stats blocks of timing reports).
#pragma once

#include "core/json.h"
#include "core/stats.h"

namespace magpie {

/// Keys: n, median, mean, stdev, min, max, p25, p75, iqr, p5, p95, rel_stdev; each
/// value scaled by `scale` (e.g. 1e-3 to go from ns to us) except n and rel_stdev.
json summary_to_json(const sample_summary& s, double scale = 1.0);

}  // namespace magpie
