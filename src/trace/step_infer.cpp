// Steps and phases of a trace without framework step annotations (stages.h): ProfilerStep#N
// ranges, else the model's repeated forward structure; phases from attention query lengths,
// else GEMM token counts; undecided when neither tells prefill from decode.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/strings.h"
#include "trace/perf_model.h"
#include "trace/stages.h"
#include "trace/timeline.h"
#include "trace/util.h"

namespace magpie::trace {
namespace {

bool is_gemm_op(std::string_view n) { return n == "aten::mm" || n == "aten::addmm" || n == "aten::_scaled_mm"; }

/// One element of the sequence searched for the repeated forward: a root op or a kernel.
struct item {
  uint32_t name = k_none;
  int64_t ts = 0, end = 0;
  int64_t gemms = 0;
};

/// Start positions (into `items`) of the repeated forward, or empty with `*why` set. The start
/// op name must repeat k >= 2 times, with no GEMM before its first occurrence and the same
/// number (>= 1) of GEMMs from each occurrence to the next (the last: to the end). Among such
/// names the one with the most GEMMs per step (fewest steps) wins, then the earliest start.
std::vector<size_t> forward_starts(const std::vector<item>& items, std::string* why) {
  std::vector<int64_t> pre(items.size() + 1, 0);
  for (size_t i = 0; i < items.size(); ++i) pre[i + 1] = pre[i] + items[i].gemms;
  const int64_t total = pre.back();
  if (total == 0) {
    *why = "no GEMM ops (aten::mm / addmm / _scaled_mm) to recognise a forward by";
    return {};
  }
  std::unordered_map<uint32_t, std::vector<size_t>> pos;
  for (size_t i = 0; i < items.size(); ++i) pos[items[i].name].push_back(i);
  const std::vector<size_t>* best = nullptr;
  int64_t best_g = 0;
  for (const auto& [name, p] : pos) {
    if (p.size() < 2 || pre[p[0]] != 0) continue;
    int64_t g = total - pre[p.back()];
    if (g < 1 || g * static_cast<int64_t>(p.size()) != total - pre[p[0]]) continue;
    bool uniform = true;
    for (size_t k = 0; k + 1 < p.size() && uniform; ++k) uniform = pre[p[k + 1]] - pre[p[k]] == g;
    if (!uniform) continue;
    if (!best || g > best_g || (g == best_g && p[0] < (*best)[0])) best = &p, best_g = g;
  }
  if (!best) {
    *why = strprintf("no op repeats once per forward (%lld GEMM ops in %zu root ops: no start op splits them evenly)",
                     static_cast<long long>(total), items.size());
    return {};
  }
  return *best;
}

/// Root cpu_ops of the thread that launches most GPU work, with the GEMM ops under each.
std::vector<item> root_items(const trace_model& m) {
  std::unordered_map<uint32_t, int64_t> launches;
  for (uint32_t g : m.gpu)
    if (m.events[g].launcher != k_none) ++launches[m.events[m.events[g].launcher].thread];
  uint32_t main_thread = k_none;
  int64_t most = -1;
  for (const auto& [t, n] : launches)
    if (n > most || (n == most && t < main_thread)) main_thread = t, most = n;
  std::vector<item> items;
  std::unordered_map<uint32_t, size_t> item_of;
  for (uint32_t i : m.cpu_ops) {  // file order; sorted by ts below
    const trace_event& e = m.events[i];
    if (e.parent != k_none || (main_thread != k_none && e.thread != main_thread)) continue;
    item_of[i] = items.size();
    items.push_back({e.name, e.ts, e.end(), 0});
  }
  for (uint32_t i : m.cpu_ops) {
    if (!is_gemm_op(m.name(m.events[i]))) continue;
    uint32_t r = i;
    while (m.events[r].parent != k_none) r = m.events[r].parent;
    if (auto it = item_of.find(r); it != item_of.end()) ++items[it->second].gemms;
  }
  std::stable_sort(items.begin(), items.end(), [](const item& a, const item& b) { return a.ts < b.ts; });
  return items;
}

std::vector<item> kernel_items(const trace_model& m) {
  std::vector<item> items;
  for (uint32_t g : m.gpu) {
    const trace_event& e = m.events[g];
    items.push_back({e.name, e.ts, e.end(), kernel_category(m, e) == "gemm" ? 1 : 0});
  }
  return items;
}

/// Steps from ProfilerStep#N annotations that contain GPU launches (fewer than two: none).
std::vector<step_info> profiler_steps(const trace_model& m) {
  std::vector<step_info> steps;
  for (uint32_t i : m.annotations) {
    const trace_event& e = m.events[i];
    if (!starts_with(m.name(e), "ProfilerStep#")) continue;
    step_info s;
    s.name = m.name(e);
    s.cpu_ts = e.ts;
    s.cpu_end = e.end();
    steps.push_back(std::move(s));
  }
  std::stable_sort(steps.begin(), steps.end(), [](const step_info& a, const step_info& b) { return a.cpu_ts < b.cpu_ts; });
  assign_gpu_by_launch(m, steps);
  size_t with_gpu = std::count_if(steps.begin(), steps.end(), [](const step_info& s) { return !s.gpu.empty(); });
  if (with_gpu < 2) return {};
  return steps;
}

/// Steps [start_k, start_{k+1}) from the forward starts; the last ends at its last item's end.
std::vector<step_info> steps_from_starts(const std::vector<item>& items, const std::vector<size_t>& starts) {
  std::vector<step_info> steps;
  for (size_t k = 0; k < starts.size(); ++k) {
    step_info s;
    s.name = "forward_" + std::to_string(k);
    s.cpu_ts = items[starts[k]].ts;
    if (k + 1 < starts.size()) {
      s.cpu_end = items[starts[k + 1]].ts;
    } else {
      s.cpu_end = s.cpu_ts;
      for (size_t i = starts[k]; i < items.size(); ++i) s.cpu_end = std::max(s.cpu_end, items[i].end);
      ++s.cpu_end;  // ranges are half-open
    }
    steps.push_back(std::move(s));
  }
  return steps;
}

/// What the ops of one step say about its tokens.
struct step_shapes {
  bool attention = false;
  int64_t attn_batch = 0, attn_nq = 0;  ///< of the call with the most query tokens
  std::map<int64_t, int64_t> gemm_m;    ///< GEMM M → number of GEMM ops
  int64_t gemm_tokens() const {         ///< most frequent M (ties: the larger)
    int64_t best = 0, n = 0;
    for (const auto& [mv, c] : gemm_m)
      if (c >= n) best = mv, n = c;
    return best;
  }
};

step_shapes shapes_of(const trace_model& m, const step_info& s) {
  step_shapes sh;
  std::unordered_set<uint32_t> seen;
  for (uint32_t g : s.gpu) {
    for (uint32_t p = m.events[g].op; p != k_none; p = m.events[p].parent) {
      if (!seen.insert(p).second) break;  // this op and its ancestors were looked at already
      const trace_event& e = m.events[p];
      const std::string& n = m.name(e);
      if (is_gemm_op(n)) {
        auto elems = json_array_elements(m.text(m.args(e).dims));
        size_t ia = n == "aten::addmm" ? 1 : 0;
        if (ia < elems.size())
          if (auto a = json_int_list(elems[ia]); a && a->size() == 2) ++sh.gemm_m[(*a)[0]];
      } else if (auto d = attention_dims_of(n, m.text(m.args(e).dims))) {
        if (!sh.attention || d->batch * d->n_q > sh.attn_batch * sh.attn_nq) sh.attn_batch = d->batch, sh.attn_nq = d->n_q;
        sh.attention = true;
      }
    }
  }
  return sh;
}

/// Phases and token counts of inferred steps; sets out.undecided when they cannot be told.
void assign_phases(const trace_model& m, stage_split& out) {
  std::vector<step_shapes> sh;
  bool all_attention = true, all_gemm = true;
  int64_t min_tok = 0, max_tok = 0;
  for (const auto& s : out.steps) {
    sh.push_back(shapes_of(m, s));
    if (s.gpu.empty()) continue;
    all_attention &= sh.back().attention;
    int64_t t = sh.back().gemm_tokens();
    all_gemm &= t > 0;
    if (t > 0) {
      min_tok = min_tok == 0 ? t : std::min(min_tok, t);
      max_tok = std::max(max_tok, t);
    }
  }
  if (all_attention) out.phase_method = "attention";
  else if (all_gemm && max_tok >= 2 * min_tok) out.phase_method = "gemm_tokens";
  else if (all_gemm)
    out.undecided = strprintf("no attention shapes and every step's GEMMs process about %lld tokens",
                              static_cast<long long>(max_tok));
  else
    out.undecided = "no attention or GEMM shapes in some steps (was the trace recorded with record_shapes=True?)";
  for (size_t k = 0; k < out.steps.size(); ++k) {
    step_info& s = out.steps[k];
    if (s.gpu.empty()) {
      s.phase = step_phase::idle;
      continue;
    }
    if (!out.undecided.empty()) {
      s.phase = step_phase::unknown;
      s.batch_size = sh[k].attention ? sh[k].attn_batch * sh[k].attn_nq : sh[k].gemm_tokens();
      continue;
    }
    bool decode;
    if (out.phase_method == "attention") {
      decode = sh[k].attn_nq == 1;
      s.batch_size = sh[k].attn_batch * sh[k].attn_nq;
    } else {
      s.batch_size = sh[k].gemm_tokens();
      decode = s.batch_size < 2 * min_tok;
    }
    s.phase = decode ? step_phase::decode_only : step_phase::prefill_only;
    s.num_requests = decode ? (out.phase_method == "attention" ? sh[k].attn_batch : s.batch_size) : 0;
  }
}

}  // namespace

stage_split infer_steps(const trace_model& m) {
  stage_split out;
  out.steps = profiler_steps(m);
  if (!out.steps.empty()) {
    out.source = "profiler_steps";
    out.notes.push_back(strprintf("no step annotations: %zu ProfilerStep#N ranges used as steps", out.steps.size()));
  } else {
    bool gpu_only = m.cpu_ops.empty();
    std::vector<item> items = gpu_only ? kernel_items(m) : root_items(m);
    std::string why;
    std::vector<size_t> starts = forward_starts(items, &why);
    if (starts.empty()) {
      out.source = "none";
      out.undecided = "no steps found: " + why;
      out.notes.push_back("no step annotations and " + why);
      return out;
    }
    out.source = "forward_pattern";
    out.steps = steps_from_starts(items, starts);
    int64_t per_step = 0;
    for (size_t i = starts.back(); i < items.size(); ++i) per_step += items[i].gemms;
    out.notes.push_back(strprintf("no step annotations: %zu forwards, each starting at '%s' (%s) and holding %lld GEMM %s",
                                  starts.size(), m.strings.str(items[starts[0]].name).c_str(),
                                  gpu_only ? "kernel" : "root cpu_op", static_cast<long long>(per_step),
                                  gpu_only ? "kernels" : "ops"));
    if (gpu_only) {
      for (uint32_t g : m.gpu) {
        auto it = std::upper_bound(out.steps.begin(), out.steps.end(), m.events[g].ts,
                                   [](int64_t t, const step_info& s) { return t < s.cpu_ts; });
        if (it != out.steps.begin() && m.events[g].ts < std::prev(it)->cpu_end) std::prev(it)->gpu.push_back(g);
      }
    } else {
      assign_gpu_by_launch(m, out.steps);
    }
  }
  for (size_t k = 0; k < out.steps.size(); ++k) out.steps[k].idx = k;
  finish_steps(m, out.steps);
  assign_phases(m, out);
  if (!out.undecided.empty()) out.notes.push_back("phases unknown: " + out.undecided + "; no stage is picked");
  else if (out.phase_method == "attention") out.notes.push_back("phases from attention query lengths (N_Q = 1: decode)");
  else out.notes.push_back("phases from GEMM token counts (no attention shapes): M < 2 x the smallest M is decode");
  return out;
}

}  // namespace magpie::trace
