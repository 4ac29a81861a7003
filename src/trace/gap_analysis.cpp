#include "trace/gap_analysis.h"

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <unordered_map>

#include "core/log.h"
#include "core/strings.h"
#include "trace/chunked_store.h"
#include "trace/discovery.h"
#include "trace/health_printer.h"
#include "trace/util.h"

namespace magpie::trace {

// ---------------------------------------------------------------- gap_config

status gap_config::validate() const {
  if (!(trace_start_pct >= 0.0 && trace_start_pct <= 100.0))
    return invalid_argument("trace_start_pct must be 0-100, got %s", python_float_repr(trace_start_pct).c_str());
  if (!(trace_end_pct >= 0.0 && trace_end_pct <= 100.0))
    return invalid_argument("trace_end_pct must be 0-100, got %s", python_float_repr(trace_end_pct).c_str());
  if (trace_start_pct >= trace_end_pct)
    return invalid_argument("trace_start_pct (%s) must be less than trace_end_pct (%s)",
                            python_float_repr(trace_start_pct).c_str(), python_float_repr(trace_end_pct).c_str());
  if (top_k < 1) return invalid_argument("top_k must be >= 1, got %d", top_k);
  if (min_duration_us < 0) return invalid_argument("min_duration_us must be >= 0");
  return ok_status();
}

std::string kernel_stat::unique_shapes() const {
  std::string out;
  for (size_t i = 0; i < shapes.size() && i < 10; ++i) {
    if (i) out += "; ";
    out += shapes[i];
  }
  return out;
}

// ---------------------------------------------------------------- per-rank streaming pass

namespace {

struct candidate {
  uint32_t name;
  bool has_ts, has_ext, has_dur;
  double ts, dur;
  int64_t ext;
};

struct cpu_shape {
  int64_t ext;
  uint32_t shape;  ///< id in the shape interner
  bool has_ts;
  double ts, dur;
};

/// External id -> shape id; of pairs with the same id the last in file order wins (a later
/// cpu_op with the same External id overwrites). Pairs are appended without copying; ids
/// usually come in increasing order and are then searched where they lie.
class shape_by_ext {
 public:
  using pair = std::pair<int64_t, uint32_t>;
  void add(int64_t ext, uint32_t shape) {
    if (!m_pairs.empty() && ext < m_pairs[m_pairs.size() - 1].first) m_sorted = false;
    m_pairs.emplace_back() = pair{ext, shape};
  }
  /// Sorts (stably, only when needed) and keeps the last pair of each id.
  void finish() {
    size_t n = m_pairs.size();
    if (!m_sorted) {
      m_copy.reserve(n);
      for (const pair& p : m_pairs) m_copy.push_back(p);
      std::stable_sort(m_copy.begin(), m_copy.end(), [](const pair& a, const pair& b) { return a.first < b.first; });
    }
    m_n = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i + 1 < n && at(i + 1).first == at(i).first) continue;
      at(m_n++) = at(i);
    }
  }
  const uint32_t* find(int64_t ext) {
    size_t lo = 0, hi = m_n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (at(mid).first < ext) lo = mid + 1;
      else hi = mid;
    }
    return lo < m_n && at(lo).first == ext ? &at(lo).second : nullptr;
  }

 private:
  pair& at(size_t i) { return m_sorted ? m_pairs[i] : m_copy[i]; }
  chunked_store<pair> m_pairs;
  std::vector<pair> m_copy;  ///< sorted copy when the ids came out of order
  bool m_sorted = true;
  size_t m_n = 0;
};

/// Collects what gap analysis needs from one trace; everything else is dropped on the fly.
class gap_sink : public event_sink {
 public:
  explicit gap_sink(const gap_config& cfg) : m_windowed(cfg.trace_start_pct > 0 || cfg.trace_end_pct < 100) {
    if (cfg.categories)
      for (const auto& c : *cfg.categories) m_allow.push_back(lower_ascii(c));
    if (cfg.ignore_categories)
      for (const auto& c : *cfg.ignore_categories) m_deny.push_back(lower_ascii(c));
  }

  void on_top_level(std::string_view key, std::string_view raw) override {
    if (key != "deviceProperties" && key != "distributedInfo") return;
    auto j = parse_json(raw, std::string(key));
    if (!j.ok()) return;
    if (key == "deviceProperties" && j->is_array() && !j->empty() && (*j)[0].is_object())
      m_device = json_string((*j)[0], "name");
    if (key == "distributedInfo" && j->is_object()) {
      if (auto w = json_as_int(json_value(*j, "world_size")); w && json_value(*j, "world_size").is_number_integer()) m_world = *w;
      if (auto r = json_as_int(json_value(*j, "rank")); r && json_value(*j, "rank").is_number_integer()) m_rank = *r;
    }
  }

