#include "core/stats_printer.h"

namespace magpie {

json summary_to_json(const sample_summary& s, double k) {
  json j;
  j["n"] = s.n;
  j["median"] = s.median * k;
  j["mean"] = s.mean * k;
  j["stdev"] = s.stdev * k;
  j["min"] = s.min * k;
  j["max"] = s.max * k;
  j["p25"] = s.p25 * k;
  j["p75"] = s.p75 * k;
  j["iqr"] = s.iqr * k;
  j["p5"] = s.p5 * k;
  j["p95"] = s.p95 * k;
  j["rel_stdev"] = s.rel_stdev;
  return j;
}

}  // namespace magpie
