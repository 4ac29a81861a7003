// Decoder of the CUPTI record channel's JSON records (docs/harness-protocol.md) into
// kernel::cupti_record (kernel/cupti_records.h). Never throws: a missing or mistyped field reads 0.
#pragma once

#include "core/json.h"
#include "kernel/cupti_records.h"

namespace magpie::kernel {

/// k: gpu | api | mark (what: begin, else end) | dropped | hello; any other kind is `other`.
cupti_record decode_cupti_record(const json& j);

}  // namespace magpie::kernel