  void on_event(const event_view& e) override {
    double dur = e.has_dur ? e.dur : 0.0;
    if (e.has_ts && e.has_dur && e.dur > 0) {
      m_t_min = std::min(m_t_min, e.ts);
      m_t_max = std::max(m_t_max, e.ts + e.dur);
    }
    const cat_info& ci = category(e.has_cat ? e.cat : std::string_view());
    if (ci.cpu_op && e.has_external_id && !e.input_dims.empty()) {
      uint32_t shape = shape_of(e.input_dims);
      if (shape != k_no_shape) {
        if (m_windowed) m_cpu.push_back({e.external_id, shape, e.has_ts, e.ts, dur});
        else m_shape_by_ext.add(e.external_id, shape);
      }
    }
    if (!ci.pass) return;
    uint32_t name = m_names.intern(e.has_name ? e.name : std::string_view("<?>"));
    m_cands.emplace_back() = candidate{name, e.has_ts, e.has_external_id, e.has_dur, e.ts, dur, e.external_id};
  }

  /// Applies window, shapes and min duration; aggregates by name.
  void finish(const gap_config& cfg, rank_result* out) {
    out->device_name = m_device;
    out->world_size = m_world;
    out->declared_rank = m_rank;
    out->has_span = m_t_min <= m_t_max;
    out->span_start_us = out->has_span ? m_t_min : 0;
    out->span_end_us = out->has_span ? m_t_max : 0;
    bool windowed = m_windowed && m_t_min <= m_t_max;
    double t_start = 0, t_end = 0;
    if (windowed) {
      double span = m_t_max - m_t_min;
      t_start = m_t_min + span * (cfg.trace_start_pct / 100.0);
      t_end = m_t_min + span * (cfg.trace_end_pct / 100.0);
      for (const auto& c : m_cpu)
        if (c.has_ts && c.ts + c.dur >= t_start && c.ts <= t_end) m_shape_by_ext.add(c.ext, c.shape);
    } else {
      for (const auto& c : m_cpu) m_shape_by_ext.add(c.ext, c.shape);  // window fell back to all events
    }
    m_shape_by_ext.finish();
    std::vector<int32_t> slot(m_names.size(), -1);
    std::vector<kernel_stat>& ks = out->kernels;
    for (const auto& c : m_cands) {
      // Upstream Magpie drops events without ts when it windows (not when it fell back to all events).
      if (windowed && (!c.has_ts || !(c.ts + c.dur >= t_start && c.ts <= t_end))) continue;
      ++out->events_in_window;
      if (cfg.min_duration_us > 0 && !(c.dur >= cfg.min_duration_us)) continue;
      ++out->events_after_filter;
      out->missing_dur += !c.has_dur;
      if (slot[c.name] < 0) {
        slot[c.name] = static_cast<int32_t>(ks.size());
        kernel_stat k;
        k.name = m_names.str(c.name);
        k.min_us = std::numeric_limits<double>::infinity();
        k.max_us = -std::numeric_limits<double>::infinity();
        ks.push_back(std::move(k));
      }
      kernel_stat& k = ks[static_cast<size_t>(slot[c.name])];
      k.total_us += c.dur;
      ++k.calls;
      k.min_us = std::min(k.min_us, c.dur);
      k.max_us = std::max(k.max_us, c.dur);
      if (c.has_ext) {
        if (const uint32_t* shape = m_shape_by_ext.find(c.ext)) add_shape(k, *shape);
      }
    }
    std::stable_sort(ks.begin(), ks.end(), [](const kernel_stat& a, const kernel_stat& b) { return -a.total_us < -b.total_us; });
    for (const auto& k : ks) out->kernel_names.push_back(k.name);
    out->total_us = 0;
    for (const auto& k : ks) out->total_us += k.total_us;
  }

 private:
  static constexpr uint32_t k_no_shape = 0xFFFFFFFFu;
  struct cat_info {
    bool pass = false, cpu_op = false;
  };
  struct hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  /// Classification of a category. The last few are remembered (a trace interleaves a handful
  /// of categories), so most events skip the hash lookup.
  const cat_info& category(std::string_view cat) {
    for (const auto* c : m_recent_cats)
      if (c && cat == c->first) return c->second;
    auto it = m_cats.find(cat);
    if (it != m_cats.end()) return remember(&*it);
    std::string low = lower_ascii(cat);
    cat_info ci;
    ci.cpu_op = contains(low, "cpu_op");
    bool denied = std::any_of(m_deny.begin(), m_deny.end(), [&](const std::string& d) { return contains(low, d); });
    bool allowed = m_allow.empty() ||
                   std::any_of(m_allow.begin(), m_allow.end(), [&](const std::string& a) { return contains(low, a); });
    ci.pass = !denied && allowed;
    return remember(&*m_cats.emplace(std::string(cat), ci).first);
  }
  const cat_info& remember(const std::pair<const std::string, cat_info>* c) {
    m_recent_cats[m_next_recent] = c;
    m_next_recent = (m_next_recent + 1) % m_recent_cats.size();
    return c->second;
  }

