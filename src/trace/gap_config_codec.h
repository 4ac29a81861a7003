// The codec of trace::gap_config: upstream Magpie's to_dict() (the report's
// "gap_analysis.config") and from_dict (a `gap_analysis:` mapping of a benchmark config).
#pragma once

#include "core/json.h"
#include "core/status.h"
#include "trace/api.h"

namespace magpie::trace {

/// upstream Magpie's to_dict() keys in its order.
json gap_config_json(const gap_config& c);
/// From a `gap_analysis:` mapping (upstream from_dict: absent keys keep defaults); unknown
/// keys and values of the wrong type are errors naming the field; the result is validated.
status_or<gap_config> decode_gap_config(const json& j);

}  // namespace magpie::trace
