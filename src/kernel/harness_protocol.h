// The timing harness's `ready` line (docs/harness-protocol.md, "Timing mode"): the protocol's
// edge, decoded once into what the supervisor uses (protocol, timer word, device, exchange layout)
// and the echo the report prints (timing.harness).
#pragma once

#include <string>

#include "kernel/exchange.h"

namespace magpie::kernel {

struct ready_line {
  double protocol = 1;            ///< `protocol` (1 when absent)
  std::string harness, device;    ///< `harness`, `device` ("" when absent)
  std::string timer = "harness";  ///< `timer` as sent (parse_harness_timer judges it; "harness" when absent)
  exchange_layout exchange;       ///< `exchange`, checked by exchange_memory::adopt
  /// The line's object without `exchange` (the layout is not the report's), compact JSON: the
  /// report's timing.harness. Harnesses may add keys; they are kept here, in their order.
  std::string echo = "{}";
};

/// Decodes the text after "ready ": a line that is not a JSON object reads as `{}` (every field
/// its default; the exchange then unannounced).
ready_line parse_ready_line(const std::string& text);

}  // namespace magpie::kernel
