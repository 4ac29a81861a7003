// The one decoder of a compare report (compare_report.json, written by kernel::compare_result
// and the local / Slurm / Ray compare): its per-kernel rows and verdicts as typed records. It
// lives in core because the modules that read a compare report back (sched's batch merge,
// optimize's compare gate, mcp) do not all link kernel; kernel maps a record to its
// kernel::verdict (kernel/compare.h). Errors name the file and the field.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/states.h"

namespace magpie {

/// One entry of results.verdicts (kernel::verdict_json's keys, kernel/compare_printer.h). Numbers the report
/// omits or writes as null are nullopt.
/// Optional verdict blocks added with issue 36 (absent from older reports).
struct same_band_record {
  double band = 0, floor = 0, ceiling = 0, aa_sd = 0;
  int aa_processes = 0;
  std::string basis;
};
struct power_record {
  double difference = 0, probability = 0;
  std::string statement;
};

struct verdict_record {
  int index = 0;
  std::string kernel_id;
  verdict_kind verdict = verdict_kind::not_ranked;
  std::optional<double> speedup, ci_low, ci_high;  ///< speedup_vs_baseline and its interval
  std::optional<double> confidence;                ///< of the interval (0.95: a 95% CI)
  int df = 0;                                      ///< interval_df
  std::optional<double> median_ns;
  std::string reason;
  std::string decide;                      ///< `ambiguous`: what would decide it ("" when absent)
  std::optional<same_band_record> same_band;
  std::optional<power_record> power;
};

/// What a reader needs of one results.kernel_results row (a kernel_eval row).
struct compare_row_record {
  std::string kernel_id;  ///< extra.kernel_id, else kernel_id
  kernel_outcome outcome = kernel_outcome::failed;    ///< absent or unknown: failed
  correctness_basis basis = correctness_basis::none;  ///< correctness_method; absent or unknown: none
  std::optional<double> median_ns;                    ///< timing.stats_ns.median
  int64_t samples = 0;                                ///< timing.samples
  std::vector<std::string> errors;                    ///< the first three of errors (non-strings dumped)
};

struct compare_report_record {
  std::vector<compare_row_record> rows;   ///< results.kernel_results, in order
  std::vector<verdict_record> verdicts;   ///< results.verdicts, in order
  std::optional<std::string> reference;   ///< results.reference
};

/// One verdict object: `verdict` is required and must be a known word; the other fields are
/// optional and type-checked.
status_or<verdict_record> decode_verdict(const json_fields& f);

/// A whole report (`where` names its file). A report without results, kernel_results or
/// verdicts decodes to empty lists (a compare that measured nothing); a verdict that does not
/// decode is an error.
status_or<compare_report_record> decode_compare_report(const json& report, const std::string& where);

/// The verdict for `kernel_id` (the last one of that id), or nullptr.
const verdict_record* find_verdict(const compare_report_record& r, const std::string& kernel_id);

}  // namespace magpie
