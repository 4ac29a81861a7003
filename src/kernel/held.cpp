// The reference's results held by the supervisor, and the trial-by-trial comparison of a
// candidate's manifest against them (docs/harness-protocol.md, "Correctness mode").
#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "kernel/correctness.h"

namespace magpie::kernel {

namespace {

struct loaded_trial {
  std::vector<tensor> pre, post, out;
  std::string error;
};

// Reads the trial's files; a missing file leaves an empty tensor and sets `error`.
loaded_trial load(const manifest_trial& t, bool with_inputs) {
  loaded_trial l;
  auto get = [&](const fs::path& p, dtype type, std::vector<tensor>& into) {
    if (p.empty()) {
      into.push_back(tensor{});
      return;
    }
    auto r = read_npy(p, &type);
    if (!r.ok()) {
      if (l.error.empty()) l.error = r.get_status().message();
      into.push_back(tensor{});
      return;
    }
    into.push_back(std::move(r).value());
  };
  if (with_inputs) {
    for (const auto& in : t.inputs) {
      get(in.pre, in.type, l.pre);
      get(in.post, in.type, l.post);
    }
  }
  for (const auto& o : t.outputs) get(o.file, o.type, l.out);
  return l;
}

input_digest digest_of(const manifest_tensor& mt, const tensor& t, bool post) {
  input_digest d;
  d.present = !(post ? mt.post : mt.pre).empty();
  if (d.present) d.value = tensor_digest(t);
  return d;
}

void remove_trial_files(const manifest_trial& t) {
  std::error_code ec;
  for (const auto& in : t.inputs) {
    if (!in.pre.empty()) fs::remove(in.pre, ec);
    if (!in.post.empty()) fs::remove(in.post, ec);
  }
  for (const auto& o : t.outputs)
    if (!o.file.empty()) fs::remove(o.file, ec);
}

held_trial hold_trial(const manifest_trial& t) {
  held_trial h;
  h.meta = t;
  loaded_trial l = load(t, true);
  h.error = l.error;
  for (size_t i = 0; i < t.inputs.size(); ++i) {
    h.pre.push_back(digest_of(t.inputs[i], l.pre[i], false));
    h.post.push_back(digest_of(t.inputs[i], l.post[i], true));
  }
  for (size_t o = 0; o < l.out.size(); ++o) {
    std::vector<bool> eq;
    for (const auto& in : l.pre) eq.push_back(same_values(l.out[o], in));
    h.output_equals_input.push_back(std::move(eq));
  }
  h.outputs = std::move(l.out);
  return h;
}

std::string describe(const tensor_diff& d) {
  if (d.nan_mismatch)
    return strprintf("output %s: NaN/inf pattern differs from the reference at %zu of %zu elements (first at index %lld)",
                     d.name.c_str(), d.nan_mismatch, d.numel, static_cast<long long>(d.first_bad));
  return strprintf("output %s: %zu of %zu elements outside atol=%g + rtol=%g*|ref| (max abs err %.3g, first at index %lld: "
                   "reference %.6g, candidate %.6g)",
                   d.name.c_str(), d.mismatches, d.numel, d.atol, d.rtol, d.max_abs, static_cast<long long>(d.first_bad),
                   d.first_ref, d.first_got);
}

void check_inputs(const held_trial& rt, const manifest_trial& ct, const loaded_trial& cl, const correctness_policy& p,
                  trial_verdict* v) {
  if (rt.meta.inputs.size() != ct.inputs.size()) {
    v->failures.push_back(
        strprintf("inputs differ from the reference's: %zu inputs vs %zu", ct.inputs.size(), rt.meta.inputs.size()));
    return;
  }
  for (size_t i = 0; i < ct.inputs.size(); ++i) {
    uint64_t cpre = tensor_digest(cl.pre[i]);
    if (!rt.pre[i].present || rt.pre[i].value != cpre) {
      v->failures.push_back(strprintf("input %s differs from the reference's input %s: the inputs are not identical, "
                                      "so outputs cannot be compared",
                                      ct.inputs[i].name.c_str(), rt.meta.inputs[i].name.c_str()));
      continue;
    }
    if (!p.check_mutation || ct.inputs[i].post.empty() || !rt.post[i].present) continue;
    bool ref_mutates = rt.post[i].value != rt.pre[i].value;
    uint64_t cpost = tensor_digest(cl.post[i]);
    bool cand_mutates = cpost != cpre;
    if (cand_mutates && !ref_mutates)
      v->failures.push_back(strprintf("input %s was modified by the candidate (the reference leaves it unchanged)",
                                      ct.inputs[i].name.c_str()));
    else if (cand_mutates && ref_mutates && cpost != rt.post[i].value)
      v->failures.push_back(strprintf("input %s was modified differently from the reference", ct.inputs[i].name.c_str()));
  }
}

}  // namespace

std::string degenerate_reason(const std::string& name, const tensor& ref, const tensor& got) {
  double cv = 0, rv = 0;
  if (all_zero(got) && !all_zero(ref)) return "output " + name + " is all zeros (degenerate; the reference's is not)";
  if (all_constant(got, &cv) && !all_constant(ref, &rv))
    return strprintf("output %s is the constant %.6g everywhere (degenerate; the reference's is not)", name.c_str(), cv);
  return "";
}

namespace {

void check_held_outputs(const held_trial& rt, const manifest_trial& ct, const loaded_trial& cl, const correctness_policy& p,
                   trial_verdict* v) {
  if (rt.outputs.size() != ct.outputs.size()) {
    v->failures.push_back(strprintf("%zu outputs, the reference has %zu", ct.outputs.size(), rt.outputs.size()));
    return;
  }
  for (size_t o = 0; v->failures.empty() && o < ct.outputs.size(); ++o) {
    const tensor& r = rt.outputs[o];
    const tensor& c = cl.out[o];
    const std::string& name = ct.outputs[o].name;
    if (r.shape != c.shape || r.type != c.type) {
      v->failures.push_back(strprintf("output %s: shape %s dtype %s, the reference has shape %s dtype %s", name.c_str(),
                                      shape_to_string(c.shape).c_str(), dtype_name(c.type),
                                      shape_to_string(r.shape).c_str(), dtype_name(r.type)));
      break;
    }
    if (p.check_degenerate) {
      std::string why = degenerate_reason(name, r, c);
      for (size_t i = 0; why.empty() && i < cl.pre.size(); ++i)
        if (same_values(c, cl.pre[i]) && !(o < rt.output_equals_input.size() && i < rt.output_equals_input[o].size() &&
                                           rt.output_equals_input[o][i]))
          why = "output " + name + " equals input " + ct.inputs[i].name + " (degenerate; the reference's does not)";
      if (!why.empty()) v->failures.push_back(why);
    }
    tensor_diff d = compare_tensor(name, r, c, tolerance_for(r.type, p));
    if (d.mismatches || d.nan_mismatch) v->failures.push_back(describe(d));
    v->outputs.push_back(d);
  }
}

trial_verdict compare_trial(const held_trial& rt, const manifest_trial& ct, const correctness_policy& p) {
  trial_verdict v;
  v.index = ct.index;
  v.seed = ct.seed;
  v.size = ct.size;
  if (!ct.ok) {
    v.passed = false;
    v.failures.push_back("the candidate's launch failed: " + ct.error);
    return v;
  }
  if (ct.seed != rt.meta.seed || ct.size_index != rt.meta.size_index)
    v.failures.push_back(strprintf("trial %d ran seed %llu size %d, the reference's ran seed %llu size %d", ct.index,
                                   static_cast<unsigned long long>(ct.seed), ct.size_index,
                                   static_cast<unsigned long long>(rt.meta.seed), rt.meta.size_index));
  if (!rt.error.empty()) v.failures.push_back("reference files unreadable: " + rt.error);
  loaded_trial cl = load(ct, true);
  if (!cl.error.empty()) v.failures.push_back("candidate files unreadable: " + cl.error);
  if (v.failures.empty()) check_inputs(rt, ct, cl, p, &v);
  if (v.failures.empty()) check_held_outputs(rt, ct, cl, p, &v);
  v.passed = v.failures.empty();
  return v;
}

}  // namespace

const held_trial* held_reference::check_for_seed(uint64_t seed) const {
  for (const auto& c : checks)
    if (c.meta.seed == seed) return &c;
  return nullptr;
}

held_reference hold_reference(const std::string& id, const manifest& m, bool remove_files) {
  held_reference h;
  h.id = id;
  h.harness = m.harness;
  h.device = m.device;
  h.n_sizes = m.n_sizes;
  h.timed_size = m.timed_size;
  for (const auto& t : m.trials) {
    held_trial ht = hold_trial(t);
    for (const auto& o : ht.outputs) h.bytes_held += o.data.size();
    (t.check ? h.checks : h.trials).push_back(std::move(ht));
  }
  if (remove_files) {
    remove_manifest_files(m);
    h.files_removed = true;
  }
  return h;
}

void remove_manifest_files(const manifest& m) {
  for (const auto& t : m.trials) remove_trial_files(t);
}

correctness_verdict compare_to_reference(const held_reference& ref, const manifest& cand, const correctness_policy& p,
                                         bool remove_files) {
  correctness_verdict out;
  out.passed = true;
  std::vector<const manifest_trial*> ct;
  for (const auto& t : cand.trials)
    if (!t.check) ct.push_back(&t);
  if (ct.size() != ref.trials.size()) {
    out.passed = false;
    out.errors.push_back(strprintf("the candidate ran %zu trials, the reference %zu", ct.size(), ref.trials.size()));
    if (remove_files) remove_manifest_files(cand);
    return out;
  }
  double sum_abs = 0, sum_rel = 0;
  size_t n = 0;
  for (size_t i = 0; i < ct.size(); ++i) {
    trial_verdict v = compare_trial(ref.trials[i], *ct[i], p);
    if (remove_files) remove_trial_files(*ct[i]);
    for (const auto& d : v.outputs) {
      out.max_abs = std::max(out.max_abs, d.max_abs);
      out.max_rel = std::max(out.max_rel, d.max_rel);
      sum_abs += d.mean_abs;
      sum_rel += d.mean_rel;
      ++n;
    }
    if (!v.passed) {
      out.passed = false;
      for (const auto& f : v.failures)
        out.errors.push_back(strprintf("trial %d (seed %llu, %s): %s", v.index, static_cast<unsigned long long>(v.seed),
                                       v.size.c_str(), f.c_str()));
    }
    out.trials.push_back(std::move(v));
  }
  if (remove_files) remove_manifest_files(cand);
  out.mean_abs = n ? sum_abs / static_cast<double>(n) : 0;
  out.mean_rel = n ? sum_rel / static_cast<double>(n) : 0;
  return out;
}

}  // namespace magpie::kernel
