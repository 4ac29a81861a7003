// The one codec of the loop report: optimize::loop_report ⇄ loop_report.json. The loop writes
// the report through loop_report_json after every step; resume (and anything that reads a
// finished report) decodes it with decode_loop_report. decode → encode reproduces a report the
// loop wrote byte for byte (key order included: the order the loop fills the blocks in, kept
// steps' blocks first on a resumed report).
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "optimize/loop_report.h"

namespace magpie::optimize {

json loop_report_json(const loop_report& report);

/// Decodes loop_report.json. Every block is optional (a report is written after every step),
/// but a block that is there must be complete: an unknown or missing field, a value of the
/// wrong type or an unknown state word is an error naming `where` (the file) and the field.
status_or<loop_report> decode_loop_report(const json& doc, const std::string& where);

/// The report keys each step fills (kept from the earlier report when resuming).
const std::vector<std::string>& step_keys(const std::string& step);

}  // namespace magpie::optimize
