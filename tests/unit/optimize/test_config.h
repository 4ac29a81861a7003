// A small optimize_config for the unit tests (the loop example's ops and kernel names).
#pragma once

#include "optimize/config.h"

namespace magpie::optimize {

inline optimize_config test_config() {
  optimize_config c;
  auto op = [](std::string name, std::vector<std::string> kernels, std::vector<std::pair<std::string, std::string>> cands) {
    op_config o;
    o.name = std::move(name);
    o.baseline_id = o.name + "_baseline";
    o.kernels = std::move(kernels);
    o.candidates = std::move(cands);
    return o;
  };
  c.ops = {op("rms_norm", {"_rms_norm_sumsq_kernel", "_rms_norm_apply_kernel"}, {{"rms_norm_onepass", "onepass"}}),
           op("silu_mul", {"_silu_mul_flat_kernel"}, {{"silu_mul_2d", "2d"}}),
           op("rotary", {"_rotary_kernel"}, {{"rotary_fused", "fused"}})};
  c.decision.min_confidence = 0.9;
  return c;
}

}  // namespace magpie::optimize
