#include "trace/report_html_timeline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "core/strings.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

struct gap {
  int64_t start = 0, end = 0;
  uint32_t before = k_none, after = k_none;  ///< events (indices into m.events)
  int64_t len() const { return end - start; }
};

/// Idle gaps of the whole GPU: between the union of GPU event intervals, in time order.
std::vector<gap> idle_gaps(const trace_model& m) {
  std::vector<gap> out;
  int64_t busy_end = 0;
  uint32_t last = k_none;
  for (uint32_t i : m.gpu) {
    const trace_event& e = m.events[i];
    if (last != k_none && e.ts > busy_end) out.push_back({busy_end, e.ts, last, i});
    if (last == k_none || e.end() >= busy_end) {
      busy_end = std::max(busy_end, e.end());
      last = i;
    }
  }
  return out;
}

struct span {
  int64_t t0 = 0, t1 = 0;
};

span gpu_span(const trace_model& m) {
  span s;
  if (m.gpu.empty()) return s;
  s.t0 = m.events[m.gpu.front()].ts;
  s.t1 = s.t0;
  for (uint32_t i : m.gpu) s.t1 = std::max(s.t1, m.events[i].end());
  return s;
}

std::string event_label(const trace_model& m, uint32_t i) {
  return i == k_none ? std::string("–") : elide_middle(m.name(m.events[i]), 56);
}

/// Axis ticks: a 1-2-5 step giving at most ~10 ticks over `range_ns`.
double tick_step(double range_ns) {
  double raw = range_ns / 10, p = std::pow(10.0, std::floor(std::log10(std::max(raw, 1.0))));
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (f * p >= raw) return f * p;
  return 10 * p;
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o.push_back(c);
    }
  }
  return o;
}

std::string si_format(double v, const char* unit) {
  if (!std::isfinite(v)) return "–";
  if (v == 0) return std::string("0 ") + unit;
  static const char* prefixes[] = {"f", "p", "n", "µ", "m", "", "k", "M", "G", "T", "P", "E"};
  int e3 = static_cast<int>(std::floor(std::log10(std::fabs(v)) / 3));
  e3 = std::clamp(e3, -5, 6);
  double x = v / std::pow(10.0, 3 * e3);
  if (std::fabs(x) >= 999.5 && e3 < 6) {  // rounding to 3 digits reached the next prefix
    x /= 1000;
    ++e3;
  }
  int decimals = std::fabs(x) >= 100 ? 0 : std::fabs(x) >= 10 ? 1 : 2;
  return strprintf("%.*f %s%s", decimals, x, prefixes[e3 + 5], unit);
}

std::string power10_label(int e) {
  if (e >= -2 && e <= 2) return e >= 0 ? strprintf("%.0f", std::pow(10.0, e)) : strprintf("%.*f", -e, std::pow(10.0, e));
  static const char* prefixes[] = {"a", "f", "p", "n", "µ", "m", "", "k", "M", "G", "T", "P", "E"};
  int e3 = static_cast<int>(std::floor(e / 3.0));
  e3 = std::clamp(e3, -6, 6);
  return strprintf("%.0f%s", std::pow(10.0, e - 3 * e3), prefixes[e3 + 6]);
}

std::string si_duration_ns(double ns) { return si_format(ns / 1e9, "s"); }

std::string elide_middle(const std::string& s, size_t max) {
  size_t n = utf8_length(s);
  if (n <= max || max < 8) return n <= max ? s : utf8_prefix(s, max);
  size_t tail = max / 3, head = max - tail - 1;
  // The tail: skip code points from the front until `tail` remain.
  size_t skip = n - tail, i = 0;
  while (i < s.size() && skip > 0) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    --skip;
  }
  return utf8_prefix(s, head) + "…" + s.substr(i);
}

