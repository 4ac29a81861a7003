// magpie trace <action>: native analysis of PyTorch-profiler traces.
//   report    JSON + CSV + self-contained HTML (timeline, roofline plot, op/kernel tables, steps)
//   gap       Magpie's gap analysis with an explicit output directory
//   timeline  GPU timeline breakdown (computation / exposed comm / exposed memcpy / idle)
//   roofline  modelled ops with FLOPs, bytes and roofline against a GPU spec
//   stages    inference stage split + Magpie's kernel_roofline_simple CSVs
//   sources   kernel-name → source mapping (src/cli/trace_sources.cpp)
#include <algorithm>
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/subcommand.h"
#include "cli/trace_sources.h"
#include "core/args.h"
#include "core/strings.h"
#include "core/utf8.h"
#include "trace/analysis.h"
#include "trace/api.h"
#include "trace/discovery.h"
#include "trace/gap_analysis.h"
#include "trace/gap_printer.h"
#include "trace/analysis_printer.h"
#include "trace/health.h"
#include "trace/health_printer.h"
#include "trace/stage_codec.h"
#include "trace/report.h"
#include "trace/report_printer.h"
#include "trace/report_result.h"
#include "trace/stages.h"
#include "trace/util.h"

namespace magpie::cli {
namespace {

void add_spec_flags(arg_parser& p) {
  p.add_value("--gpu", "", "NAME", "GPU spec table entry (H100, H200, A100, B200, MI300X, MI325X, MI355X); default: the "
                                   "trace's deviceProperties name")
      .add_value("--gpu-spec", "", "FILE", "TraceLens arch JSON (mem_bw_gbps GB/s, max_achievable_tflops TFLOP/s); wins over --gpu")
      .add_bool("--datasheet", "", "use datasheet peaks instead of measured / achievable ceilings");
}

// k_exit_partial (subcommand.h): the input was read only partly, outputs written and marked
// partial (docs/trace-analysis.md).

void add_input_flags(arg_parser& p) {
  p.add_bool("--allow-partial", "", "exit 0 when the trace was read only partly (truncated, malformed or dropped events); "
                                    "by default such input exits 3 after writing the outputs, marked partial");
}

void add_compat_flag(arg_parser& p) {
  p.add_bool("--tracelens-compat", "", "TraceLens's default rules, to reproduce a TraceLens report: the GPU timeline counts "
                                       "only linked GPU events, kernel durations stay raw (no stream-overrun clipping), "
                                       "events ending >= 1 us after their parent leave the host tree");
}

/// Prints the input's problems on stderr and returns the exit code they imply: unusable → 1,
/// partial → 3 (0 with --allow-partial), ok → 0.
int input_exit(const std::string& what, const trace::input_health& input, bool allow_partial) {
  bool fatal = input.status == trace::input_status::unusable;
  for (const auto& p : trace::problem_texts(input))
    std::fprintf(stderr, "magpie trace: %s: %s: %s\n", fatal ? "error" : "warning", what.c_str(), p.c_str());
  if (fatal) {
    std::fprintf(stderr, "magpie trace: %s: nothing to analyse, no output written\n", what.c_str());
    return k_exit_failure;
  }
  if (input.status == trace::input_status::partial && !allow_partial) {
    std::fprintf(stderr, "magpie trace: %s was read only partly: outputs written and marked partial; exit %d "
                         "(--allow-partial accepts partial input)\n", what.c_str(), k_exit_partial);
    return k_exit_partial;
  }
  return k_exit_ok;
}

int fail(const status& s) {
  std::fprintf(stderr, "magpie trace: %s\n", s.message().c_str());
  return s.code() == status_code::invalid_argument ? k_exit_usage : k_exit_failure;
}

const std::string& first_positional(const arg_parser& p) {
  static const std::string empty;
  return p.positionals().empty() ? empty : p.positionals()[0];
}

std::string fmt_row(const std::string& a, const std::string& b, const std::string& c) {
  return trace::py_pad_right(a, 22) + trace::py_pad_left(b, 14) + trace::py_pad_left(c, 10) + "\n";
}

/// Prints timeline rows ({type, "time ms", percent}) under a header row.
void print_timeline_rows(const std::string& header, const json& rows) {
  std::fputs(fmt_row(header, "time ms", "percent").c_str(), stdout);
  for (const auto& r : rows.is_array() ? rows : json::array())
    std::fputs(fmt_row(json_string(r, "type"), strprintf("%.4f", json_number(r, "time ms", 0)),
                       strprintf("%.2f", json_number(r, "percent", 0)))
                   .c_str(),
               stdout);
}

/// The last `n` code points of UTF-8 text.
std::string utf8_suffix(const std::string& s, size_t n) {
  size_t i = s.size();
  while (i > 0 && n > 0) {
    --i;
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) --n;
  }
  return s.substr(i);
}

/// Console names for the top-kernels table: at most `width` characters (+ a marker), the middle
/// elided (the head names the kernel, the tail its arguments). Where two names would read the
/// same, the part around their first difference is shown instead of the tail.
std::vector<std::string> console_kernel_names(const std::vector<std::string>& names, size_t width) {
  const size_t tail = width / 3, head = width - tail - 3;
  auto elide = [&](const std::string& n) {
    return trace::utf8_length(n) <= width ? n : trace::utf8_prefix(n, head) + "..." + utf8_suffix(n, tail);
  };
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string s = elide(names[i]);
    size_t common = 0;  // longest common byte prefix with another name that elides the same
    for (size_t j = 0; j < names.size(); ++j) {
      if (j == i || names[j] == names[i] || elide(names[j]) != s) continue;
      size_t c = 0;
      while (c < names[i].size() && c < names[j].size() && names[i][c] == names[j][c]) ++c;
      common = std::max(common, c);
    }
    if (common > 0) {
      // Back up to a code-point boundary a few characters before the difference.
      size_t from = common > 12 ? common - 12 : 0;
      while (from > 0 && (static_cast<unsigned char>(names[i][from]) & 0xC0) == 0x80) --from;
      size_t keep_head = std::min<size_t>(20, trace::utf8_length(names[i].substr(0, from)));
      std::string mid = names[i].substr(from);
      size_t room = width > keep_head + 6 ? width - keep_head - 6 : 8;
      s = trace::utf8_prefix(names[i], keep_head) + "..." + trace::utf8_prefix(mid, room) +
          (trace::utf8_length(mid) > room ? "..." : "");
    }
    int k = 1;
    std::string base = s;
    while (std::find(out.begin(), out.end(), s) != out.end()) s = base + " #" + std::to_string(++k);
    out.push_back(s);
  }
  return out;
}

