#include "trace/gap_printer.h"

#include "trace/analysis_printer.h"
#include "trace/gap_config_codec.h"
#include "trace/health_printer.h"

namespace magpie::trace {

json gap_result_json(const gap_result& r) {
  json j;
  j["config"] = gap_config_json(r.cfg);
  j["total_duration_us"] = r.total_us;
  j["num_ranks"] = r.ranks.size();
  json top = json::array();
  for (const auto& k : r.merged) {
    top.push_back({{"name", k.name},
                   {"calls", k.calls},
                   {"self_cuda_total_us", k.total_us},
                   {"avg_time_us", k.avg_us()},
                   {"pct_total", r.total_us > 0 ? k.total_us / r.total_us * 100.0 : 0.0},
                   {"input_shapes", k.unique_shapes()}});
  }
  j["top_kernels"] = top;
  json clamped = json::array();
  for (const auto& p : r.clamped_traces) clamped.push_back(p.string());
  j["clamped_trace_paths"] = clamped;
  j["errors"] = r.errors;
  json ranks = json::array();
  for (const auto& rr : r.ranks) {
    ranks.push_back({{"rank", rr.rank},
                     {"trace_file", rr.trace_file.string()},
                     {"total_duration_us", rr.total_us},
                     {"events_in_window", rr.events_in_window},
                     {"events_counted", rr.events_after_filter},
                     {"events_without_dur", rr.missing_dur},
                     {"input", input_health_json(rr.health)},
                     {"read", read_stats_json(rr.stats)}});
  }
  j["ranks"] = ranks;
  j["warnings"] = r.warnings;
  j["input"] = input_health_json(r.health);
  j["discovery"] = r.discovery_summary;
  return j;
}

json gap_block_json(const gap_result& r, const std::optional<fs::path>& csv_path, const fs::path& output_dir) {
  json block = gap_result_json(r);
  block["csv_path"] = csv_path ? json(csv_path->string()) : json(nullptr);
  block["output_dir"] = output_dir.string();
  return block;
}

json gap_block_json(const gap_outputs& g) { return gap_block_json(g.result, g.csv_path, g.output_dir); }

}  // namespace magpie::trace
