// The self-contained HTML report (inline CSS + SVG; no scripts, fonts or external assets).
// Layout (checked by the report_html_screenshot golden test in headless Chromium at 1280×800):
// read problems, then one summary row — GPU timeline, stage split, top kernels — above the
// fold; then the timeline of GPU streams over time with the largest idle gaps marked and the gap
// analysis (report_html_timeline.cpp); the roofline (points coloured by op category, legend,
// ceiling labels spread so they never overlap, hover text per point) and the op, kernel and
// step tables (one line per row: long names shortened in the middle, the full name on hover;
// numbers with SI prefixes).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/strings.h"
#include "trace/health.h"
#include "trace/health_printer.h"
#include "trace/report.h"
#include "trace/report_html_timeline.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

std::string esc(std::string_view s) { return html_escape(s); }

std::string f2(double v) { return std::isfinite(v) ? strprintf("%.2f", v) : "–"; }
std::string f3g(double v) { return std::isfinite(v) ? strprintf("%.3g", v) : "–"; }
std::string short_name(const std::string& n, size_t max) { return elide_middle(n, max); }
/// A table cell with a shortened name; the full name on hover.
std::string name_cell(const std::string& n, size_t max) {
  return "<td class='l nm' title='" + esc(n) + "'>" + esc(short_name(n, max)) + "</td>";
}

/// One colour per category, kernel (gemm, attention…) and op (GEMM, SDPA_fwd…) spellings alike.
const char* category_color(const std::string& category) {
  static const std::map<std::string, const char*> k = {
      {"gemm", "#4e79a7"},          {"attention", "#f28e2b"},   {"sdpa_fwd", "#f28e2b"},  {"sdpa_bwd", "#f28e2b"},
      {"inferenceattention", "#e15759"}, {"communication", "#d37295"}, {"memcpy", "#fabfd2"}, {"memset", "#fabfd2"},
      {"norm", "#edc948"},          {"norm_fwd", "#edc948"},    {"rmsnorm", "#b07aa1"},   {"softmax", "#b6992d"},
      {"moe", "#499894"},           {"reduce", "#59a14f"},      {"elementwise", "#76b7b2"}, {"copy", "#86bcb6"},
      {"indexing", "#f1ce63"},      {"conv_fwd", "#ff9da7"},    {"triton", "#bab0ac"}};
  auto it = k.find(lower_ascii(category));
  return it == k.end() ? "#9c755f" : it->second;
}

/// Phase colours, distinct from every category colour.
const char* phase_color(step_phase phase) {
  switch (phase) {
    case step_phase::prefill_only: return "#6a3d9a";
    case step_phase::decode_only: return "#33a02c";
    case step_phase::prefilldecode: return "#ff7f00";
    default: return "#c7c7c7";
  }
}

struct axis {
  double lo, hi;  // log10 range
  double px0, px1;
  double map(double v) const { return px0 + (std::log10(v) - lo) / (hi - lo) * (px1 - px0); }
};

std::string problems_html(const input_health* h) {
  if (!h || h->problems.empty()) return "";
  std::string s = "<div class='problems' id='input-problems'><b>Input problems (" + std::string(input_status_name(h->status)) +
                  "): the numbers below cover only what could be read.</b><ul>";
  for (const auto& p : h->problems) s += "<li>" + esc(problem_text(p)) + "</li>";
  return s + "</ul></div>";
}

