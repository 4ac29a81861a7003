// Kernel-source report formatting (see report.h).
#include "source/report_printer.h"

#include <set>

#include "core/csv.h"
#include "core/json_schema.h"
#include "core/strings.h"
#include "source/repo_index.h"

namespace magpie::source {
namespace {

/// Spreadsheet column letters for 0-based index i ("A", …, "Z", "AA", …).
std::string column_letter(size_t i) {
  std::string s;
  for (++i; i > 0; i = (i - 1) / 26) s.insert(s.begin(), static_cast<char>('A' + (i - 1) % 26));
  return s;
}

}  // namespace

json kernel_source_to_json(const kernel_source_info& info) {
  json j = json::object();
  j["name"] = info.name;
  auto cols = kernel_source_csv_columns();
  auto row = kernel_source_csv_row(info);
  for (size_t i = 0; i < cols.size(); ++i) j[cols[i]] = row[i];
  j["confidence"] = info.confidence;
  j["symbol"] = info.symbol;
  j["demangled"] = info.demangled;
  j["line"] = info.line;
  j["candidates"] = info.candidates;
  j["functor_sources"] = info.functor_sources;
  j["definition_kind"] = info.definition_kind;
  j["macro_definition"] = info.macro_definition;
  j["alternatives"] = info.alternatives;
  return j;
}

json kernel_source_schema() {
  using namespace schema;
  json p = {{"name", typed("string", "kernel name as given")}};
  for (const auto& c : kernel_source_csv_columns()) p[c] = typed("string", "Magpie's column " + c);
  p["confidence"] = typed("number", "0-1: 1 exact unique symbol match");
  p["symbol"] = typed("string", "function looked up");
  p["demangled"] = typed("string", "normalised name used for matching");
  p["line"] = typed("integer", "definition line (0: unresolved)");
  p["candidates"] = list_of(typed("string", "$VAR/relpath:line"), "every matching definition");
  p["functor_sources"] = list_of(typed("string", "qualified::name=$VAR/relpath:line"), "functors in the template arguments");
  p["definition_kind"] = typed("string", "definition | declaration | macro_expansion ('' unresolved)");
  p["macro_definition"] = typed("string", "NAME=$VAR/relpath:line of the #define");
  p["alternatives"] = list_of(typed("string", "name=$VAR/relpath:line"), "other kernels sharing the matched stem");
  p["calls"] = typed("integer", "trace input: launches");
  p["total_us"] = typed_or_null("number", "trace input: summed durations, us");
  std::vector<std::string> req;
  for (auto it = p.begin(); it != p.end(); ++it)
    if (it.key() != "calls" && it.key() != "total_us") req.push_back(it.key());
  return closed(p, req);
}

json kernel_sources_report_schema() {
  using namespace schema;
  json root = closed({{"path", typed("string", "root")}, {"variable", typed("string", "<NAME>_DIR")}});
  json summary = closed({{"total", typed("integer", "kernels")}, {"resolved", typed("integer", "count")},
                         {"candidate", typed("integer", "count below the confidence threshold")},
                         {"unresolved", typed("integer", "count")}, {"unsupported", typed("integer", "count")}});
  return closed({{"roots", list_of(root, "repository roots")}, {"summary", summary},
                 {"kernels", list_of(kernel_source_schema(), "per kernel")}});
}

json kernel_sources_report(const std::vector<kernel_source_info>& infos, const std::vector<kernel_stat>& stats,
                           const std::vector<fs::path>& roots) {
  json j = json::object();
  json jr = json::array();
  std::set<std::string> used;
  for (const auto& r : roots) {
    std::string var = root_variable_for(absolute_path(r)), v = var;
    for (int k = 2; used.count(v); ++k) v = var.substr(0, var.size() - 4) + "_" + std::to_string(k) + "_DIR";
    used.insert(v);
    jr.push_back({{"path", absolute_path(r).generic_string()}, {"variable", v}});
  }
  j["roots"] = jr;
  size_t resolved = 0, candidate = 0, unresolved = 0, unsupported = 0;
  json jk = json::array();
  for (size_t i = 0; i < infos.size(); ++i) {
    const auto& info = infos[i];
    resolved += info.source_resolution == "resolved";
    candidate += info.source_resolution == "candidate";
    unresolved += info.source_resolution == "unresolved";
    unsupported += info.source_resolution == "unsupported";
    json k = kernel_source_to_json(info);
    if (i < stats.size()) {
      k["calls"] = stats[i].calls;
      k["total_us"] = json_finite(stats[i].total_us);
    }
    jk.push_back(std::move(k));
  }
  j["summary"] = {{"total", infos.size()}, {"resolved", resolved}, {"candidate", candidate},
                  {"unresolved", unresolved}, {"unsupported", unsupported}};
  j["kernels"] = std::move(jk);
  return j;
}

std::string kernel_sources_csv(const std::vector<kernel_source_info>& infos, const std::vector<kernel_stat>& stats,
                               const std::vector<fs::path>& roots) {
  csv_writer w;
  std::vector<std::string> header{"Name"};
  if (!stats.empty()) {
    header.emplace_back("Calls");
    header.emplace_back("Self CUDA total (us)");
  }
  size_t first = header.size();
  for (const auto& c : kernel_source_csv_columns()) header.push_back(c);
  header.emplace_back("confidence");
  std::string preamble;
  for (const auto& line : kernel_source_csv_preamble(roots, column_letter(first), column_letter(first + 14)))
    preamble += line + "\n";
  w.set_header(header);
  for (size_t i = 0; i < infos.size(); ++i) {
    std::vector<std::string> row{infos[i].name};
    if (!stats.empty()) {
      row.push_back(i < stats.size() ? std::to_string(stats[i].calls) : "");
      row.push_back(i < stats.size() ? fixed(stats[i].total_us, 2) : "");
    }
    for (auto& v : kernel_source_csv_row(infos[i])) row.push_back(std::move(v));
    row.push_back(fixed(infos[i].confidence, 2));
    w.add_row(std::move(row));
  }
  return preamble + w.str();
}

}  // namespace magpie::source
