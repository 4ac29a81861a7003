// Input health of a trace: what could not be read or was dropped, said with counts, and
// whether the result is usable. Every trace command prints these problems on stderr and maps
// the status to its exit code (docs/trace-analysis.md, "Bad input"):
//   ok        the whole document was read and every analysed event was well-formed;
//   partial   something was lost (reading stopped early, events dropped or malformed): the
//             outputs are written and marked partial; commands exit 3 unless --allow-partial;
//   unusable  nothing to analyse (unreadable, empty, not a trace, no events, or no GPU events
//             where the command needs them): commands exit 1 and write nothing.
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "trace/model.h"
#include "trace/reader.h"

namespace magpie::trace {

enum class input_status { ok, partial, unusable };

struct input_health {
  input_status status = input_status::ok;
  std::vector<std::string> problems;  ///< one sentence each, with counts

  /// Adds a problem; the status becomes the worse of the two.
  void add(input_status s, std::string problem);
  bool ok() const { return status == input_status::ok; }
  bool usable() const { return status != input_status::unusable; }
  const char* status_name() const;  ///< "ok" | "partial" | "unusable"
  /// {"status": …, "problems": […]}
  json to_json() const;
};

/// Problems seen by the reader alone: an incomplete document, non-object elements, mistyped
/// or negative ts / dur, an empty file, no traceEvents, no events.
input_health check_read(const read_stats& st);
/// check_read plus what the model dropped (events without ts, GPU events without dur). With
/// `need_gpu`, a trace without kernel / memcpy / memset events is unusable.
input_health check_model(const trace_model& m, bool need_gpu);

}  // namespace magpie::trace
