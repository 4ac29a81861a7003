// Internal to the loop report codec (loop_report_codec.cpp, loop_report_codec_decode.cpp): the
// typed reader of one report object and each block's decoder.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/enum_names.h"
#include "core/json.h"
#include "core/strings.h"
#include "optimize/loop_report.h"

namespace magpie::optimize::loop_report_detail {

inline constexpr std::pair<loop_result, const char*> k_loop_result_names[] = {{loop_result::improved, "improved"},
                                                                         {loop_result::stopped, "stopped"},
                                                                         {loop_result::failed, "failed"},
                                                                         {loop_result::paused, "paused"}};
inline constexpr std::pair<step_status, const char*> k_step_status_names[] = {{step_status::running, "running"},
                                                                         {step_status::ok, "ok"},
                                                                         {step_status::stopped, "stopped"},
                                                                         {step_status::failed, "failed"}};
// ---------------------------------------------------------------- reading
/// One object of the report: typed reads of its fields, errors naming the file and field path.
class report_object {
 public:
  report_object(const json& o, const std::string& where, std::string path) : m_o(o), m_where(where), m_path(std::move(path)) {}
  std::string at(const std::string& key) const { return m_path.empty() ? key : m_path + "." + key; }
  status fail(const std::string& key, const char* what) const {
    return error(status_code::parse_error, "%s: field '%s': %s", m_where.c_str(), at(key).c_str(), what);
  }
  /// An object whose keys are all in `known`.
  status check(std::initializer_list<const char*> known) const {
    if (!m_o.is_object())
      return error(status_code::parse_error, "%s: field '%s': expected an object", m_where.c_str(), m_path.c_str());
    for (auto it = m_o.begin(); it != m_o.end(); ++it)
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; }))
        return fail(it.key(), "unknown field");
    return ok_status();
  }
  bool has(const char* key) const { return m_o.is_object() && m_o.contains(key); }
  const json& value(const char* key) const { return m_o[key]; }
  report_object child(const char* key) const { return {m_o[key], m_where, at(key)}; }
  report_object element(const json& v, const std::string& label) const { return {v, m_where, label}; }
  const std::string& where() const { return m_where; }
  const json& doc() const { return m_o; }

  status str(const char* key, std::string* out) const { return req(key, out, &read_str); }
  status num(const char* key, double* out) const { return req(key, out, &read_num); }
  status integer(const char* key, int64_t* out) const { return req(key, out, &read_int); }
  status integer(const char* key, int* out) const {
    int64_t v = 0;
    MAGPIE_RETURN_IF_ERROR(integer(key, &v));
    *out = static_cast<int>(v);
    return ok_status();
  }
  status boolean(const char* key, bool* out) const { return req(key, out, &read_bool); }
  status strs(const char* key, std::vector<std::string>* out) const { return req(key, out, &read_strs); }
  status raw(const char* key, json* out) const {
    if (!has(key)) return fail(key, "missing");
    *out = m_o[key];
    return ok_status();
  }
  /// A key that must be there, null allowed (nullopt).
  template <typename T>
  status nullable(const char* key, std::optional<T>* out, bool (*conv)(const json&, T*)) const {
    if (!has(key)) return fail(key, "missing");
    return optional(key, out, conv);
  }
  /// A key that may be absent (nullopt; null too).
  template <typename T>
  status optional(const char* key, std::optional<T>* out, bool (*conv)(const json&, T*)) const {
    out->reset();
    if (!has(key) || m_o[key].is_null()) return ok_status();
    T v{};
    if (!conv(m_o[key], &v)) return fail(key, "wrong type");
    *out = std::move(v);
    return ok_status();
  }
  status word_of(const char* key, std::string* out) const { return str(key, out); }

  static bool read_str(const json& v, std::string* o) {
    auto s = json_as_string(v);
    if (s) *o = *s;
    return s.has_value();
  }
  static bool read_num(const json& v, double* o) {
    auto x = v.is_number() ? json_as_number(v) : std::nullopt;
    if (x) *o = *x;
    return x.has_value();
  }
  static bool read_int(const json& v, int64_t* o) {
    auto x = v.is_number_integer() ? json_as_int(v) : std::nullopt;
    if (x) *o = *x;
    return x.has_value();
  }
  static bool read_bool(const json& v, bool* o) {
    if (!v.is_boolean()) return false;
    *o = v.get<bool>();
    return true;
  }
  static bool read_strs(const json& v, std::vector<std::string>* o) {
    if (!v.is_array()) return false;
    o->clear();
    for (const auto& x : v) {
      if (!x.is_string()) return false;
      o->push_back(x.get<std::string>());
    }
    return true;
  }

 private:
  template <typename T>
  status req(const char* key, T* out, bool (*conv)(const json&, T*)) const {
    if (!has(key)) return fail(key, "missing");
    if (!conv(m_o[key], out)) return fail(key, "wrong type");
    return ok_status();
  }
  const json& m_o;
  const std::string& m_where;
  std::string m_path;
};

