// Parts of report.html (trace/report_html.cpp) about time: the per-stream timeline, the idle
// gaps of the GPU and number formats shared by the page.
#pragma once

#include <string>
#include <string_view>

#include "trace/model.h"

namespace magpie::trace {

/// HTML-escaped text (&, <, >, quotes).
std::string html_escape(std::string_view s);
/// A number with an SI prefix and 3 significant digits: si_format(2.05e-6 * 1e9, "FLOP") is
/// "2.05 kFLOP"; "–" when not finite; 0 is "0 <unit>".
std::string si_format(double v, const char* unit);
/// 10^e as an axis label: "0.01" ... "100", then SI: "1k", "10k", "1M", ... ("1m" ... below 0.001).
std::string power10_label(int e);
/// A duration in ns as "12.3 µs" / "4.56 ms" / "1.23 s".
std::string si_duration_ns(double ns);
/// At most `max` code points, the middle elided ("head…tail"), so names that differ only in
/// their template arguments stay apart.
std::string elide_middle(const std::string& s, size_t max);

/// Full-width SVG: one lane per (device, stream) over the trace's GPU span with a time axis,
/// busy time drawn per pixel column, and the largest idle gaps of the whole GPU marked (hover:
/// length, start, the kernels before and after).
std::string timeline_lanes_html(const trace_model& m);
/// "Gap analysis": the GPU's idle gaps (no kernel, memcpy or memset on any stream) as a
/// histogram by length (count and total idle time per decade) and the `rows` largest gaps with
/// where they are (offset from the first GPU event) and what ran before and after.
std::string idle_gaps_html(const trace_model& m, size_t rows);

}  // namespace magpie::trace
