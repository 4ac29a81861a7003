#include "core/compare_report_codec.h"

#include "core/state_row_codec.h"
#include "core/strings.h"

namespace magpie {

namespace {

status read_optional_number(const json_fields& f, const char* key, std::optional<double>* out) {
  const json* v = json_member(f.doc(), key);
  if (v == nullptr || v->is_null()) return ok_status();
  double x = 0;
  MAGPIE_RETURN_IF_ERROR(f.read(key, &x));
  *out = x;
  return ok_status();
}

compare_row_record decode_row(const json& k) {
  compare_row_record c;
  if (const json* extra = json_member(k, "extra"); extra && extra->is_object()) c.kernel_id = json_string(*extra, "kernel_id");
  if (c.kernel_id.empty()) c.kernel_id = json_string(k, "kernel_id");
  c.outcome = row_outcome(k, kernel_outcome::failed);
  c.basis = row_correctness_basis(k, correctness_basis::none);
  if (const json* t = json_member(k, "timing"); t && t->is_object()) {
    if (const json* stats = json_member(*t, "stats_ns"))
      if (auto m = json_as_number(json_value(*stats, "median"))) c.median_ns = *m;
    c.samples = static_cast<int64_t>(json_number(*t, "samples", 0));
  }
  if (const json* errors = json_member(k, "errors"); errors && errors->is_array())
    for (const auto& e : *errors)
      if (c.errors.size() < 3) c.errors.push_back(json_as_string(e).value_or(dump_compact(e)));
  return c;
}

}  // namespace

status_or<verdict_record> decode_verdict(const json_fields& f) {
  MAGPIE_RETURN_IF_ERROR(f.check_object());
  verdict_record v;
  std::string word;
  MAGPIE_RETURN_IF_ERROR(f.require("verdict", &word));
  auto kind = parse_verdict_kind(word);
  if (!kind) return invalid_argument("%s: unknown verdict '%s'", f.field("verdict").c_str(), word.c_str());
  v.verdict = *kind;
  MAGPIE_RETURN_IF_ERROR(f.read("index", &v.index));
  MAGPIE_RETURN_IF_ERROR(f.read("kernel_id", &v.kernel_id));
  MAGPIE_RETURN_IF_ERROR(read_optional_number(f, "speedup_vs_baseline", &v.speedup));
  MAGPIE_RETURN_IF_ERROR(read_optional_number(f, "ci_low", &v.ci_low));
  MAGPIE_RETURN_IF_ERROR(read_optional_number(f, "ci_high", &v.ci_high));
  MAGPIE_RETURN_IF_ERROR(read_optional_number(f, "confidence", &v.confidence));
  MAGPIE_RETURN_IF_ERROR(f.read("interval_df", &v.df));
  MAGPIE_RETURN_IF_ERROR(read_optional_number(f, "median_ns", &v.median_ns));
  MAGPIE_RETURN_IF_ERROR(f.read("reason", &v.reason));
  MAGPIE_RETURN_IF_ERROR(f.read("decide", &v.decide));
  if (const json* band = json_member(f.doc(), "same_band"); band && band->is_object()) {
    json_fields bf = f.child("same_band");
    same_band_record b;
    for (auto [key, to] : {std::pair{"band", &b.band}, {"floor", &b.floor}, {"ceiling", &b.ceiling}, {"aa_sd", &b.aa_sd}})
      MAGPIE_RETURN_IF_ERROR(bf.read(key, to));
    MAGPIE_RETURN_IF_ERROR(bf.read("aa_processes", &b.aa_processes));
    MAGPIE_RETURN_IF_ERROR(bf.read("basis", &b.basis));
    v.same_band = b;
  }
  if (const json* power = json_member(f.doc(), "power"); power && power->is_object()) {
    json_fields pf = f.child("power");
    power_record ps;
    for (auto [key, to] : {std::pair{"difference", &ps.difference}, {"probability", &ps.probability}})
      MAGPIE_RETURN_IF_ERROR(pf.read(key, to));
    MAGPIE_RETURN_IF_ERROR(pf.read("statement", &ps.statement));
    v.power = ps;
  }
  return v;
}

status_or<compare_report_record> decode_compare_report(const json& report, const std::string& where) {
  compare_report_record r;
  const json* res = json_member(report, "results");
  if (res == nullptr || !res->is_object()) return r;
  if (const json* rows = json_member(*res, "kernel_results"); rows && rows->is_array())
    for (const auto& k : *rows) r.rows.push_back(decode_row(k));
  if (const json* verdicts = json_member(*res, "verdicts"); verdicts && verdicts->is_array())
    for (size_t i = 0; i < verdicts->size(); ++i) {
      MAGPIE_ASSIGN_OR_RETURN(verdict_record v,
                              decode_verdict(json_fields((*verdicts)[i], where, strprintf("results.verdicts[%zu]", i))));
      r.verdicts.push_back(std::move(v));
    }
  if (auto ref = json_as_string(json_value(*res, "reference"))) r.reference = *ref;
  return r;
}

const verdict_record* find_verdict(const compare_report_record& r, const std::string& kernel_id) {
  const verdict_record* found = nullptr;
  for (const auto& v : r.verdicts)
    if (v.kernel_id == kernel_id) found = &v;
  return found;
}

}  // namespace magpie