template <typename E, size_t N>
status read_word(const report_object& o, const char* key, const std::pair<E, const char*> (&table)[N], E* out) {
  std::string w;
  MAGPIE_RETURN_IF_ERROR(o.str(key, &w));
  auto v = enum_parse(table, w);
  if (!v) return o.fail(key, strprintf("unknown word '%s' (expected one of: %s)", w.c_str(), join(enum_words(table), ", ").c_str()).c_str());
  *out = *v;
  return ok_status();
}

status read_word_fn(const report_object& o, const char* key, const std::string& w, bool known, const std::vector<std::string>& words);

template <typename T>
status read_array(const report_object& o, const char* key, std::vector<T>* out,
                  const std::function<status(const report_object&, T*)>& fn) {
  if (!o.has(key)) return o.fail(key, "missing");
  const json& a = o.value(key);
  if (!a.is_array()) return o.fail(key, "expected an array");
  out->clear();
  for (size_t i = 0; i < a.size(); ++i) {
    T v{};
    MAGPIE_RETURN_IF_ERROR(fn(o.element(a[i], strprintf("%s[%zu]", o.at(key).c_str(), i)), &v));
    out->push_back(std::move(v));
  }
  return ok_status();
}

/// Each member of the object under `key` decoded by `fn(name, fields, out)`, in file order.
template <typename T>
status read_members(const report_object& o, const char* key, std::vector<T>* out,
                    const std::function<status(const std::string&, const report_object&, T*)>& fn) {
  if (!o.has(key)) return o.fail(key, "missing");
  const json& m = o.value(key);
  if (!m.is_object()) return o.fail(key, "expected an object");
  out->clear();
  for (auto it = m.begin(); it != m.end(); ++it) {
    T v{};
    MAGPIE_RETURN_IF_ERROR(fn(it.key(), o.element(it.value(), o.at(key) + "." + it.key()), &v));
    out->push_back(std::move(v));
  }
  return ok_status();
}

status dec_stop(const report_object& o, stop_reason* s);
status dec_metrics(const report_object& o, run_metrics* m);
status dec_run(const report_object& o, run_record* r);
status dec_step(const std::string& name, const report_object& o, step_record* s);
status dec_command(const report_object& o, command_record* c);
status dec_info(const report_object& o, const char* key, server_info* info);
status dec_server(const report_object& o, server_record* s);
status dec_warmup(const std::string& tag, const report_object& o, warmup_record* w);
status dec_ranked(const report_object& o, ranked_kernel* k);
status dec_candidate(const report_object& o, candidate_result* c);
status dec_gate(const report_object& o, gate_result* g);
status dec_metric_change(const std::string& name, const report_object& o, std::pair<std::string, metric_change>* out);
status dec_external(const report_object& o, external_verdict* v);
status dec_e2e(const report_object& o, e2e_record* e);
status dec_summary_kernel(const report_object& o, summary_kernel* k);
status dec_summary_op(const report_object& o, summary_op* p);
status dec_summary_stage(const std::string& name, const report_object& o, summary_stage* s);
status dec_summary(const report_object& o, analysis_summary* s);
status dec_analysis(const report_object& o, analysis_record* a);
status dec_chosen(const report_object& o, chosen_kernel* c);
status dec_design(const report_object& o, loop_design* d);
status dec_power(const report_object& o, power_statement* p);
status dec_pair(const report_object& o, const char* key, std::pair<double, double>* out);
status dec_prediction(const report_object& o, loop_prediction* p);
status dec_switch(const report_object& o, switch_record* s);
status dec_benchmark(const report_object& o, loop_benchmark* b);

}  // namespace magpie::optimize::loop_report_detail
