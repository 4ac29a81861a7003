// magpie trace sources: map kernel names to their definitions in repository roots.
#include "cli/trace_sources.h"

#include <cstdio>

#include "cli/cli_common.h"
#include "core/args.h"
#include "core/config.h"
#include "core/csv.h"
#include "core/json.h"
#include "core/log.h"
#include "core/strings.h"
#include "core/utf8.h"
#include "mcp/trace_kernels.h"
#include "source/kernel_sources.h"
#include "source/report_printer.h"

namespace magpie::cli {
namespace {

arg_parser make_parser() {
  arg_parser p("magpie trace sources",
               "Map GPU kernel names (from traces, a gap-analysis CSV or the command line) to the file:line that\n"
               "defines them in the given repository roots, with Magpie's 15 find_kernel_sources columns and a\n"
               "confidence (0-1). Nothing is cloned: pass the checkouts to search with --kernel-source-repos.");
  p.add_positional("TRACE", "trace files (.json/.json.gz) or trace directories (rank discovery as gap analysis)",
                   true)
      .add_multi("--kernel-source-repos", "-r", "DIR", "repository roots to index (repeatable or several values)")
      .add_multi("--kernel", "", "NAME", "a kernel name as it appears in a trace (repeatable)")
      .add_value("--names-file", "", "FILE", "file with one kernel name per line")
      .add_value("--gap-csv", "", "FILE", "a gap_analysis.csv: its Name column is mapped")
      .add_value("--top-k", "-k", "N",
                 "trace input: map only the N kernels with the largest total time, Memcpy/Memset rows neither counted "
                 "nor listed (default 0 = every row)")
      .add_multi("--categories", "", "CAT", "trace input: event category substrings to keep (default kernel gpu_memcpy gpu_memset)")
      .add_value("--output-dir", "-o", "DIR", "write kernel_sources.json and kernel_sources.csv into DIR")
      .add_bool("--json", "", "print the JSON report to stdout instead of the table");
  p.set_epilog(
      "Resolution is fail-closed: 'resolved' only when exactly one definition matches (identical copies count\n"
      "once) with confidence >= 0.7; one match below 0.7 (signature or namespace differs, name prefix only)\n"
      "-> 'candidate' (source_error below_confidence_threshold); namespace and signature both different ->\n"
      "not a match; several -> 'unresolved' with <kind>_source_ambiguous and the candidates; closed-source and\n"
      "library kernels (cuBLAS/nvjet, cuDNN, CUTLASS inside cuBLAS, TensorRT-LLM-gen cubins, Tensile, MIOpen,\n"
      "aiter code objects) and runtime copies -> 'unsupported'. Without a matching root the notes say which\n"
      "repository to pass (docs/source-mapping.md).\n"
      "--json adds definition_kind (definition | declaration | macro_expansion), macro_definition and\n"
      "alternatives (other Triton kernels of a name prefix; copies under test/benchmark/fork paths that a\n"
      "primary definition was preferred over). Times are microseconds.\n"
      "Example: magpie trace sources run.pt.trace.json.gz -r ~/src/pytorch ~/src/vllm -k 20");
  return p;
}

status read_names_file(const fs::path& f, std::vector<std::string>* names) {
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_input_file(f, csv_limits{}.max_bytes, "kernel-names"));
  for (const auto& line : split(text, '\n')) {
    std::string_view t = trim(line);
    if (!t.empty()) names->emplace_back(t);
  }
  return ok_status();
}

status read_gap_csv(const fs::path& f, std::vector<std::string>* names) {
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_input_file(f, csv_limits{}.max_bytes, "CSV"));
  MAGPIE_ASSIGN_OR_RETURN(auto rows, parse_csv(text, true, {}, f.string()));
  if (rows.empty() || rows[0].empty() || rows[0][0] != "Name")
    return invalid_argument("%s: expected a gap_analysis.csv with a 'Name' first column", f.c_str());
  for (size_t i = 1; i < rows.size(); ++i)
    if (!rows[i].empty() && !rows[i][0].empty()) names->push_back(rows[i][0]);
  return ok_status();
}

