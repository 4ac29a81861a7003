// The self-contained HTML report (inline CSS + SVG; no scripts, fonts or external assets).
#include <algorithm>
#include <cmath>
#include <set>

#include "core/strings.h"
#include "trace/report.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

std::string esc(std::string_view s) {
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

std::string f2(double v) { return std::isfinite(v) ? strprintf("%.2f", v) : "–"; }
std::string f3g(double v) { return std::isfinite(v) ? strprintf("%.3g", v) : "–"; }

struct axis {
  double lo, hi;  // log10 range
  double px0, px1;
  double map(double v) const { return px0 + (std::log10(v) - lo) / (hi - lo) * (px1 - px0); }
};

std::string timeline_svg(const timeline_breakdown& t) {
  if (t.total <= 0) return "<p>No GPU events.</p>";
  struct part {
    const char* label;
    int64_t ns;
    const char* color;
  } parts[] = {{"computation", t.computation, "#4e79a7"},
               {"exposed communication", t.exposed_comm, "#e15759"},
               {"exposed memcpy", t.exposed_memcpy, "#f28e2b"},
               {"idle", t.idle, "#d3d3d3"}};
  std::string s = "<svg xmlns='http://www.w3.org/2000/svg' width='720' height='70' role='img'>";
  double x = 10;
  for (const auto& p : parts) {
    double w = 700.0 * static_cast<double>(p.ns) / static_cast<double>(t.total);
    if (w <= 0) continue;
    s += strprintf("<rect x='%.2f' y='10' width='%.2f' height='24' fill='%s'><title>%s: %.3f ms (%.2f%%)</title></rect>",
                   x, w, p.color, p.label, static_cast<double>(p.ns) / 1e6,
                   100.0 * static_cast<double>(p.ns) / static_cast<double>(t.total));
    x += w;
  }
  x = 10;
  for (const auto& p : parts) {
    s += strprintf("<rect x='%.0f' y='46' width='10' height='10' fill='%s'/><text x='%.0f' y='55' font-size='11'>%s %.1f%%</text>",
                   x, p.color, x + 14, p.label, 100.0 * static_cast<double>(p.ns) / static_cast<double>(t.total));
    x += 175;
  }
  return s + "</svg>";
}

std::string roofline_svg(const analysis& a) {
  std::vector<const op_row*> pts;
  for (const auto& r : a.ops)
    if (r.roof.ok && r.bytes && *r.bytes > 0 && std::isfinite(r.tflops_mean) && r.tflops_mean > 0) pts.push_back(&r);
  if (!a.spec) return "<p>No GPU spec: roofline not drawn (give --gpu-spec FILE or --gpu NAME).</p>";
  if (pts.empty()) return "<p>No modelled op with a roofline.</p>";
  std::set<std::string> specs = {"matrix_bf16"};
  double ai_min = 1e9, ai_max = 0, y_min = 1e9, peak_max = 0;
  for (const op_row* r : pts) {
    double ai = r->model.flops / *r->bytes;
    ai_min = std::min(ai_min, ai);
    ai_max = std::max(ai_max, ai);
    y_min = std::min(y_min, r->tflops_mean);
    specs.insert(r->model.compute_spec);
  }
  for (const auto& s : specs)
    if (auto p = a.spec->peak_tflops(s)) peak_max = std::max(peak_max, *p);
  double bw_tbps = a.spec->mem_bw_gbps / 1000.0;
  axis X{std::floor(std::log10(std::min(ai_min, 0.1))), std::ceil(std::log10(std::max(ai_max * 2, 1e3))), 70, 700};
  axis Y{std::floor(std::log10(std::max(y_min / 2, 1e-6))), std::ceil(std::log10(std::max(peak_max * 1.5, 1.0))), 400, 20};
  std::string s = "<svg xmlns='http://www.w3.org/2000/svg' width='720' height='450' role='img' font-size='11'>";
  s += "<rect x='70' y='20' width='630' height='380' fill='#fafafa' stroke='#999'/>";
  for (int e = static_cast<int>(X.lo); e <= static_cast<int>(X.hi); ++e) {
    double px = X.map(std::pow(10.0, e));
    s += strprintf("<line x1='%.1f' y1='20' x2='%.1f' y2='400' stroke='#e5e5e5'/><text x='%.1f' y='415' text-anchor='middle'>1e%d</text>",
                   px, px, px, e);
  }
  for (int e = static_cast<int>(Y.lo); e <= static_cast<int>(Y.hi); ++e) {
    double py = Y.map(std::pow(10.0, e));
    s += strprintf("<line x1='70' y1='%.1f' x2='700' y2='%.1f' stroke='#e5e5e5'/><text x='64' y='%.1f' text-anchor='end'>1e%d</text>",
                   py, py, py + 4, e);
  }
  s += "<text x='385' y='440' text-anchor='middle'>arithmetic intensity (FLOP/byte)</text>";
  s += "<text x='16' y='210' text-anchor='middle' transform='rotate(-90 16 210)'>achieved TFLOP/s</text>";
  // Memory roof up to each compute ceiling.
  const char* colors[] = {"#59a14f", "#edc948", "#b07aa1", "#76b7b2", "#ff9da7", "#9c755f"};
  int ci = 0;
  for (const auto& sp : specs) {
    auto peak = a.spec->peak_tflops(sp);
    if (!peak) continue;
    double knee = *peak / bw_tbps;
    double x0 = std::pow(10.0, X.lo), x1 = std::pow(10.0, X.hi);
    double xs = std::max(x0, std::pow(10.0, Y.lo) / bw_tbps);
    s += strprintf("<polyline fill='none' stroke='%s' stroke-width='2' points='%.1f,%.1f %.1f,%.1f %.1f,%.1f'>"
                   "<title>%s: %.1f TFLOP/s, %.0f GB/s (knee %.1f FLOP/B)</title></polyline>",
                   colors[ci % 6], X.map(xs), Y.map(xs * bw_tbps), X.map(knee), Y.map(*peak), X.map(x1), Y.map(*peak),
                   esc(sp).c_str(), *peak, a.spec->mem_bw_gbps, knee);
    s += strprintf("<text x='696' y='%.1f' text-anchor='end' fill='%s'>%s %.0f TFLOP/s</text>", Y.map(*peak) - 4,
                   colors[ci % 6], esc(sp).c_str(), *peak);
    (void)x0;
    ++ci;
  }
  for (const op_row* r : pts) {
    double ai = r->model.flops / *r->bytes;
    double rad = 3 + 12 * std::sqrt(std::max(0.0, r->time_pct) / 100.0);
    const char* fill = r->roof.bound == "COMPUTE_BOUND" ? "#4e79a7" : "#e15759";
    s += strprintf("<circle cx='%.1f' cy='%.1f' r='%.1f' fill='%s' fill-opacity='0.6' stroke='#333'>"
                   "<title>%s %s — %.3g FLOP/B, %.3g TFLOP/s, %.1f%% of roofline, %.2f%% of op time</title></circle>",
                   X.map(ai), Y.map(r->tflops_mean), rad, fill, esc(r->name).c_str(), esc(r->input_dims).c_str(), ai,
                   r->tflops_mean, r->pct_roofline_mean, r->time_pct);
  }
  return s + "</svg>";
}

}  // namespace