  uint32_t shape_of(std::string_view raw) {
    uint32_t raw_id = m_raw_dims.intern(raw);
    if (raw_id >= m_shape_of_raw.size()) {
      std::string s = format_gap_shape(raw);
      m_shape_of_raw.push_back(s.empty() ? k_no_shape : m_shapes.intern(s));
    }
    return m_shape_of_raw[raw_id];
  }

  void add_shape(kernel_stat& k, uint32_t shape) {
    const std::string& s = m_shapes.str(shape);
    if (k.shapes.size() < 64 && std::find(k.shapes.begin(), k.shapes.end(), s) == k.shapes.end()) k.shapes.push_back(s);
  }

  bool m_windowed;
  std::vector<std::string> m_allow, m_deny;
  std::unordered_map<std::string, cat_info, hash, std::equal_to<>> m_cats;
  std::array<const std::pair<const std::string, cat_info>*, 4> m_recent_cats{};  ///< map nodes stay put
  size_t m_next_recent = 0;
  interner m_names, m_raw_dims, m_shapes;
  std::vector<uint32_t> m_shape_of_raw;
  chunked_store<candidate> m_cands;  ///< grows without copying (a large trace has millions)
  std::vector<cpu_shape> m_cpu;
  shape_by_ext m_shape_by_ext;
  std::string m_device;
  int64_t m_world = -1, m_rank = -1;
  double m_t_min = std::numeric_limits<double>::infinity();
  double m_t_max = -std::numeric_limits<double>::infinity();
};

std::vector<kernel_stat> merge_ranks(const std::vector<rank_result>& ranks) {
  std::vector<kernel_stat> merged;
  std::unordered_map<std::string, size_t> slot;
  for (const auto& rr : ranks) {
    for (const auto& k : rr.kernels) {
      auto [it, fresh] = slot.emplace(k.name, merged.size());
      if (fresh) {
        kernel_stat m;
        m.name = k.name;
        m.min_us = k.min_us;
        m.max_us = k.max_us;
        merged.push_back(std::move(m));
      }
      kernel_stat& m = merged[it->second];
      m.total_us += k.total_us;
      m.calls += k.calls;
      m.min_us = std::min(m.min_us, k.min_us);
      m.max_us = std::max(m.max_us, k.max_us);
      for (const auto& s : k.shapes)
        if (m.shapes.size() < 64 && std::find(m.shapes.begin(), m.shapes.end(), s) == m.shapes.end()) m.shapes.push_back(s);
    }
  }
  std::stable_sort(merged.begin(), merged.end(), [](const kernel_stat& a, const kernel_stat& b) { return -a.total_us < -b.total_us; });
  return merged;
}

}  // namespace

status_or<rank_result> analyze_rank(const gap_config& cfg, int rank, const fs::path& trace_file) {
  gap_sink sink(cfg);
  MAGPIE_ASSIGN_OR_RETURN(read_stats st, read_trace(trace_file, sink));
  rank_result rr;
  rr.rank = rank;
  rr.trace_file = trace_file;
  rr.stats = st;
  sink.finish(cfg, &rr);
  rr.health = check_read(st);
  if (rr.missing_dur) {
    read_problem p;
    p.kind = read_problem_kind::counted_missing_dur;
    p.count = rr.missing_dur;
    p.of = rr.events_after_filter;
    rr.health.add(std::move(p));
  }
  return rr;
}

