// GPU peak table for rooflines (data/gpu_specs.json) and TraceLens arch JSON files.
//
// Units everywhere: memory bandwidth in GB/s (1e9 B/s), compute in TFLOP/s (1e12 FLOP/s),
// keyed by TraceLens's compute-spec names "<matrix|vector>_<dtype>" (matrix_bf16, vector_fp32,
// matrix_fp8, matrix_fp4, …). A missing key means "unknown": no roofline for that spec.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fs.h"
#include "core/status.h"

namespace magpie::gpu {

/// One set of ceilings, in TraceLens's arch schema.
struct gpu_spec {
  std::string name;
  double mem_bw_gbps = 0;                 ///< 0: unknown
  double memory_gb = 0;
  std::map<std::string, double> tflops;   ///< compute spec → TFLOP/s
  std::string source;                     ///< "achievable", "datasheet", or the arch JSON path
  std::string reference;                  ///< where the numbers come from
  /// Per key, which set it came from ("achievable" / "datasheet") when resolved from the table.
  std::map<std::string, std::string> key_source;

  std::optional<double> peak_tflops(const std::string& compute_spec) const;
};

struct spec_entry {
  std::string name, vendor, reference;
  std::vector<std::string> aliases, exclude;
  double memory_gb = 0;
  gpu_spec datasheet;
  gpu_spec achievable;  ///< partial: only measured keys
};

status_or<std::vector<spec_entry>> load_spec_table(const fs::path& file);
/// data/gpu_specs.json next to the binary: $MAGPIE_DATA_DIR, <exe>/data, <exe>/../data,
/// <exe>/../share/magpie/data (the first that exists); empty when none.
fs::path default_spec_table_path();
status_or<std::vector<spec_entry>> load_default_spec_table();

/// The entry whose alias occurs in `device_name` (case-insensitive, ignoring spaces, '-' and
/// '_') and none of whose exclude strings does; the longest matching alias wins. nullptr if none.
const spec_entry* match_spec(const std::vector<spec_entry>& table, std::string_view device_name);
/// Achievable ceilings where measured (per key), else datasheet; or datasheet only.
gpu_spec resolve_spec(const spec_entry& e, bool use_achievable);
/// A user JSON in TraceLens's arch schema (--gpu-spec FILE).
status_or<gpu_spec> load_arch_json(const fs::path& file);

}  // namespace magpie::gpu
