// The printers of the loop report (optimize/loop_report.h): the summary table `magpie optimize`
// prints at the end and loop_report.md.
#pragma once

#include <string>

#include "optimize/loop_report.h"

namespace magpie::optimize {

/// The short table printed at the end (and at the top of loop_report.md).
std::string summary_table(const loop_report& report);
std::string report_markdown(const loop_report& report);

}  // namespace magpie::optimize