std::string timeline_panel(const analysis& a) {
  const timeline_breakdown& t = a.timeline;
  std::string s = "<div class='panel'><h2>GPU timeline</h2>";
  if (t.total <= 0) return s + "<p>No GPU events.</p></div>";
  struct part {
    const char* label;
    int64_t ns;
    const char* color;
  } parts[] = {{"computation", t.computation, "#4e79a7"},
               {"exposed comm", t.exposed_comm, "#e15759"},
               {"exposed memcpy", t.exposed_memcpy, "#f28e2b"},
               {"idle", t.idle, "#d3d3d3"}};
  s += "<svg xmlns='http://www.w3.org/2000/svg' width='380' height='34' role='img'>";
  double x = 0;
  for (const auto& p : parts) {
    double w = 380.0 * static_cast<double>(p.ns) / static_cast<double>(t.total);
    if (w <= 0) continue;
    s += strprintf("<rect x='%.2f' y='4' width='%.2f' height='26' fill='%s'><title>%s: %.3f ms (%.2f%%)</title></rect>", x,
                   w, p.color, p.label, static_cast<double>(p.ns) / 1e6,
                   100.0 * static_cast<double>(p.ns) / static_cast<double>(t.total));
    x += w;
  }
  s += "</svg><table>";
  for (const auto& p : parts)
    s += strprintf("<tr><td class='l'><span class='sw' style='background:%s'></span>%s</td><td>%.3f ms</td><td>%.1f%%</td></tr>",
                   p.color, p.label, static_cast<double>(p.ns) / 1e6,
                   100.0 * static_cast<double>(p.ns) / static_cast<double>(t.total));
  s += strprintf("<tr><td class='l'>total</td><td>%.3f ms</td><td></td></tr></table>", static_cast<double>(t.total) / 1e6);
  return s + "<p class='muted'>" + esc(a.timeline_rule) + "</p></div>";
}

std::string stages_panel(const stage_split& split) {
  std::string s = "<div class='panel' id='stage-split'><h2>Stage split</h2>";
  std::map<std::string, size_t> n;
  int64_t busy = 0;
  for (const auto& st : split.steps) ++n[step_phase_name(st.phase)], busy += st.gpu_busy;  // by word: table order
  s += "<p>" + std::to_string(split.steps.size()) + " steps from <b>" + esc(split.source) + "</b>";
  if (!split.phase_method.empty()) s += ", phases from <b>" + esc(split.phase_method) + "</b>";
  s += "</p>";
  if (!split.undecided.empty()) s += "<p class='warn'>Phases unknown: " + esc(split.undecided) + "</p>";
  if (!split.steps.empty() && busy > 0) {
    s += "<svg xmlns='http://www.w3.org/2000/svg' width='380' height='30' role='img'>";
    double x = 0;
    for (const auto& st : split.steps) {
      double w = std::max(1.0, 380.0 * static_cast<double>(st.gpu_busy) / static_cast<double>(busy));
      s += strprintf("<rect x='%.2f' y='3' width='%.2f' height='24' fill='%s' stroke='#fff'><title>%s: %s, %lld tokens, "
                     "%.1f us GPU busy</title></rect>",
                     x, w, phase_color(st.phase), esc(st.name).c_str(), step_phase_name(st.phase),
                     static_cast<long long>(st.batch_size), static_cast<double>(st.gpu_busy) / 1000.0);
      x += w;
    }
    s += "</svg>";
  }
  s += "<table>";
  for (const auto& [phase, count] : n)
    s += strprintf("<tr><td class='l'><span class='sw' style='background:%s'></span>%s</td><td>%zu step%s</td></tr>",
                   phase_color(parse_step_phase(phase).value_or(step_phase::unknown)), esc(phase).c_str(), count,
                   count == 1 ? "" : "s");
  return s + "</table></div>";
}

std::string kernels_panel(const analysis& a) {
  std::string s = "<div class='panel' id='top-kernels'><h2>Top kernels</h2><table>";
  for (size_t i = 0; i < a.kernels.size() && i < 8; ++i) {
    const kernel_row& k = a.kernels[i];
    double pct = a.kernels_total_us > 0 ? k.total_us / a.kernels_total_us * 100 : 0;
    s += "<tr><td class='l kn' title='" + esc(k.name) + "'><span class='sw' style='background:" + category_color(k.category) +
         "'></span>" + esc(short_name(k.name, 34)) + "</td><td class='nw'>" + f2(k.total_us) + " µs</td><td>" + f2(pct) +
         "%</td></tr>";
  }
  return s + "</table></div>";
}

/// Ceiling labels: at the right edge above their line, pushed apart to at least 13 px.
std::vector<double> spread_labels(std::vector<double> y) {
  std::vector<size_t> idx(y.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return y[a] < y[b]; });
  for (size_t k = 1; k < idx.size(); ++k) y[idx[k]] = std::max(y[idx[k]], y[idx[k - 1]] + 13);
  return y;
}