namespace {

/// Warnings when the ranks do not look like one run.
void check_one_run(gap_result& r) {
  if (r.ranks.size() < 2) return;
  const rank_result& r0 = r.ranks[0];
  std::set<std::string> names0(r0.kernel_names.begin(), r0.kernel_names.end());
  for (const auto& rr : r.ranks) {
    std::string who = strprintf("rank %d (%s)", rr.rank, rr.trace_file.filename().c_str());
    if (rr.declared_rank >= 0 && rr.declared_rank != rr.rank)
      r.warnings.push_back(strprintf("%s: the trace says it is rank %lld", who.c_str(), static_cast<long long>(rr.declared_rank)));
    if (&rr == &r0) continue;
    std::string who0 = strprintf("rank %d", r0.rank);
    if (!rr.device_name.empty() && !r0.device_name.empty() && rr.device_name != r0.device_name)
      r.warnings.push_back(who + ": device '" + rr.device_name + "' differs from " + who0 + "'s '" + r0.device_name +
                           "': ranks from different runs?");
    if (rr.world_size >= 0 && r0.world_size >= 0 && rr.world_size != r0.world_size)
      r.warnings.push_back(strprintf("%s: world size %lld differs from %s's %lld: ranks from different runs?", who.c_str(),
                                     static_cast<long long>(rr.world_size), who0.c_str(),
                                     static_cast<long long>(r0.world_size)));
    if (rr.has_span && r0.has_span && (rr.span_end_us < r0.span_start_us || rr.span_start_us > r0.span_end_us))
      r.warnings.push_back(strprintf("%s: its events [%.0f, %.0f] us do not overlap %s's [%.0f, %.0f] us: ranks from "
                                     "different runs?",
                                     who.c_str(), rr.span_start_us, rr.span_end_us, who0.c_str(), r0.span_start_us,
                                     r0.span_end_us));
    size_t shared = 0;
    for (const auto& n : rr.kernel_names) shared += names0.count(n);
    size_t uni = names0.size() + rr.kernel_names.size() - shared;
    if (uni >= 10 && shared * 5 < uni)
      r.warnings.push_back(strprintf("%s: shares %zu of %zu kernel names with %s: a different model or workload?",
                                     who.c_str(), shared, uni, who0.c_str()));
  }
}

void analyze_one(const gap_config& cfg, const rank_trace& f, gap_result& r) {
  auto rr = analyze_rank(cfg, f.rank, f.path);
  std::string who = strprintf("Rank %d (%s)", f.rank, f.path.filename().c_str());
  if (!rr.ok()) {
    r.errors.push_back(strprintf("Failed to analyze rank %d (%s): %s", f.rank, f.path.filename().c_str(),
                                 rr.get_status().message().c_str()));
    read_problem p;
    p.kind = read_problem_kind::rank_unreadable;
    p.detail = rr.get_status().message();
    p.scope = who;
    r.health.add(std::move(p));
    return;
  }
  for (read_problem p : rr->health.problems) {  // a bad rank makes the whole result partial, not unusable
    p.severity = input_status::partial;
    p.scope = who;
    r.health.add(std::move(p));
  }
  std::vector<std::string> texts = problem_texts(rr->health);
  if (rr->health.usable())
    for (const auto& t : texts) r.warnings.push_back(who + ": " + t);
  if (!rr->health.usable()) {
    r.errors.push_back(who + ": " + join(texts, "; ") + " (rank skipped)");
    return;
  }
  r.ranks.push_back(std::move(rr).value());
}

}  // namespace

gap_result analyze_gap(const gap_config& cfg, const fs::path& trace_dir) {
  gap_result r;
  r.cfg = cfg;
  r.trace_dir = trace_dir;
  std::error_code ec;
  if (!fs::exists(trace_dir, ec)) {
    r.errors.push_back("Trace directory not found: " + trace_dir.string());
    return r;
  }
  discovery d;
  if (fs::is_regular_file(trace_dir, ec)) {
    d.trace_dir = trace_dir.parent_path();
    d.rule = "file";
    d.files.push_back({0, trace_dir});
  } else {
    d = discover_rank_traces(trace_dir, cfg.rank_files);
  }
  r.trace_dir = d.trace_dir;
  for (const auto& s : d.skipped) r.warnings.push_back("Skipped (not a torch trace): " + s);
  for (const auto& n : d.notes) r.warnings.push_back(n);
  if (!d.duplicates.empty()) {
    for (const auto& dup : d.duplicates)
      r.errors.push_back("Several trace files claim " + dup + ": pass --rank-file (YAML rank_files) with the one to use");
    return r;
  }
  if (d.files.empty()) {
    r.errors.push_back("No trace files found in " + d.trace_dir.string());
    return r;
  }
  r.discovery_summary = d.summary();
  MAGPIE_LOG_INFO("%s", r.discovery_summary.c_str());
  for (const auto& f : d.files) analyze_one(cfg, f, r);
  check_one_run(r);
  if (!r.ranks.empty()) {
    r.merged = merge_ranks(r.ranks);
    for (const auto& rr : r.ranks) r.total_us += rr.total_us;
    size_t k = static_cast<size_t>(cfg.top_k);
    if (r.merged.size() > k) r.merged.resize(k);
    for (auto& rr : r.ranks)
      if (rr.kernels.size() > k) rr.kernels.resize(k);
  }
  return r;
}

}  // namespace magpie::trace
