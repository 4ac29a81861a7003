// The codec of the loop report: loop_report.json (the document the loop writes after every
// step) into optimize::loop_report.
#pragma once

#include <string>

#include "core/json.h"
#include "core/status.h"
#include "optimize/loop_report.h"

namespace magpie::optimize {

/// Decodes the loop's document; an unknown outcome, verdict or disposition word is an error
/// naming `where` (the file) and the field.
status_or<loop_report> decode_loop_report(const json& doc, const std::string& where);

}  // namespace magpie::optimize