std::string roofline_svg(const analysis& a) {
  std::vector<const op_row*> pts;
  for (const auto& r : a.ops)
    if (r.roof.ok && r.bytes && *r.bytes > 0 && std::isfinite(r.tflops_mean) && r.tflops_mean > 0) pts.push_back(&r);
  if (!a.spec) return "<p>No GPU spec: roofline not drawn (give --gpu-spec FILE or --gpu NAME).</p>";
  if (pts.empty()) return "<p>No modelled op with a roofline.</p>";
  std::set<std::string> specs, cats;
  double ai_min = 1e9, ai_max = 0, y_min = 1e9, peak_max = 0;
  for (const op_row* r : pts) {
    double ai = r->model.flops / *r->bytes;
    ai_min = std::min(ai_min, ai);
    ai_max = std::max(ai_max, ai);
    y_min = std::min(y_min, r->tflops_mean);
    specs.insert(r->model.compute_spec);
    cats.insert(r->category);
  }
  for (const auto& s : specs)
    if (auto p = a.spec->peak_tflops(s)) peak_max = std::max(peak_max, *p);
  double bw_tbps = a.spec->mem_bw_gbps / 1000.0;
  axis X{std::floor(std::log10(std::min(ai_min, 0.1))), std::ceil(std::log10(std::max(ai_max * 2, 1e3))), 70, 700};
  axis Y{std::floor(std::log10(std::max(y_min / 2, 1e-6))), std::ceil(std::log10(std::max(peak_max * 1.5, 1.0))), 400, 20};
  std::string s = "<svg xmlns='http://www.w3.org/2000/svg' width='900' height='450' role='img' font-size='11' id='roofline'>";
  s += "<rect x='70' y='20' width='630' height='380' fill='#fafafa' stroke='#999'/>";
  for (int e = static_cast<int>(X.lo); e <= static_cast<int>(X.hi); ++e) {
    double px = X.map(std::pow(10.0, e));
    s += strprintf("<line x1='%.1f' y1='20' x2='%.1f' y2='400' stroke='#e5e5e5'/><text x='%.1f' y='415' text-anchor='middle'>%s</text>",
                   px, px, px, power10_label(e).c_str());
  }
  for (int e = static_cast<int>(Y.lo); e <= static_cast<int>(Y.hi); ++e) {
    double py = Y.map(std::pow(10.0, e));
    s += strprintf("<line x1='70' y1='%.1f' x2='700' y2='%.1f' stroke='#e5e5e5'/><text x='64' y='%.1f' text-anchor='end'>%s</text>",
                   py, py, py + 4, power10_label(e + 12).c_str());  // the axis is in TFLOP/s; labels in FLOP/s
  }
  s += "<text x='385' y='440' text-anchor='middle'>arithmetic intensity (FLOP/byte)</text>";
  s += "<text x='16' y='210' text-anchor='middle' transform='rotate(-90 16 210)'>achieved FLOP/s</text>";
  std::vector<std::pair<std::string, double>> ceilings;
  for (const auto& sp : specs)
    if (auto peak = a.spec->peak_tflops(sp)) ceilings.push_back({sp, *peak});
  std::vector<double> label_y;
  for (const auto& c : ceilings) label_y.push_back(Y.map(c.second) - 4);
  // Labels sit above their line; spreading moves lower-valued ones further down.
  std::vector<double> placed = spread_labels(label_y);
  double x1 = std::pow(10.0, X.hi), xs = std::max(std::pow(10.0, X.lo), std::pow(10.0, Y.lo) / bw_tbps);
  for (size_t i = 0; i < ceilings.size(); ++i) {
    const auto& [sp, peak] = ceilings[i];
    double knee = peak / bw_tbps;
    s += strprintf("<polyline fill='none' stroke='#555' stroke-width='1.5' points='%.1f,%.1f %.1f,%.1f %.1f,%.1f'>"
                   "<title>%s: %.1f TFLOP/s, %.0f GB/s (knee %.1f FLOP/B)</title></polyline>",
                   X.map(xs), Y.map(xs * bw_tbps), X.map(knee), Y.map(peak), X.map(x1), Y.map(peak), esc(sp).c_str(), peak,
                   a.spec->mem_bw_gbps, knee);
    s += strprintf("<text class='ceiling' x='706' y='%.1f' fill='#333'>%s %.0f TFLOP/s</text>", placed[i],
                   esc(sp).c_str(), peak);
  }
  s += strprintf("<text x='%.1f' y='%.1f' fill='#555' transform='rotate(-%.1f %.1f %.1f)'>%.0f GB/s</text>",
                 X.map(xs) + 30, Y.map(xs * bw_tbps) - 30, 45.0, X.map(xs) + 30, Y.map(xs * bw_tbps) - 30, a.spec->mem_bw_gbps);
  for (const op_row* r : pts) {
    double ai = r->model.flops / *r->bytes;
    double rad = 3 + 12 * std::sqrt(std::max(0.0, r->time_pct) / 100.0);
    s += strprintf("<circle cx='%.1f' cy='%.1f' r='%.1f' fill='%s' fill-opacity='0.75' stroke='#333'>"
                   "<title>%s\nshape: %s\nkernel time: %.2f us in %lld calls (%.2f%% of op time)\n%.3g FLOP/B, %.3g "
                   "TFLOP/s, %.1f%% of roofline (%s)</title></circle>",
                   X.map(ai), Y.map(r->tflops_mean), rad, category_color(r->category), esc(r->name).c_str(),
                   esc(r->input_dims.empty() ? "-" : r->input_dims).c_str(), r->kernel_time_us_sum,
                   static_cast<long long>(r->operation_count), r->time_pct, ai, r->tflops_mean, r->pct_roofline_mean,
                   esc(r->roof.bound).c_str());
  }
  double ly = 200;
  for (double y : placed) ly = std::max(ly, y + 24);
  s += strprintf("<text x='706' y='%.0f' font-weight='bold'>op category</text>", ly);
  for (const auto& c : cats) {
    ly += 16;
    s += strprintf("<circle class='legend' cx='712' cy='%.0f' r='5' fill='%s'/><text x='722' y='%.0f'>%s</text>", ly - 4,
                   category_color(c), ly, esc(c).c_str());
  }
  return s + "</svg>";
}

