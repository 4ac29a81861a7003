// Gap-analysis outputs: upstream Magpie's CSVs, console summary and result dict, and the API entry
// point run_gap_analysis.
#include <cstdio>

#include "core/csv.h"
#include "core/log.h"
#include "core/strings.h"
#include "source/kernel_sources.h"
#include "trace/api.h"
#include "trace/gap_analysis.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

const std::vector<std::string> k_gap_columns = {"Name", "Calls", "Self CUDA total (us)", "Avg time (us)", "% Total",
                                                "Input Shapes"};

/// One CSV record as Python's csv.writer writes it (QUOTE_MINIMAL, "\r\n").
void csv_line(std::string& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out.push_back(',');
    out += csv_escape(fields[i]);
  }
  out += "\r\n";
}

std::vector<std::string> kernel_cells(const kernel_stat& k, double total) {
  double pct = total > 0 ? k.total_us / total * 100.0 : 0.0;
  return {k.name, std::to_string(k.calls), py_fixed(k.total_us, 2), py_fixed(k.avg_us(), 2), py_fixed(pct, 2),
          k.unique_shapes()};
}

std::string join_list(const std::vector<std::string>& v) { return join(v, ", "); }

}  // namespace

std::string gap_csv(const gap_result& r, const std::vector<std::string>& preamble,
                    const std::vector<std::string>& source_header,
                    const std::vector<std::vector<std::string>>& source_rows) {
  std::string out;
  for (const auto& line : preamble) out += line + "\n";
  std::vector<std::string> header = k_gap_columns;
  header.insert(header.end(), source_header.begin(), source_header.end());
  csv_line(out, header);
  for (size_t i = 0; i < r.merged.size(); ++i) {
    std::vector<std::string> row = kernel_cells(r.merged[i], r.total_us);
    if (i < source_rows.size()) row.insert(row.end(), source_rows[i].begin(), source_rows[i].end());
    csv_line(out, row);
  }
  return out;
}

std::string gap_rank_csv(const rank_result& r) {
  std::string out;
  csv_line(out, k_gap_columns);
  for (const auto& k : r.kernels) csv_line(out, kernel_cells(k, r.total_us));
  return out;
}

std::string gap_console_summary(const gap_result& r, const fs::path& gap_dir) {
  std::string s;
  s += strprintf("\nGap Analysis (%s%%-%s%% window, category-filtered)\n", python_float_repr(r.cfg.trace_start_pct).c_str(),
                 python_float_repr(r.cfg.trace_end_pct).c_str());
  s.append(60, '=');
  s += '\n';
  s += strprintf("Ranks analyzed: %zu\n", r.ranks.size());
  if (r.cfg.categories && !r.cfg.categories->empty()) s += "Categories: " + join_list(*r.cfg.categories) + "\n";
  if (r.cfg.ignore_categories && !r.cfg.ignore_categories->empty())
    s += "Ignore: " + join_list(*r.cfg.ignore_categories) + "\n";
  s += "Total duration: " + py_fixed(r.total_us, 2) + " us\n";
  auto cell = [&s](const std::string& text) {
    s += ' ';
    s += text;
  };
  s += '\n';
  s += py_pad_right("Name", 50);
  cell(py_pad_left("Calls", 6));
  cell(py_pad_left("Self CUDA (us)", 15));
  cell(py_pad_left("Avg (us)", 12));
  cell(py_pad_left("% Total", 8));
  s += '\n';
  s.append(95, '-');
  s += '\n';
  for (const auto& k : r.merged) {
    double pct = r.total_us > 0 ? k.total_us / r.total_us * 100.0 : 0.0;
    std::string name = utf8_length(k.name) <= 50 ? k.name : utf8_prefix(k.name, 47) + "...";
    s += "  ";
    s += py_pad_right(name, 50);
    cell(py_pad_left(std::to_string(k.calls), 6));
    cell(py_pad_left(py_fixed(k.total_us, 2), 15));
    cell(py_pad_left(py_fixed(k.avg_us(), 2), 12));
    cell(py_pad_left(py_fixed(pct, 2), 7));
    s += "%\n";
  }
  s += "\nOutput: " + gap_dir.string() + "\n";
  return s;
}

namespace {

/// Upstream Magpie's gap_analysis.csv with the kernel-source columns (find_kernel_sources).
status_or<std::string> csv_with_sources(const gap_config& cfg, const gap_result& r, std::vector<std::string>* warnings) {
  std::vector<fs::path> roots;
  if (cfg.kernel_source_repos)
    for (const auto& s : *cfg.kernel_source_repos) roots.emplace_back(s);
  std::vector<std::string> names;
  for (const auto& k : r.merged) names.push_back(k.name);
  auto infos = source::find_kernel_sources(names, roots);
  if (!infos.ok()) return infos.get_status();
  const auto& cols = source::kernel_source_csv_columns();
  std::string first = std::to_string(k_gap_columns.size() + 1);
  std::string last = std::to_string(k_gap_columns.size() + cols.size());
  std::vector<std::string> preamble = source::kernel_source_csv_preamble(roots, first, last);
  if (preamble.empty())
    preamble.push_back("# Warning: columns " + first + "-" + last + " from find_kernel_sources are experimental.");
  if (roots.empty())
    warnings->push_back("find_kernel_sources without --kernel-source-repos: magpie never clones repositories; "
                        "rows say which repository to pass");
  std::vector<std::vector<std::string>> rows;
  for (const auto& info : *infos) rows.push_back(source::kernel_source_csv_row(info));
  return gap_csv(r, preamble, cols, rows);
}

}  // namespace

status_or<gap_outputs> run_gap_analysis(const gap_config& cfg, const fs::path& trace_dir, const fs::path& out_dir) {
  MAGPIE_RETURN_IF_ERROR(cfg.validate());
  gap_outputs out;
  out.result = analyze_gap(cfg, trace_dir);
  MAGPIE_ASSIGN_OR_RETURN(out.csv_path, write_gap_outputs(out.result, out_dir));
  out.output_dir = out_dir;
  return out;
}

status_or<std::optional<fs::path>> write_gap_outputs(gap_result& r, const fs::path& out_dir) {
  const gap_config& cfg = r.cfg;
  if (r.merged.empty()) return std::optional<fs::path>();
  MAGPIE_RETURN_IF_ERROR(make_dirs(out_dir));
  std::string csv;
  if (cfg.find_kernel_sources) {
    MAGPIE_ASSIGN_OR_RETURN(csv, csv_with_sources(cfg, r, &r.warnings));
  } else {
    csv = gap_csv(r);
  }
  fs::path csv_path = out_dir / "gap_analysis.csv";
  MAGPIE_RETURN_IF_ERROR(write_file_atomic(csv_path, csv));
  MAGPIE_LOG_INFO("Wrote gap analysis CSV: %s", csv_path.c_str());
  if (r.ranks.size() > 1 && cfg.write_rank_csv) {
    for (const auto& rr : r.ranks)
      MAGPIE_RETURN_IF_ERROR(write_file_atomic(out_dir / strprintf("gap_analysis_rank%d.csv", rr.rank), gap_rank_csv(rr)));
  }
  if (cfg.clamped_traces) {
    MAGPIE_ASSIGN_OR_RETURN(r.clamped_traces, write_clamped_traces(cfg, r, out_dir));
  }
  return std::optional<fs::path>(csv_path);
}

}  // namespace magpie::trace
