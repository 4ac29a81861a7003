#include "kernel/cupti_records.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/stats.h"

namespace magpie::kernel {

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int st = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &st);
  if (st != 0 || !d) return name;
  std::string out(d);
  std::free(d);
  return out;
}

void cupti_log::poll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return;
  in.seekg(static_cast<std::streamoff>(m_offset));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  m_offset += chunk.size();
  m_partial += chunk;
  size_t pos = 0;
  for (;;) {
    size_t nl = m_partial.find('\n', pos);
    if (nl == std::string::npos) break;
    std::string line = m_partial.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      ++m_bad_lines;
      continue;
    }
    std::string kind = json_string(j, "kind");
    if (kind == "kernel") {
      cupti_kernel k;
      k.name = json_string(j, "name");
      k.start = j.value("start", uint64_t{0});
      k.end = j.value("end", uint64_t{0});
      k.corr = j.value("corr", uint64_t{0});
      k.device = j.value("device", 0);
      k.stream = j.value("stream", uint64_t{0});
      for (int i = 0; i < 3; ++i) {
        if (j.contains("grid") && j["grid"].is_array() && j["grid"].size() == 3) k.grid[i] = j["grid"][i].get<int>();
        if (j.contains("block") && j["block"].is_array() && j["block"].size() == 3) k.block[i] = j["block"][i].get<int>();
      }
      m_kernels.push_back(k);
    } else if (kind == "extcorr") {
      m_corr_to_sample[j.value("corr", uint64_t{0})] = j.value("id", int64_t{-1});
    } else if (kind == "dropped") {
      m_dropped += j.value("count", uint64_t{0});
    }
  }
  m_partial.erase(0, pos);
}

void cupti_log::join() {
  for (auto& k : m_kernels) {
    if (k.sample >= 0) continue;
    auto it = m_corr_to_sample.find(k.corr);
    if (it != m_corr_to_sample.end()) k.sample = it->second;
  }
}

bool cupti_log::sample_time(uint64_t id, double* span, double* sum, int* count) const {
  uint64_t lo = UINT64_MAX, hi = 0;
  double s = 0;
  int n = 0;
  for (const auto& k : m_kernels) {
    if (k.sample != static_cast<int64_t>(id) || k.end < k.start) continue;
    lo = std::min(lo, k.start);
    hi = std::max(hi, k.end);
    s += static_cast<double>(k.end - k.start);
    ++n;
  }
  if (n == 0) return false;
  *span = static_cast<double>(hi - lo);
  *sum = s;
  *count = n;
  return true;
}

json cupti_log::summary(bool dem, bool sampled_only) const {
  struct agg {
    std::vector<double> d;
    const cupti_kernel* first = nullptr;
  };
  std::map<std::string, agg> by_name;
  for (const auto& k : m_kernels) {
    if (sampled_only && k.sample < 0) continue;
    auto& a = by_name[k.name];
    a.d.push_back(static_cast<double>(k.end - k.start));
    if (!a.first) a.first = &k;
  }
  std::vector<std::pair<std::string, agg>> rows(by_name.begin(), by_name.end());
  auto total = [](const agg& a) {
    double t = 0;
    for (double x : a.d) t += x;
    return t;
  };
  std::sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) { return total(a.second) > total(b.second); });
  json out = json::array();
  for (const auto& [name, a] : rows) {
    auto s = summarize(a.d);
    json r;
    r["kernel_name"] = dem ? demangle(name) : name;
    r["mangled_name"] = name;
    r["dispatch_count"] = a.d.size();
    r["duration_ns"] = {{"avg", s.mean}, {"min", s.min}, {"max", s.max}, {"total", total(a)}, {"median", s.median}};
    r["grid"] = {a.first->grid[0], a.first->grid[1], a.first->grid[2]};
    r["block"] = {a.first->block[0], a.first->block[1], a.first->block[2]};
    out.push_back(r);
  }
  return out;
}

}  // namespace magpie::kernel