std::string report_html(const std::string& title, const trace_model& m, const analysis& a, const stage_split& split,
                        size_t top_k) {
  std::string h = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>" + esc(title) + "</title><style>"
                  "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;font-size:12px}"
                  "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td.l,th.l{text-align:left;max-width:520px;"
                  "overflow-wrap:anywhere}th{background:#f0f0f0}h2{margin-top:28px}.muted{color:#666}</style></head><body>";
  h += "<h1>" + esc(title) + "</h1>";
  h += "<p class='muted'>" + esc(m.path.string()) + " · device: " + esc(m.device_name.empty() ? "unknown" : m.device_name) +
       " · GPU spec: " + esc(a.spec ? a.spec->name + " (" + a.spec->source + ")" : "none") + strprintf(
           " · %zu GPU events, %llu unlinked · linking key: %s</p>", m.gpu.size(),
           static_cast<unsigned long long>(m.gpu_unlinked), m.linking_key.c_str());
  h += "<h2>GPU timeline</h2>" + timeline_svg(a.timeline) + "<table><tr><th class='l'>type</th><th>time ms</th><th>percent</th></tr>";
  for (const auto& r : a.timeline.to_json())
    h += "<tr><td class='l'>" + esc(r["type"].get<std::string>()) + "</td><td>" + strprintf("%.4f", r["time ms"].get<double>()) +
         "</td><td>" + f2(r["percent"].get<double>()) + "</td></tr>";
  h += "</table><h2>Roofline</h2>" + roofline_svg(a);
  h += "<h2>Ops</h2><table><tr><th class='l'>op</th><th class='l'>category</th><th>count</th><th>kernel µs</th><th>%</th>"
       "<th>GFLOP</th><th>FLOP/B</th><th>TFLOP/s</th><th>TB/s</th><th class='l'>bound</th><th>% roofline</th>"
       "<th class='l'>input dims</th></tr>";
  for (size_t i = 0; i < a.ops.size() && i < top_k; ++i) {
    const op_row& r = a.ops[i];
    bool c = r.model.computed;
    double ai = (c && r.bytes && *r.bytes > 0) ? r.model.flops / *r.bytes : NAN;
    h += "<tr><td class='l'>" + esc(r.name) + "</td><td class='l'>" + esc(r.category) + "</td><td>" +
         std::to_string(r.operation_count) + "</td><td>" + f2(r.kernel_time_us_sum) + "</td><td>" + f2(r.time_pct) +
         "</td><td>" + (c ? f3g(r.gflops) : "–") + "</td><td>" + f3g(ai) + "</td><td>" + f3g(r.tflops_mean) + "</td><td>" +
         f3g(r.tbps_mean) + "</td><td class='l'>" + esc(r.roof.ok ? r.roof.bound : "") + "</td><td>" +
         (r.roof.ok ? f2(r.pct_roofline_mean) : "–") + "</td><td class='l'>" + esc(r.input_dims) + "</td></tr>";
  }
  h += "</table><h2>Kernels</h2><table><tr><th class='l'>kernel</th><th class='l'>category</th><th>calls</th><th>total µs</th>"
       "<th>avg µs</th><th class='l'>top op</th><th>TFLOP/s</th><th>% roofline</th></tr>";
  for (size_t i = 0; i < a.kernels.size() && i < top_k; ++i) {
    const kernel_row& k = a.kernels[i];
    double tf = (k.modelled && k.total_us > 0) ? k.flops / 1e12 / (k.total_us / 1e6) : NAN;
    double pr = (k.roof.ok && k.total_us > 0) ? k.roof.time_us / k.total_us * 100 : NAN;
    h += "<tr><td class='l'>" + esc(k.name) + "</td><td class='l'>" + esc(k.category) + "</td><td>" + std::to_string(k.calls) +
         "</td><td>" + f2(k.total_us) + "</td><td>" + f2(k.avg_us()) + "</td><td class='l'>" + esc(k.top_op) + "</td><td>" +
         f3g(tf) + "</td><td>" + f2(pr) + "</td></tr>";
  }
  h += "</table><h2>Steps (" + esc(split.source) + ")</h2><table><tr><th>#</th><th class='l'>step</th><th class='l'>phase</th>"
       "<th>batch</th><th>GPU events</th><th>GPU busy µs</th></tr>";
  for (const auto& st : split.steps)
    h += "<tr><td>" + std::to_string(st.idx) + "</td><td class='l'>" + esc(st.name) + "</td><td class='l'>" + esc(st.phase) +
         "</td><td>" + std::to_string(st.batch_size) + "</td><td>" + std::to_string(st.gpu.size()) + "</td><td>" +
         f2(static_cast<double>(st.gpu_busy) / 1000.0) + "</td></tr>";
  h += "</table><p class='muted'>Generated by magpie trace report. Kernel times are unions of GPU intervals; the "
       "roofline uses analytical FLOP/byte models of the recorded shapes.</p></body></html>\n";
  return h;
}

}  // namespace magpie::trace
