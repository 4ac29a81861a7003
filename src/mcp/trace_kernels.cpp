// Trace kernel aggregation (see trace_kernels.h).
#include "mcp/trace_kernels.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/strings.h"
#include "source/classify.h"
#include "trace/discovery.h"
#include "trace/reader.h"

namespace magpie::mcp {
namespace {

class name_sink : public trace::event_sink {
 public:
  name_sink(const trace_kernel_options& o, std::unordered_map<std::string, source::kernel_stat>* acc,
            std::unordered_set<std::string>* kernels)
      : m_opts(o), m_acc(acc), m_kernels(kernels) {}
  void on_event(const trace::event_view& e) override {
    if (!e.has_name || e.name.empty() || (!e.ph.empty() && e.ph != "X")) return;
    std::string cat = to_lower(e.cat);
    for (const auto& ig : m_opts.ignore_categories) if (contains(cat, ig)) return;
    if (!m_opts.categories.empty()) {
      bool keep = false;
      for (const auto& c : m_opts.categories) keep = keep || contains(cat, c);
      if (!keep) return;
    }
    auto& s = (*m_acc)[std::string(e.name)];
    if (s.name.empty()) s.name = std::string(e.name);
    if (contains(cat, "kernel")) m_kernels->insert(s.name);
    ++s.calls;
    if (e.has_dur) s.total_us += e.dur;
  }

 private:
  const trace_kernel_options& m_opts;
  std::unordered_map<std::string, source::kernel_stat>* m_acc;
  std::unordered_set<std::string>* m_kernels;  ///< names seen with a "kernel" category
};

}  // namespace

status_or<std::vector<source::kernel_stat>> collect_trace_kernels(const std::vector<fs::path>& inputs,
                                                                  const trace_kernel_options& opts,
                                                                  std::vector<std::string>* warnings) {
  std::vector<fs::path> files;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      auto d = trace::discover_rank_traces(in);
      if (d.files.empty()) return not_found("no trace files found in '%s'", in.c_str());
      for (const auto& f : d.files) files.push_back(f.path);
    } else if (fs::exists(in, ec)) {
      files.push_back(in);
    } else {
      return not_found("trace '%s' does not exist", in.c_str());
    }
  }
  std::unordered_map<std::string, source::kernel_stat> acc;
  std::unordered_set<std::string> kernels;
  name_sink sink(opts, &acc, &kernels);
  for (const auto& f : files) {
    auto st = trace::read_trace(f, sink);
    if (!st.ok()) return st.get_status();
    if (!st->complete && warnings) warnings->push_back(f.string() + ": " + st->error);
  }
  std::vector<source::kernel_stat> out;
  out.reserve(acc.size());
  for (auto& [k, v] : acc) {
    // The top k are kernels: copies and fills (gpu_memcpy / gpu_memset events, runtime blits
    // such as Memset or __amd_rocclr_copyBuffer) are neither counted nor listed.
    if (opts.top_k > 0 && (!kernels.count(k) || source::is_runtime_operation(k))) continue;
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.total_us != b.total_us ? a.total_us > b.total_us : a.name < b.name;
  });
  if (opts.top_k > 0 && out.size() > opts.top_k) out.resize(opts.top_k);
  return out;
}

}  // namespace magpie::mcp