void print_top_kernels(const std::vector<trace::kernel_row>& kernels, size_t rows) {
  const size_t n = std::min(rows, kernels.size());
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(kernels[i].name);
  std::printf("\nTop kernels (by total GPU time; full names in kernels.csv):\n");
  if (n == 0) {
    std::printf("  (no GPU kernels)\n");
    return;
  }
  std::vector<std::string> shown = console_kernel_names(names, 60);
  std::printf("  %-60s %8s %14s  %s\n", "kernel", "calls", "total", "category");
  for (size_t i = 0; i < n; ++i)
    std::printf("  %s%*s %8lld %14s  %s\n", shown[i].c_str(),
                static_cast<int>(60 - std::min<size_t>(60, trace::utf8_length(shown[i]))), "",
                static_cast<long long>(kernels[i].calls), format_duration_ns(kernels[i].total_us * 1e3).c_str(),
                kernels[i].category.c_str());
}

/// One trace file → one report directory; prints the summary (or the JSON). Returns the exit code.
int report_one(const arg_parser& p, const trace::report_config& cfg, const fs::path& trace, const fs::path& out) {
  auto r = trace::run_trace_report(cfg, trace, out);
  if (!r.ok()) return fail(r.get_status());
  int exit_code = input_exit(trace.string(), r->input, p.has("--allow-partial"));
  if (exit_code == k_exit_failure) return exit_code;
  if (p.has("--json")) {
    std::puts(dump_pretty(trace::trace_report_json(*r)).c_str());
    return exit_code;
  }
  std::printf("Trace report: %s\nTrace: %s\nGPU spec: %s\nRules: %s\n\n", out.c_str(), trace.c_str(),
              r->gpu_spec_choice.c_str(), r->analysis.timeline_rule.c_str());
  print_timeline_rows("GPU timeline", trace::timeline_json(r->analysis.timeline));
  const trace::timeline_breakdown& tl = r->analysis.timeline;
  if (tl.total_comm > 0) {
    const auto ms = [](int64_t ns) { return static_cast<double>(ns) / 1e6; };
    const int64_t overlapped = tl.total_comm - tl.exposed_comm;
    std::printf("\nCommunication: %.4f ms total, %.4f ms exposed, %.4f ms overlapped with computation (%.1f%%)\n",
                ms(tl.total_comm), ms(tl.exposed_comm), ms(overlapped),
                100.0 * static_cast<double>(overlapped) / static_cast<double>(tl.total_comm));
  }
  print_top_kernels(r->analysis.kernels, 10);
  std::printf("\nFiles:\n");
  for (const auto& f : r->output_files) std::printf("  %s\n", f.c_str());
  return exit_code;
}

