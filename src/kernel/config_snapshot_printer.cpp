#include "kernel/config_snapshot_printer.h"

#include "core/yaml.h"

namespace magpie::kernel {

json config_snapshot(const eval_request& req, bool compare, uint64_t run_seed) {
  json snap = {{"kernels", json::array()}};
  for (const auto& k : req.kernels) snap["kernels"].push_back(k.to_json());
  if (req.reference) snap["reference"] = req.reference->to_json();
  snap["correctness"] = req.correctness.to_json();
  snap["performance"] = req.performance.to_json();
  snap["performance"]["timing"] = req.timing.to_json();
  if (compare) snap["compare"] = req.compare.to_json();
  snap["run_seed"] = run_seed;
  return snap;
}

status write_config_snapshot(const fs::path& dir, const json& snapshot) {
  return write_file_atomic(dir / "config.yaml", json_to_yaml(snapshot));
}

}  // namespace magpie::kernel