std::string ops_table(const analysis& a, size_t top_k) {
  std::string h = "<h2>Ops</h2><table class='one-line'><tr><th class='l'>op</th><th class='l'>category</th><th>count</th><th>kernel time</th>"
                  "<th>%</th><th>FLOP</th><th>FLOP/B</th><th>FLOP/s</th><th>B/s</th><th class='l'>bound</th>"
                  "<th>% roofline</th><th class='l'>input dims</th></tr>";
  for (size_t i = 0; i < a.ops.size() && i < top_k; ++i) {
    const op_row& r = a.ops[i];
    bool c = r.model.computed;
    double ai = (c && r.bytes && *r.bytes > 0) ? r.model.flops / *r.bytes : NAN;
    h += "<tr>" + name_cell(r.name, 44) + "<td class='l'><span class='sw' style='background:" +
         category_color(r.category) + "'></span>" + esc(r.category) + "</td><td>" + std::to_string(r.operation_count) +
         "</td><td class='nw'>" + si_duration_ns(r.kernel_time_us_sum * 1e3) + "</td><td>" + f2(r.time_pct) +
         "</td><td class='nw'>" + (c ? si_format(r.gflops * 1e9, "") : "–") + "</td><td>" + f3g(ai) +
         "</td><td class='nw'>" + si_format(r.tflops_mean * 1e12, "") + "</td><td class='nw'>" +
         si_format(r.tbps_mean * 1e12, "") + "</td><td class='l nw'>" + esc(r.roof.ok ? lower_ascii(r.roof.bound) : "") +
         "</td><td>" + (r.roof.ok ? f2(r.pct_roofline_mean) : "–") +
         "</td>" + name_cell(r.input_dims, 40) + "</tr>";
  }
  return h + "</table>";
}