std::string timeline_lanes_html(const trace_model& m) {
  std::string s = "<div id='timeline'><h2>Timeline (GPU streams over time)</h2>";
  if (m.gpu.empty()) return s + "<p>No GPU events.</p></div>";
  const span sp = gpu_span(m);
  const double range = std::max<double>(1, static_cast<double>(sp.t1 - sp.t0));
  // Lanes: (device, stream), ordered; busy ns per pixel column, so the page stays small.
  std::map<std::pair<int, int>, std::vector<double>> lanes;
  const int W = 1080, x0 = 150, lane_h = 18;
  for (uint32_t i : m.gpu) {
    const trace_event& e = m.events[i];
    auto& cols = lanes[{e.device, e.stream}];
    if (cols.empty()) cols.assign(W, 0.0);
    double a = static_cast<double>(e.ts - sp.t0) / range * W, b = static_cast<double>(e.end() - sp.t0) / range * W;
    for (int c = std::max(0, static_cast<int>(a)); c < W && c <= static_cast<int>(b); ++c)
      cols[c] += std::min<double>(b, c + 1) - std::max<double>(a, c);
  }
  const int H = 30 + static_cast<int>(lanes.size()) * (lane_h + 4) + 24;
  s += strprintf("<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' role='img' font-size='11'>", x0 + W + 10, H);
  int y = 24;
  for (const auto& [key, cols] : lanes) {
    s += strprintf("<text x='%d' y='%d' text-anchor='end'>dev %d · stream %d</text>", x0 - 6, y + 13, key.first, key.second);
    s += strprintf("<rect x='%d' y='%d' width='%d' height='%d' fill='#f4f4f4'/>", x0, y, W, lane_h);
    for (int c = 0; c < W;) {  // runs of busy columns
      if (cols[c] <= 0) {
        ++c;
        continue;
      }
      int c1 = c;
      while (c1 < W && cols[c1] > 0) ++c1;
      s += strprintf("<rect x='%d' y='%d' width='%d' height='%d' fill='#4e79a7'/>", x0 + c, y, c1 - c, lane_h);
      c = c1;
    }
    y += lane_h + 4;
  }
  // The largest idle gaps of the whole GPU, marked across all lanes (at least 1 px wide).
  std::vector<gap> gaps = idle_gaps(m);
  std::sort(gaps.begin(), gaps.end(), [](const gap& a, const gap& b) { return a.len() > b.len(); });
  for (size_t k = 0; k < gaps.size() && k < 5; ++k) {
    const gap& g = gaps[k];
    double a = static_cast<double>(g.start - sp.t0) / range * W, w = std::max(1.0, static_cast<double>(g.len()) / range * W);
    s += strprintf("<rect class='idle-gap' x='%.1f' y='20' width='%.1f' height='%d' fill='#e15759' fill-opacity='0.25' "
                   "stroke='#e15759'><title>idle gap #%zu: %s at +%s\nbefore: %s\nafter: %s</title></rect>",
                   x0 + a, w, y - 20, k + 1, si_duration_ns(static_cast<double>(g.len())).c_str(),
                   si_duration_ns(static_cast<double>(g.start - sp.t0)).c_str(), html_escape(event_label(m, g.before)).c_str(),
                   html_escape(event_label(m, g.after)).c_str());
    s += strprintf("<text x='%.1f' y='16' fill='#c0392b' text-anchor='middle'>#%zu</text>", x0 + a + w / 2, k + 1);
  }
  // Time axis.
  double step = tick_step(range);
  s += strprintf("<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#999'/>", x0, y, x0 + W, y);
  for (double t = 0; t <= range + 1e-9; t += step) {
    double px = x0 + t / range * W;
    s += strprintf("<line x1='%.1f' y1='%d' x2='%.1f' y2='%d' stroke='#999'/><text class='tick' x='%.1f' y='%d' "
                   "text-anchor='middle'>%s</text>",
                   px, y, px, y + 4, px, y + 16, t == 0 ? "0" : si_duration_ns(t).c_str());
  }
  s += "</svg><p class='muted'>Blue: time a stream was busy (each pixel column covers " +
       si_duration_ns(range / W) + "). Red: the five largest idle gaps of the GPU (no kernel, memcpy or memset on any "
       "stream), numbered as in the gap analysis below; hover for details.</p></div>";
  return s;
}

std::string idle_gaps_html(const trace_model& m, size_t rows) {
  std::string s = "<div id='gap-analysis'><h2>Gap analysis (GPU idle time)</h2>";
  std::vector<gap> gaps = idle_gaps(m);
  if (gaps.empty()) return s + "<p>No idle gaps between GPU events.</p></div>";
  const span sp = gpu_span(m);
  int64_t total = 0;
  for (const auto& g : gaps) total += g.len();
  // Histogram by decade of gap length.
  static const char* labels[] = {"< 1 µs", "1–10 µs", "10–100 µs", "100 µs–1 ms", "1–10 ms", "10–100 ms", "≥ 100 ms"};
  std::vector<int64_t> count(7, 0), sum(7, 0);
  for (const auto& g : gaps) {
    int b = g.len() < 1000 ? 0 : std::min(6, static_cast<int>(std::floor(std::log10(static_cast<double>(g.len()) / 1000.0))) + 1);
    ++count[b];
    sum[b] += g.len();
  }
  s += strprintf("<p>%zu gaps, %s idle in a GPU span of %s (%.1f%%).</p>", gaps.size(),
                 si_duration_ns(static_cast<double>(total)).c_str(),
                 si_duration_ns(static_cast<double>(sp.t1 - sp.t0)).c_str(),
                 100.0 * static_cast<double>(total) / std::max<double>(1, static_cast<double>(sp.t1 - sp.t0)));
  s += "<table id='gap-histogram'><tr><th class='l'>gap length</th><th>gaps</th><th>idle time</th><th>% of idle</th>"
       "<th class='l'></th></tr>";
  for (int b = 0; b < 7; ++b) {
    if (count[b] == 0) continue;
    double pct = 100.0 * static_cast<double>(sum[b]) / static_cast<double>(total);
    s += strprintf("<tr><td class='l'>%s</td><td>%lld</td><td>%s</td><td>%.1f%%</td><td class='l'><span class='bar' "
                   "style='width:%.0fpx'></span></td></tr>",
                   labels[b], static_cast<long long>(count[b]), si_duration_ns(static_cast<double>(sum[b])).c_str(), pct,
                   std::max(1.0, pct * 2));
  }
  s += "</table>";
  std::sort(gaps.begin(), gaps.end(), [](const gap& a, const gap& b) { return a.len() > b.len(); });
  s += "<h3>Largest gaps</h3><table id='gap-table'><tr><th>#</th><th>length</th><th>starts at</th><th class='l'>"
       "follows (last GPU event)</th><th class='l'>precedes (next GPU event)</th></tr>";
  for (size_t k = 0; k < gaps.size() && k < rows; ++k) {
    const gap& g = gaps[k];
    std::string before = event_label(m, g.before), after = event_label(m, g.after);
    s += strprintf("<tr><td>%zu</td><td class='nw'>%s</td><td class='nw'>+%s</td><td class='l nm' title='%s'>%s</td>"
                   "<td class='l nm' title='%s'>%s</td></tr>",
                   k + 1, si_duration_ns(static_cast<double>(g.len())).c_str(),
                   si_duration_ns(static_cast<double>(g.start - sp.t0)).c_str(),
                   html_escape(g.before == k_none ? "" : m.name(m.events[g.before])).c_str(), html_escape(before).c_str(),
                   html_escape(g.after == k_none ? "" : m.name(m.events[g.after])).c_str(), html_escape(after).c_str());
  }
  return s + "</table></div>";
}

}  // namespace magpie::trace
