#include "kernel/correctness.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/strings.h"

namespace magpie::kernel {

json tensor_diff::to_json() const {
  json j = {{"name", name}, {"dtype", dtype}, {"shape", shape}, {"numel", numel}, {"mismatches", mismatches},
            {"nan_pattern_mismatches", nan_mismatch}, {"max_abs_err", max_abs}, {"mean_abs_err", mean_abs},
            {"max_rel_err", max_rel}, {"mean_rel_err", mean_rel}, {"atol", atol}, {"rtol", rtol}};
  if (first_bad >= 0) j["first_mismatch"] = {{"index", first_bad}, {"reference", json_finite(first_ref)}, {"candidate", json_finite(first_got)}};
  return j;
}

json trial_verdict::to_json() const {
  json o = json::array();
  for (const auto& d : outputs) o.push_back(d.to_json());
  return {{"index", index}, {"seed", seed}, {"size", size}, {"passed", passed}, {"failures", failures}, {"outputs", o}};
}

json correctness_verdict::to_json() const {
  json t = json::array();
  for (const auto& x : trials) t.push_back(x.to_json());
  return {{"passed", passed}, {"max_abs_err", max_abs}, {"max_rel_err", max_rel}, {"mean_abs_err", mean_abs},
          {"mean_rel_err", mean_rel}, {"trials", t}};
}

tolerance tolerance_for(dtype t, const correctness_policy& p) {
  switch (t) {
    case dtype::f32: return p.fp32;
    case dtype::f16: return p.fp16;
    case dtype::bf16: return p.bf16;
    case dtype::f64: return p.fp64;
    default: return {0, 0};
  }
}

tensor_diff compare_tensor(const std::string& name, const tensor& ref, const tensor& got, const tolerance& tol) {
  tensor_diff d;
  d.name = name;
  d.dtype = dtype_name(got.type);
  d.shape = got.shape;
  d.numel = got.numel();
  d.atol = tol.atol;
  d.rtol = tol.rtol;
  if (ref.shape != got.shape || ref.type != got.type) return d;  // caller reports the mismatch
  double sum_abs = 0, sum_rel = 0;
  size_t finite = 0, rel_n = 0;
  for (size_t i = 0; i < d.numel; ++i) {
    double r = ref.at(i), c = got.at(i);
    bool rn = std::isnan(r), cn = std::isnan(c);
    bool bad = false;
    if (rn || cn) {
      bad = rn != cn;
      if (bad) ++d.nan_mismatch;
    } else if (std::isinf(r) || std::isinf(c)) {
      bad = r != c;
      if (bad) ++d.nan_mismatch;
    } else {
      double a = std::fabs(c - r);
      ++finite;
      sum_abs += a;
      d.max_abs = std::max(d.max_abs, a);
      if (r != 0) {
        double rel = a / std::fabs(r);
        sum_rel += rel;
        ++rel_n;
        d.max_rel = std::max(d.max_rel, rel);
      }
      bad = a > tol.atol + tol.rtol * std::fabs(r);
      if (bad) ++d.mismatches;
    }
    if (bad && d.first_bad < 0) {
      d.first_bad = static_cast<int64_t>(i);
      d.first_ref = r;
      d.first_got = c;
    }
  }
  d.mean_abs = finite ? sum_abs / static_cast<double>(finite) : 0;
  d.mean_rel = rel_n ? sum_rel / static_cast<double>(rel_n) : 0;
  return d;
}

bool all_zero(const tensor& t) {
  for (size_t i = 0; i < t.numel(); ++i)
    if (t.at(i) != 0.0) return false;
  return t.numel() > 0;
}

bool all_constant(const tensor& t, double* value) {
  if (t.numel() < 2) return false;
  double v0 = t.at(0);
  for (size_t i = 1; i < t.numel(); ++i) {
    double v = t.at(i);
    if (!(v == v0 || (std::isnan(v) && std::isnan(v0)))) return false;
  }
  if (value) *value = v0;
  return true;
}

bool same_values(const tensor& a, const tensor& b) {
  if (a.numel() != b.numel() || a.numel() == 0) return false;
  for (size_t i = 0; i < a.numel(); ++i) {
    double x = a.at(i), y = b.at(i);
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

bool same_bytes(const tensor& a, const tensor& b) {
  return a.type == b.type && a.shape == b.shape && a.data == b.data;
}

namespace {

struct loaded_trial {
  std::vector<tensor> pre, post, out;
  std::string error;
};

loaded_trial load(const manifest_trial& t) {
  loaded_trial l;
  auto get = [&](const fs::path& p, dtype type, std::vector<tensor>& into) {
    if (p.empty()) return;
    auto r = read_npy(p, &type);
    if (!r.ok()) {
      if (l.error.empty()) l.error = r.get_status().message();
      into.push_back(tensor{});
      return;
    }
    into.push_back(std::move(r).value());
  };
  for (const auto& in : t.inputs) {
    get(in.pre, in.type, l.pre);
    get(in.post, in.type, l.post);
  }
  for (const auto& o : t.outputs) get(o.file, o.type, l.out);
  return l;
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

void check_inputs(const manifest_trial& rt, const manifest_trial& ct, const loaded_trial& rl, const loaded_trial& cl,
                  const correctness_policy& p, trial_verdict* v) {
  if (rt.inputs.size() != ct.inputs.size()) {
    v->failures.push_back(strprintf("inputs differ from the reference's: %zu inputs vs %zu", ct.inputs.size(), rt.inputs.size()));
    return;
  }
  for (size_t i = 0; i < rt.inputs.size() && i < rl.pre.size() && i < cl.pre.size(); ++i) {
    if (!same_bytes(rl.pre[i], cl.pre[i])) {
      v->failures.push_back(strprintf("input %s differs from the reference's input %s: the inputs are not identical, "
                                      "so outputs cannot be compared",
                                      ct.inputs[i].name.c_str(), rt.inputs[i].name.c_str()));
      continue;
    }
    if (!p.check_mutation || i >= rl.post.size() || i >= cl.post.size()) continue;
    bool ref_mutates = !same_bytes(rl.pre[i], rl.post[i]);
    bool cand_mutates = !same_bytes(cl.pre[i], cl.post[i]);
    if (cand_mutates && !ref_mutates)
      v->failures.push_back(strprintf("input %s was modified by the candidate (the reference leaves it unchanged)",
                                      ct.inputs[i].name.c_str()));
    else if (cand_mutates && ref_mutates && !same_values(rl.post[i], cl.post[i]))
      v->failures.push_back(strprintf("input %s was modified differently from the reference", ct.inputs[i].name.c_str()));
  }
}

void check_degenerate(const manifest_trial& ct, const loaded_trial& rl, const loaded_trial& cl, size_t o,
                      trial_verdict* v) {
  const tensor& r = rl.out[o];
  const tensor& c = cl.out[o];
  const std::string& name = ct.outputs[o].name;
  double cv = 0, rv = 0;
  if (all_zero(c) && !all_zero(r)) {
    v->failures.push_back("output " + name + " is all zeros (degenerate; the reference's is not)");
    return;
  }
  if (all_constant(c, &cv) && !all_constant(r, &rv)) {
    v->failures.push_back(strprintf("output %s is the constant %.6g everywhere (degenerate; the reference's is not)",
                                    name.c_str(), cv));
    return;
  }
  for (size_t i = 0; i < cl.pre.size(); ++i) {
    if (same_values(c, cl.pre[i]) && !(i < rl.pre.size() && same_values(r, rl.pre[i]))) {
      v->failures.push_back("output " + name + " equals input " + ct.inputs[i].name +
                            " (degenerate; the reference's does not)");
      return;
    }
  }
}

trial_verdict compare_trial(const manifest_trial& rt, const manifest_trial& ct, const correctness_policy& p) {
  trial_verdict v;
  v.index = ct.index;
  v.seed = ct.seed;
  v.size = ct.size;
  if (!ct.ok) {
    v.passed = false;
    v.failures.push_back("the candidate's launch failed: " + ct.error);
    return v;
  }
  loaded_trial rl = load(rt), cl = load(ct);
  if (!rl.error.empty()) v.failures.push_back("reference files unreadable: " + rl.error);
  if (!cl.error.empty()) v.failures.push_back("candidate files unreadable: " + cl.error);
  if (v.failures.empty()) check_inputs(rt, ct, rl, cl, p, &v);
  if (v.failures.empty() && rt.outputs.size() != ct.outputs.size())
    v.failures.push_back(strprintf("%zu outputs, the reference has %zu", ct.outputs.size(), rt.outputs.size()));
  for (size_t o = 0; v.failures.empty() && o < ct.outputs.size(); ++o) {
    const tensor& r = rl.out[o];
    const tensor& c = cl.out[o];
    if (r.shape != c.shape || r.type != c.type) {
      v.failures.push_back(strprintf("output %s: shape %s dtype %s, the reference has shape %s dtype %s",
                                     ct.outputs[o].name.c_str(), shape_to_string(c.shape).c_str(), dtype_name(c.type),
                                     shape_to_string(r.shape).c_str(), dtype_name(r.type)));
      break;
    }
    if (p.check_degenerate) check_degenerate(ct, rl, cl, o, &v);
    tensor_diff d = compare_tensor(ct.outputs[o].name, r, c, tolerance_for(r.type, p));
    if (d.mismatches || d.nan_mismatch) v.failures.push_back(describe(d));
    v.outputs.push_back(d);
  }
  v.passed = v.failures.empty();
  return v;
}

}  // namespace

correctness_verdict compare_to_reference(const manifest& ref, const manifest& cand, const correctness_policy& p) {
  correctness_verdict out;
  out.passed = true;
  if (cand.trials.size() != ref.trials.size()) {
    out.passed = false;
    out.errors.push_back(strprintf("the candidate ran %zu trials, the reference %zu", cand.trials.size(), ref.trials.size()));
    return out;
  }
  double sum_abs = 0, sum_rel = 0;
  size_t n = 0;
  for (size_t i = 0; i < cand.trials.size(); ++i) {
    trial_verdict v = compare_trial(ref.trials[i], cand.trials[i], p);
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
  out.mean_abs = n ? sum_abs / static_cast<double>(n) : 0;
  out.mean_rel = n ? sum_rel / static_cast<double>(n) : 0;
  return out;
}

}  // namespace magpie::kernel