std::string kernels_table(const analysis& a, size_t top_k) {
  std::string h = "<h2>Kernels</h2><table class='one-line'><tr><th class='l'>kernel (hover for the full name)</th><th class='l'>category</th>"
                  "<th>calls</th><th>total</th><th>avg</th><th class='l'>top op</th><th>FLOP/s</th><th>% roofline</th></tr>";
  for (size_t i = 0; i < a.kernels.size() && i < top_k; ++i) {
    const kernel_row& k = a.kernels[i];
    double tf = (k.modelled && k.total_us > 0) ? k.flops / 1e12 / (k.total_us / 1e6) : NAN;
    double pr = (k.roof.ok && k.total_us > 0) ? k.roof.time_us / k.total_us * 100 : NAN;
    h += "<tr>" + name_cell(k.name, 70) + "<td class='l'><span class='sw' style='background:" +
         category_color(k.category) + "'></span>" + esc(k.category) + "</td><td>" + std::to_string(k.calls) +
         "</td><td class='nw'>" + si_duration_ns(k.total_us * 1e3) + "</td><td class='nw'>" + si_duration_ns(k.avg_us() * 1e3) +
         "</td><td class='l'>" + esc(k.top_op) + "</td><td class='nw'>" + si_format(tf * 1e12, "") +
         "</td><td>" + f2(pr) + "</td></tr>";
  }
  return h + "</table>";
}

std::string steps_table(const stage_split& split) {
  std::string h = "<h2>Steps (" + esc(split.source) + ")</h2><table><tr><th>#</th><th class='l'>step</th><th class='l'>phase</th>"
                  "<th>tokens</th><th>GPU events</th><th>GPU busy µs</th></tr>";
  for (const auto& st : split.steps)
    h += "<tr><td>" + std::to_string(st.idx) + "</td><td class='l'>" + esc(st.name) + "</td><td class='l'>" + step_phase_name(st.phase) +
         "</td><td>" + std::to_string(st.batch_size) + "</td><td>" + std::to_string(st.gpu.size()) + "</td><td>" +
         f2(static_cast<double>(st.gpu_busy) / 1000.0) + "</td></tr>";
  return h + "</table>";
}

}  // namespace

std::string report_html(const report_page& pg) {
  const trace_model& m = *pg.model;
  const analysis& a = *pg.result;
  std::string h = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>" + esc(pg.title) + "</title><style>"
                  "body{font-family:sans-serif;margin:16px 24px;color:#222}table{border-collapse:collapse;font-size:12px}"
                  "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td.l,th.l{text-align:left;max-width:520px;"
                  "overflow-wrap:anywhere}th{background:#f0f0f0}h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;"
                  "margin:18px 0 6px}.muted{color:#666;font-size:12px}.summary{display:flex;gap:16px;align-items:flex-start}"
                  ".panel{border:1px solid #ddd;padding:6px 10px;width:400px}.panel h2{margin-top:2px}.panel table{width:100%}"
                  ".panel td{border:none;border-bottom:1px solid #eee}.sw{display:inline-block;width:10px;height:10px;"
                  "margin-right:5px;vertical-align:middle}.problems{border:2px solid #c0392b;background:#fdecea;"
                  "padding:6px 12px;margin:8px 0}.problems ul{margin:4px 0}.warn{color:#c0392b}td.kn{max-width:250px;white-space:nowrap;"
                  "overflow:hidden;text-overflow:ellipsis}.nw,td.nm{white-space:nowrap}h3{font-size:13px;margin:10px 0 4px}"
                  ".bar{display:inline-block;height:9px;background:#e15759}table.one-line td,table.one-line th{white-space:nowrap}"
                  "</style></head><body>";
  h += "<h1>" + esc(pg.title) + "</h1>";
  h += "<p class='muted'>" + esc(m.path.string()) + " · device: " + esc(m.device_name.empty() ? "unknown" : m.device_name) +
       " · GPU spec: " + esc(a.spec ? a.spec->name + " (" + a.spec->source + ")" : "none") +
       strprintf(" · %zu GPU events, %llu unlinked · linking key: %s</p>", m.gpu.size(),
                 static_cast<unsigned long long>(m.gpu_unlinked), m.linking_key.c_str());
  h += problems_html(pg.health);
  h += "<div class='summary'>" + timeline_panel(a) + stages_panel(*pg.split) + kernels_panel(a) + "</div>";
  h += timeline_lanes_html(m) + idle_gaps_html(m, 10);
  h += "<h2>Roofline</h2>" + roofline_svg(a) + ops_table(a, pg.top_k) + kernels_table(a, pg.top_k) + steps_table(*pg.split);
  h += "<p class='muted'>Generated by magpie trace report. Kernel times are unions of GPU intervals; the roofline uses "
       "analytical FLOP/byte models of the recorded shapes. Hover over a point or bar for details.</p></body></html>\n";
  return h;
}

}  // namespace magpie::trace
