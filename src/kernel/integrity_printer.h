// JSON of a kernel's integrity block (kernel/integrity.h) as reports print it.
#pragma once

#include "core/json.h"
#include "kernel/integrity.h"

namespace magpie::kernel {

inline void to_json(json& j, check_status s) { j = check_status_name(s); }

/// {rejected, reason (null: none), checks: [{name, status, detail, data (when not empty)}]}
json integrity_report_json(const integrity_report& r);
/// A check's data: records as objects (in their order), lists as arrays, null as null.
json check_value_json(const check_value& v);

}  // namespace magpie::kernel