void print_table(const std::vector<source::kernel_source_info>& infos, const std::vector<source::kernel_stat>& stats) {
  std::printf("%-11s %-11s %4s  %-13s %-60s %s\n", "total_us", "resolution", "conf", "kind", "source / error", "kernel");
  for (size_t i = 0; i < infos.size(); ++i) {
    const auto& k = infos[i];
    std::string where = k.source_resolution == "resolved" || k.source_resolution == "candidate" ? k.source_file
                                                                                                : k.source_error;
    if (k.definition_kind == "macro_expansion") where += " (macro)";
    std::string shown = k.demangled.size() > 70 ? utf8_prefix(k.demangled, 67) + "..." : k.demangled;
    std::printf("%-11s %-11s %4.2f  %-13s %-60s %s\n", i < stats.size() ? fixed(stats[i].total_us, 1).c_str() : "-",
                k.source_resolution.c_str(), k.confidence, k.kind.c_str(), where.c_str(), shown.c_str());
  }
}

}  // namespace

int run_trace_sources(const std::vector<std::string>& args, const global_options& g) {
  (void)g;
  arg_parser p = make_parser();
  if (auto rc = parse_or_exit(p, args)) return *rc;
  auto fail = [](const status& st) {
    std::fprintf(stderr, "magpie trace sources: %s\n", st.message().c_str());
    return k_exit_failure;
  };
  std::vector<std::string> names = p.values("--kernel");
  std::vector<source::kernel_stat> stats;
  if (p.has("--names-file"))
    if (auto st = read_names_file(p.value("--names-file"), &names); !st.ok()) return fail(st);
  if (p.has("--gap-csv"))
    if (auto st = read_gap_csv(p.value("--gap-csv"), &names); !st.ok()) return fail(st);
  if (!p.positionals().empty()) {
    if (!names.empty()) return fail(invalid_argument("give traces or kernel names, not both"));
    mcp::trace_kernel_options opts;
    if (p.has("--categories")) opts.categories = p.values("--categories");
    auto k = p.integer("--top-k", 0);
    if (!k.ok() || *k < 0) return fail(invalid_argument("--top-k must be an integer >= 0"));
    opts.top_k = static_cast<size_t>(*k);
    std::vector<fs::path> inputs(p.positionals().begin(), p.positionals().end());
    std::vector<std::string> warnings;
    auto collected = mcp::collect_trace_kernels(inputs, opts, &warnings);
    if (!collected.ok()) return fail(collected.get_status());
    for (const auto& w : warnings) MAGPIE_LOG_WARN("%s", w.c_str());
    stats = std::move(*collected);
    for (const auto& s : stats) names.push_back(s.name);
  }
  if (names.empty()) return fail(invalid_argument("no kernel names: give TRACE files, --kernel, --names-file or --gap-csv"));
  std::vector<fs::path> roots;
  for (const auto& r : p.values("--kernel-source-repos")) roots.emplace_back(r);
  if (roots.empty()) MAGPIE_LOG_WARN("no --kernel-source-repos given: names are classified only");
  auto infos = source::find_kernel_sources(names, roots);
  if (!infos.ok()) return fail(infos.get_status());
  json report = source::kernel_sources_report(*infos, stats, roots);
  if (p.has("--output-dir")) {
    fs::path out = p.value("--output-dir");
    if (auto st = make_dirs(out); !st.ok()) return fail(st);
    if (auto st = write_json_file(out / "kernel_sources.json", report); !st.ok()) return fail(st);
    if (auto st = write_file_atomic(out / "kernel_sources.csv", source::kernel_sources_csv(*infos, stats, roots));
        !st.ok())
      return fail(st);
    MAGPIE_LOG_INFO("wrote %s/kernel_sources.{json,csv}", out.c_str());
  }
  if (p.has("--json")) std::fputs(dump_pretty(report).c_str(), stdout);
  else print_table(*infos, stats);
  const json s = json_value(report, "summary");
  auto count = [&](const char* k) { return static_cast<long long>(json_int(s, k, 0)); };
  MAGPIE_LOG_INFO("%lld kernels: %lld resolved, %lld candidate, %lld unresolved, %lld unsupported", count("total"),
                  count("resolved"), count("candidate"), count("unresolved"), count("unsupported"));
  return k_exit_ok;
}

}  // namespace magpie::cli