std::string trace_stem(const fs::path& trace) {
  std::string stem = trace.filename().string();
  for (const char* s : {".json.gz", ".json"})
    if (ends_with(stem, s)) stem.erase(stem.size() - std::string(s).size());
  return stem;
}

int run_report(const std::vector<std::string>& args) {
  arg_parser p("magpie trace report", "Full analysis of a trace: report.json, ops.csv, kernels.csv, gpu_timeline.csv,\n"
                                      "execution_details.csv and a self-contained report.html (timeline, gap analysis,\n"
                                      "SVG roofline). Given a directory, every trace in it (found as 'magpie trace gap'\n"
                                      "finds rank traces) gets its report in <output-dir>/<trace stem>/.");
  p.add_positional("trace", "PyTorch-profiler trace (.json or .json.gz), or a directory of traces", false, true)
      .add_value("--output-dir", "-o", "DIR", "output directory (default: ./trace_report_<trace or directory name>)")
      .add_value("--top-k", "", "N", "rows in the HTML tables (default: 50; CSV and JSON keep all)")
      .add_bool("--no-html", "", "skip report.html")
      .add_bool("--xlsx", "", "also write report.xlsx: one sheet per table, numbers as numeric cells")
      .add_bool("--json", "", "print report.json on stdout instead of a summary (one document per trace)");
  add_spec_flags(p);
  add_input_flags(p);
  add_compat_flag(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  trace::report_config cfg;
  cfg.gpu_spec_file = p.value("--gpu-spec");
  cfg.gpu_name = p.value("--gpu");
  cfg.use_achievable = !p.has("--datasheet");
  cfg.html = !p.has("--no-html");
  cfg.xlsx = p.has("--xlsx");
  cfg.tracelens_compat = p.has("--tracelens-compat");
  auto top = p.integer("--top-k", 50);
  if (!top.ok()) return fail(top.get_status());
  cfg.top_k = static_cast<int>(*top);
  fs::path trace = first_positional(p);
  std::error_code ec;
  if (!fs::is_directory(trace, ec)) {
    fs::path out = p.value("--output-dir", "trace_report_" + sanitize_label(trace_stem(trace)));
    return report_one(p, cfg, trace, out);
  }
  trace::discovery d = trace::discover_rank_traces(trace);
  for (const auto& dup : d.duplicates) std::fprintf(stderr, "magpie trace report: several traces claim %s\n", dup.c_str());
  if (d.files.empty())
    return fail(not_found("%s: no trace files (*.json, *.json.gz) found in this directory", trace.c_str()));
  std::string dir_name = absolute_path(trace).filename().string();
  fs::path out = p.value("--output-dir", "trace_report_" + sanitize_label(dir_name.empty() ? "traces" : dir_name));
  int worst = k_exit_ok;
  for (size_t i = 0; i < d.files.size(); ++i) {
    fs::path one = out / sanitize_label(trace_stem(d.files[i].path));
    if (i > 0 && !p.has("--json")) std::printf("\n");
    int rc = report_one(p, cfg, d.files[i].path, one);
    if (rc == k_exit_failure || (rc != k_exit_ok && worst == k_exit_ok)) worst = rc;
  }
  return worst;
}

int run_gap(const std::vector<std::string>& args) {
  arg_parser p("magpie trace gap", "Magpie's gap analysis (same CSVs and table as 'magpie benchmark --trace-dir').");
  p.add_positional("trace_dir", "directory of rank traces (or a workspace holding torch_trace/, or one trace file)", false,
                   true)
      .add_value("--output-dir", "-o", "DIR", "directory that receives gap_analysis/ (default: ./results)")
      .add_value("--top-k", "", "N", "rows kept (default: 20)")
      .add_value("--start-pct", "", "PCT", "window start, % of the trace span (default: 0)")
      .add_value("--end-pct", "", "PCT", "window end, % of the trace span (default: 100)")
      .add_value("--min-duration-us", "", "US", "drop events shorter than this, µs (default: 0)")
      .add_multi("--categories", "", "CAT", "category substrings to keep (default: kernel gpu)")
      .add_multi("--ignore-categories", "", "CAT", "category substrings to drop (default: gpu_user_annotation user_annotation)")
      .add_bool("--no-rank-csv", "", "skip gap_analysis_rank<N>.csv")
      .add_bool("--clamped-traces", "", "also write the clamped traces")
      .add_multi("--rank-file", "", "FILE", "where several files claim one rank, the file to use (name or path; repeatable)")
      .add_bool("--json", "", "print the gap_analysis block as JSON instead of the table");
  add_input_flags(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  trace::gap_config c;
  c.enabled = true;
  auto top = p.integer("--top-k", 20);
  auto s = p.number("--start-pct", 0), e = p.number("--end-pct", 100), md = p.number("--min-duration-us", 0);
  for (const status* st : {&top.get_status(), &s.get_status(), &e.get_status(), &md.get_status()})
    if (!st->ok()) return fail(*st);
  c.top_k = static_cast<int>(*top);
  c.trace_start_pct = *s;
  c.trace_end_pct = *e;
  c.min_duration_us = *md;
  if (p.has("--categories")) c.categories = p.values("--categories");
  if (p.has("--ignore-categories")) c.ignore_categories = p.values("--ignore-categories");
  c.write_rank_csv = !p.has("--no-rank-csv");
  c.clamped_traces = p.has("--clamped-traces");
  if (p.has("--rank-file")) c.rank_files = p.values("--rank-file");
  if (auto st = c.validate(); !st.ok()) return fail(st);
  fs::path gap_dir = fs::path(p.value("--output-dir", "./results")) / "gap_analysis";
  trace::gap_result r = trace::analyze_gap(c, first_positional(p));
  for (const auto& e : r.errors) std::fprintf(stderr, "magpie trace: error: %s\n", e.c_str());
  for (const auto& w : r.warnings) std::fprintf(stderr, "magpie trace: warning: %s\n", w.c_str());
  auto csv = trace::write_gap_outputs(r, gap_dir);
  if (!csv.ok()) return fail(csv.get_status());
  if (p.has("--json")) {
    std::puts(dump_pretty(trace::gap_block_json(r, *csv, gap_dir)).c_str());
  } else {
    if (!r.merged.empty()) std::fputs(trace::gap_console_summary(r, gap_dir).c_str(), stdout);
  }
  if (r.merged.empty()) {
    if (!p.has("--json")) std::printf("No kernel events found in traces.\n");
    return k_exit_failure;
  }
  if (!r.health.ok() && !p.has("--allow-partial")) {
    std::fprintf(stderr, "magpie trace: the traces were read only partly (see the warnings): outputs written; exit %d "
                         "(--allow-partial accepts partial input)\n", k_exit_partial);
    return k_exit_partial;
  }
  return k_exit_ok;
}

status_or<trace::spec_choice> spec_from(const arg_parser& p, const trace::trace_model& m) {
  return trace::choose_gpu_spec(p.value("--gpu-spec"), p.value("--gpu"), m.device_name, !p.has("--datasheet"));
}

int run_timeline(const std::vector<std::string>& args) {
  arg_parser p("magpie trace timeline", "GPU timeline breakdown of one trace (TraceLens's gpu_timeline rows), all GPU events.");
  p.add_positional("trace", "PyTorch-profiler trace", false, true)
      .add_value("--micro-idle-us", "", "US", "split idle into gaps shorter (micro) / not shorter (macro) than this")
      .add_bool("--json", "", "JSON on stdout");
  add_input_flags(p);
  add_compat_flag(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  auto micro = p.number("--micro-idle-us", 0);
  if (!micro.ok()) return fail(micro.get_status());
  bool compat = p.has("--tracelens-compat");
  auto m = trace::load_trace_model(first_positional(p), trace::model_options_for(compat));
  if (!m.ok()) return fail(m.get_status());
  trace::input_health input = trace::check_model(*m, true);
  int exit_code = input_exit(first_positional(p), input, p.has("--allow-partial"));
  if (exit_code == k_exit_failure) return exit_code;
  std::vector<uint32_t> events;
  for (uint32_t g : m->gpu)
    if (!compat || m->events[g].tracelens_linked) events.push_back(g);
  trace::timeline_breakdown t = trace::gpu_timeline(*m, events, static_cast<int64_t>(*micro * 1000), compat);
  std::string rule = compat ? "linked GPU events only (TraceLens default)" : "all GPU events (unlinked included)";
  if (p.has("--json")) {
    std::puts(dump_pretty(json{{"gpu_timeline", trace::timeline_json(t)}, {"rule", rule}, {"events", events.size()},
                               {"trace", trace::trace_summary_json(m->summary())}, {"input", trace::input_health_json(input)}})
                  .c_str());
    return exit_code;
  }
  std::printf("rule: %s (%zu of %zu GPU events)\n", rule.c_str(), events.size(), m->gpu.size());
  print_timeline_rows("type", trace::timeline_json(t));
  return exit_code;
}

int run_roofline(const std::vector<std::string>& args) {
  arg_parser p("magpie trace roofline", "Modelled ops (FLOPs, bytes) of one trace against a GPU spec.");
  p.add_positional("trace", "PyTorch-profiler trace", false, true)
      .add_value("--top-k", "", "N", "rows printed (default: 25)")
      .add_value("--csv", "", "FILE", "also write the full op table (ops.csv columns)")
      .add_bool("--json", "", "JSON on stdout");
  add_spec_flags(p);
  add_input_flags(p);
  add_compat_flag(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  bool compat = p.has("--tracelens-compat");
  auto m = trace::load_trace_model(first_positional(p), trace::model_options_for(compat));
  if (!m.ok()) return fail(m.get_status());
  int exit_code = input_exit(first_positional(p), trace::check_model(*m, true), p.has("--allow-partial"));
  if (exit_code == k_exit_failure) return exit_code;
  auto sc = spec_from(p, *m);
  if (!sc.ok()) return fail(sc.get_status());
  const gpu::gpu_spec* spec = sc->spec ? &*sc->spec : nullptr;
  trace::analysis a = trace::analyze(*m, m->gpu, spec, trace::step_spans(*m), {.linked_only_timeline = compat});
  if (p.has("--csv"))
    if (auto st = write_file_atomic(p.value("--csv"), trace::ops_csv(a)); !st.ok()) return fail(st);
  auto top = p.integer("--top-k", 25);
  if (!top.ok()) return fail(top.get_status());
  if (p.has("--json")) {
    std::puts(dump_pretty(trace::analysis_json(a, static_cast<size_t>(*top))).c_str());
    return exit_code;
  }
  std::printf("GPU spec: %s\n%-44s %-12s %6s %11s %9s %9s %9s %-13s %7s\n", sc->how.c_str(), "op", "category", "count",
              "kernel_us", "FLOP/B", "TFLOP/s", "TB/s", "bound", "%roof");
  for (size_t i = 0; i < a.ops.size() && i < static_cast<size_t>(*top); ++i) {
    const trace::op_row& r = a.ops[i];
    double ai = (r.model.computed && r.bytes && *r.bytes > 0) ? r.model.flops / *r.bytes : 0;
    std::string name = r.name.size() > 44 ? utf8_prefix(r.name, 41) + "..." : r.name;
    std::printf("%-44s %-12s %6lld %11.2f %9.3g %9.3g %9.3g %-13s %7.1f\n", name.c_str(), r.category.c_str(),
                static_cast<long long>(r.operation_count), r.kernel_time_us_sum, ai,
                std::isfinite(r.tflops_mean) ? r.tflops_mean : 0.0, std::isfinite(r.tbps_mean) ? r.tbps_mean : 0.0,
                r.roof.ok ? r.roof.bound.c_str() : "-", r.roof.ok ? r.pct_roofline_mean : 0.0);
  }
  return exit_code;
}

int run_stages(const std::vector<std::string>& args) {
  arg_parser p("magpie trace stages",
               "Inference stage split (prefilldecode / decode / prefill) of a serving trace and Magpie's\n"
               "<label>_ISL<isl>_OSL<osl>_CONC<conc>_kernel_roofline_simple.csv per stage.");
  p.add_positional("trace", "trace file, or a directory searched for the rank-0 trace", false, true)
      .add_value("--output-dir", "-o", "DIR", "output directory (default: ./tracelens)")
      .add_multi("--stages", "", "STAGE", "stages: prefilldecode decode prefill | all (default: all)")
      .add_value("--isl", "", "N", "input length for the file names (default: unknown)")
      .add_value("--osl", "", "N", "output length for the file names (default: unknown)")
      .add_value("--conc", "", "N", "concurrency: file names and the decode pick (closest request count)")
      .add_value("--export-format", "", "FMT", "csv (default) or excel: excel adds <label>/<label>.xlsx per stage")
      .add_bool("--json", "", "print the tracelens_analysis block");
  add_spec_flags(p);
  add_input_flags(p);
  add_compat_flag(p);
  if (auto rc = parse_or_exit(p, args)) return *rc;
  trace::inference_config cfg;
  if (p.has("--stages") && !p.values("--stages").empty()) cfg.stages = p.values("--stages");
  cfg.isl = p.value("--isl");
  cfg.osl = p.value("--osl");
  cfg.conc = p.value("--conc");
  cfg.gpu_spec_file = p.value("--gpu-spec");
  cfg.gpu_name = p.value("--gpu");
  cfg.use_achievable = !p.has("--datasheet");
  cfg.tracelens_compat = p.has("--tracelens-compat");
  cfg.export_format = p.value("--export-format", "csv");
  fs::path in = first_positional(p);
  std::error_code ec;
  fs::path dir = in;
  if (fs::is_regular_file(in, ec)) {
    cfg.trace_file = in;
    dir = in.parent_path();
  }
  auto b = trace::run_inference_analysis(cfg, dir, p.value("--output-dir", "tracelens"));
  if (!b.ok()) return fail(b.get_status());
  int exit_code = k_exit_ok;
  const std::string rank0 = b->rank0_trace ? b->rank0_trace->string() : std::string();
  if (b->input) {
    exit_code = input_exit(rank0, *b->input, p.has("--allow-partial"));
    if (exit_code == k_exit_failure) return exit_code;
  }
  if (p.has("--json")) {
    std::puts(dump_pretty(trace::inference_result_json(*b)).c_str());
  } else {
    std::printf("Trace: %s (steps from %s)\n", rank0.c_str(), b->analysed ? b->split.source.c_str() : "");
    for (const auto& r : b->stage_results) {
      if (!r.pick.step) {
        std::printf("  %-14s %s\n", trace::inference_stage_name(r.stage), r.error.c_str());
        continue;
      }
      const std::string& step_name = b->split.steps[*r.pick.step].name;
      std::printf("  %-14s step %s: %s\n                 -> %s\n", trace::inference_stage_name(r.stage), step_name.c_str(),
                  r.pick.selection_reason.c_str(), r.simple_summary_file.c_str());
    }
    for (const auto& w : b->warnings) std::fprintf(stderr, "magpie trace: warning: %s\n", w.c_str());
    for (const auto& e : b->errors) std::fprintf(stderr, "magpie trace: error: %s\n", e.c_str());
  }
  if (!b->errors.empty()) return k_exit_failure;
  bool any_stage = false;
  for (const auto& r : b->stage_results) any_stage |= r.pick.step.has_value();
  if (!any_stage) {
    std::fprintf(stderr, "magpie trace: no stage could be analysed (reasons above): no stage files written\n");
    return k_exit_failure;
  }
  return exit_code;
}

const char* k_usage =
    "usage: magpie trace <action> [options]\n\n"
    "actions:\n"
    "  report    full report of one trace: JSON, CSVs and a self-contained HTML page with an SVG roofline\n"
    "  gap       Magpie's gap analysis (gap_analysis.csv, per-rank CSVs, console table)\n"
    "  timeline  GPU timeline breakdown: computation, exposed communication / memcpy, idle\n"
    "  roofline  modelled ops: FLOPs, bytes, achieved TFLOP/s and TB/s, roofline bound\n"
    "  stages    inference stage split and Magpie's kernel_roofline_simple CSVs\n"
    "  sources   map kernel names to their source definitions in given repositories\n\n"
    "Run 'magpie trace <action> --help' for the options of one action. Times are microseconds\n"
    "unless a column says otherwise; traces are .json or .json.gz (detected from the bytes).\n"
    "Exit codes: 0 ok; 1 nothing to analyse (unreadable, empty, not a trace, no GPU events) or a failed\n"
    "run; 2 usage; 3 the input was read only partly (outputs written, marked partial; --allow-partial\n"
    "makes this 0). Problems with the input are listed on stderr with counts.\n";

int run_trace(const std::vector<std::string>& args, const global_options& g) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::fputs(k_usage, stdout);
    return args.empty() ? k_exit_usage : k_exit_ok;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  const std::string& a = args[0];
  if (a == "report") return run_report(rest);
  if (a == "gap") return run_gap(rest);
  if (a == "timeline") return run_timeline(rest);
  if (a == "roofline") return run_roofline(rest);
  if (a == "stages") return run_stages(rest);
  if (a == "sources") return run_trace_sources(rest, g);
  return unknown_action("magpie trace", a, {"report", "gap", "timeline", "roofline", "stages", "sources"}, std::string("\n") + k_usage);
}

}  // namespace
MAGPIE_SUBCOMMAND(trace, "trace", "analyse PyTorch-profiler traces: report, gap, timeline, roofline, stages, sources",
                  run_trace);
}  // namespace magpie::cli
