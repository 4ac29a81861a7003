#include "trace/discovery.h"

#include <zlib.h>

#include <algorithm>
#include <regex>

#include "core/strings.h"

namespace magpie::trace {
namespace {

std::vector<fs::path> sorted_files(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<fs::path> sorted_dirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// glob "*-rank-*<suffix>" on the file name.
bool matches_rank_glob(const std::string& name, const std::string& suffix) {
  if (!ends_with(name, suffix)) return false;
  size_t pos = name.find("-rank-");
  return pos != std::string::npos && pos + 6 <= name.size() - suffix.size();
}

std::vector<rank_trace> rank_pattern(const fs::path& dir, const std::string& suffix) {
  std::vector<rank_trace> out;
  for (const auto& f : sorted_files(dir)) {
    std::string name = f.filename().string();
    if (!matches_rank_glob(name, suffix)) continue;
    int r = rank_from_magpie_name(name);
    if (r >= 0) out.push_back({r, f});
  }
  return out;
}

void sort_by_rank(std::vector<rank_trace>& v) {
  std::stable_sort(v.begin(), v.end(), [](const rank_trace& a, const rank_trace& b) { return a.rank < b.rank; });
}

std::vector<rank_trace> fallback(const fs::path& dir, std::vector<std::string>* skipped) {
  std::vector<fs::path> cands;
  auto files = sorted_files(dir);
  for (const auto& f : files)
    if (ends_with(f.filename().string(), ".json.gz")) cands.push_back(f);
  for (const auto& f : files) {
    std::string n = f.filename().string();
    if (ends_with(n, ".json")) cands.push_back(f);
  }
  std::vector<rank_trace> out;
  static const std::regex k_rank(R"(rank[-_]?(\d+))");
  int idx = 0;
  for (const auto& f : cands) {
    std::string name = f.filename().string();
    if (contains(name, "_docker.log") || contains(to_lower(name), "async_llm")) continue;
    int position = idx++;
    if (!looks_like_trace(f)) {
      if (skipped) skipped->push_back(name);
      continue;
    }
    std::smatch m;
    int rank = std::regex_search(name, m, k_rank) ? std::stoi(m[1].str()) : position;
    out.push_back({rank, f});
  }
  return out;
}

/// Rank of a rank_<N> / rank<N> / rank-<N> / pp<i>_dp<j>_tp<N> directory name, or -1.
int rank_from_dir_name(const std::string& name) {
  static const std::regex k_rank_dir(R"(^rank[-_]?(\d+)$)");
  static const std::regex k_pp_dp_tp(R"(^pp\d+_dp\d+_tp(\d+)$)");
  std::smatch m;
  if (std::regex_match(name, m, k_rank_dir) || std::regex_match(name, m, k_pp_dp_tp)) return std::stoi(m[1].str());
  return -1;
}

/// Rules 1 and 2 inside one directory (both suffixes together).
std::vector<rank_trace> flat(const fs::path& dir, std::string* rule) {
  auto gz = rank_pattern(dir, ".pt.trace.json.gz");
  auto js = rank_pattern(dir, ".pt.trace.json");
  *rule = gz.empty() ? (js.empty() ? "" : "rank_json") : (js.empty() ? "rank_gz" : "rank_gz+json");
  gz.insert(gz.end(), js.begin(), js.end());
  return gz;
}

bool preferred(const fs::path& f, const std::vector<std::string>& prefer) {
  for (const auto& p : prefer) {
    std::error_code ec;
    if (p == f.filename().string() || p == f.string() || fs::equivalent(fs::path(p), f, ec)) return true;
  }
  return false;
}

/// Keeps one file per rank: the only one, or the preferred one; other ranks go to duplicates.
void resolve_duplicates(discovery& d, const std::vector<std::string>& prefer) {
  std::vector<rank_trace> kept;
  for (size_t i = 0; i < d.files.size();) {
    size_t j = i;
    while (j < d.files.size() && d.files[j].rank == d.files[i].rank) ++j;
    if (j - i == 1) {
      kept.push_back(d.files[i]);
    } else {
      std::vector<std::string> names;
      const rank_trace* chosen = nullptr;
      for (size_t k = i; k < j; ++k) {
        names.push_back(d.files[k].path.filename().string());
        if (preferred(d.files[k].path, prefer)) chosen = chosen ? nullptr : &d.files[k];
      }
      std::string list = join(names, ", ");
      if (chosen) {
        kept.push_back(*chosen);
        d.notes.push_back(strprintf("rank %d: %s chosen by --rank-file among %s", chosen->rank,
                                    chosen->path.filename().c_str(), list.c_str()));
      } else {
        d.duplicates.push_back(strprintf("rank %d: %s", d.files[i].rank, list.c_str()));
      }
    }
    i = j;
  }
  d.files = std::move(kept);
}

}  // namespace

int rank_from_magpie_name(const std::string& file_name) {
  static const std::regex k_rank(R"(-rank-(\d+)\.)");
  std::smatch m;
  if (std::regex_search(file_name, m, k_rank)) return std::stoi(m[1].str());
  return -1;
}

bool looks_like_trace(const fs::path& file) {
  gzFile gz = gzopen(file.c_str(), "rb");  // reads plain files transparently
  if (!gz) return false;
  std::string head(256u << 10, '\0');
  int n = gzread(gz, head.data(), static_cast<unsigned>(head.size()));
  gzclose(gz);
  if (n <= 0) return false;
  head.resize(static_cast<size_t>(n));
  size_t i = head.find_first_not_of(" \t\r\n");
  if (i == std::string::npos) return false;
  if (head[i] == '[') return true;
  return head[i] == '{' && head.find("\"traceEvents\"") != std::string::npos;
}

std::string discovery::summary() const {
  std::string s = strprintf("Found %zu trace file(s) in %s", files.size(), trace_dir.c_str());
  if (!rule.empty()) s += " (" + rule + ")";
  for (size_t i = 0; i < files.size(); ++i)
    s += strprintf("%s rank %d %s", i ? "," : ":", files[i].rank, files[i].path.filename().c_str());
  return s;
}

discovery discover_rank_traces(const fs::path& dir_in, const std::vector<std::string>& prefer) {
  discovery d;
  d.trace_dir = dir_in;
  std::error_code ec;
  if (fs::is_directory(dir_in / "torch_trace", ec)) d.trace_dir = dir_in / "torch_trace";
  if (!fs::is_directory(d.trace_dir, ec)) return d;
  d.files = flat(d.trace_dir, &d.rule);
  if (d.files.empty()) {
    for (const auto& sub : sorted_dirs(d.trace_dir)) {
      int r = rank_from_dir_name(sub.filename().string());
      if (r < 0) continue;
      std::string rule;
      auto inner = flat(sub, &rule);
      if (inner.empty()) inner = fallback(sub, &d.skipped);
      for (auto& t : inner) d.files.push_back({r, t.path});
    }
    if (!d.files.empty()) d.rule = "subdirs";
  }
  if (d.files.empty()) {
    d.files = fallback(d.trace_dir, &d.skipped);
    if (!d.files.empty()) d.rule = "fallback";
  }
  sort_by_rank(d.files);
  resolve_duplicates(d, prefer);
  return d;
}

}  // namespace magpie::trace
