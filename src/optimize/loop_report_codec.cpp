// loop_report.json ⇄ optimize::loop_report. Encoders write each block's keys in the order the
// loop always wrote them; decoders refuse unknown and missing fields and unknown state words,
// naming the file and the field (e.g. "kernel.kernels[0].verdict").
#include "optimize/loop_report_codec.h"

#include <algorithm>
#include <functional>
#include <initializer_list>

#include "core/enum_names.h"
#include "core/strings.h"
#include "optimize/decide_printer.h"
#include "optimize/measure_printer.h"
#include "optimize/server_info_codec.h"

namespace magpie::optimize {

namespace {

constexpr std::pair<loop_result, const char*> k_loop_result_names[] = {{loop_result::improved, "improved"},
                                                                         {loop_result::stopped, "stopped"},
                                                                         {loop_result::failed, "failed"},
                                                                         {loop_result::paused, "paused"}};
constexpr std::pair<step_status, const char*> k_step_status_names[] = {{step_status::running, "running"},
                                                                         {step_status::ok, "ok"},
                                                                         {step_status::stopped, "stopped"},
                                                                         {step_status::failed, "failed"}};
const char* const k_metric_keys[] = {"output_throughput", "request_throughput", "total_token_throughput", "completed", "failed",
                                     "duration_s", "tpot_mean_ms", "tpot_median_ms", "ttft_mean_ms", "itl_mean_ms", "e2el_mean_ms"};

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

status read_word_fn(const report_object& o, const char* key, const std::string& w, bool known, const std::vector<std::string>& words) {
  if (known) return ok_status();
  return o.fail(key, strprintf("unknown word '%s' (expected one of: %s)", w.c_str(), join(words, ", ").c_str()).c_str());
}

/// Each element of the array under `key` decoded by `fn` (element path "key[i]").
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

// ---------------------------------------------------------------- blocks: decode
status dec_stop(const report_object& o, stop_reason* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"code", "category", "message", "details"}));
  std::string category;
  MAGPIE_RETURN_IF_ERROR(o.str("code", &s->code));
  MAGPIE_RETURN_IF_ERROR(o.str("category", &category));  // derived from the code
  MAGPIE_RETURN_IF_ERROR(o.str("message", &s->message));
  return o.raw("details", &s->details);
}

status dec_metrics(const report_object& o, run_metrics* m) {
  if (!o.doc().is_object()) return o.fail("", "expected an object");
  for (auto it = o.doc().begin(); it != o.doc().end(); ++it) {
    if (std::none_of(std::begin(k_metric_keys), std::end(k_metric_keys), [&](const char* k) { return it.key() == k; }))
      return o.fail(it.key(), "unknown field");
    if (it.value().is_null()) continue;
    double x = 0;
    if (!report_object::read_num(it.value(), &x)) return o.fail(it.key(), "wrong type");
    (*m)[it.key()] = x;
  }
  return ok_status();
}

status dec_run(const report_object& o, run_record* r) {
  MAGPIE_RETURN_IF_ERROR(o.check({"workspace", "url", "server", "metrics", "fingerprint", "fingerprint_parts"}));
  MAGPIE_RETURN_IF_ERROR(o.str("workspace", &r->workspace));
  MAGPIE_RETURN_IF_ERROR(o.str("url", &r->url));
  MAGPIE_RETURN_IF_ERROR(o.str("server", &r->server));
  if (!o.has("metrics")) return o.fail("metrics", "missing");
  MAGPIE_RETURN_IF_ERROR(dec_metrics(o.child("metrics"), &r->metrics));
  MAGPIE_RETURN_IF_ERROR(o.str("fingerprint", &r->fp.total));
  if (!o.has("fingerprint_parts") || !o.value("fingerprint_parts").is_object()) return o.fail("fingerprint_parts", "expected an object");
  report_object parts = o.child("fingerprint_parts");
  for (auto it = parts.doc().begin(); it != parts.doc().end(); ++it)
    MAGPIE_RETURN_IF_ERROR(parts.str(it.key().c_str(), &r->fp.parts[it.key()]));
  return ok_status();
}

status dec_step(const std::string& name, const report_object& o, step_record* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"status", "seconds", "stop", "error", "resumed"}));
  s->name = name;
  MAGPIE_RETURN_IF_ERROR(read_word(o, "status", k_step_status_names, &s->status));
  MAGPIE_RETURN_IF_ERROR(o.optional("seconds", &s->seconds, &report_object::read_num));
  if (o.has("stop")) {
    stop_reason st;
    MAGPIE_RETURN_IF_ERROR(dec_stop(o.child("stop"), &st));
    s->stop = std::move(st);
  }
  MAGPIE_RETURN_IF_ERROR(o.optional("error", &s->error, &report_object::read_str));
  std::optional<bool> resumed;
  MAGPIE_RETURN_IF_ERROR(o.optional("resumed", &resumed, &report_object::read_bool));
  s->resumed = resumed.value_or(false);
  return ok_status();
}

status dec_command(const report_object& o, command_record* c) {
  MAGPIE_RETURN_IF_ERROR(o.check({"name", "in_process", "argv", "cwd", "env", "rc", "seconds", "stdout", "stderr"}));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &c->name));
  std::optional<bool> in_process;
  MAGPIE_RETURN_IF_ERROR(o.optional("in_process", &in_process, &report_object::read_bool));
  c->in_process = in_process.value_or(false);
  MAGPIE_RETURN_IF_ERROR(o.strs("argv", &c->argv));
  MAGPIE_RETURN_IF_ERROR(o.integer("rc", &c->rc));
  MAGPIE_RETURN_IF_ERROR(o.num("seconds", &c->seconds));
  MAGPIE_RETURN_IF_ERROR(o.optional("stdout", &c->stdout_log, &report_object::read_str));
  if (c->in_process) return ok_status();
  MAGPIE_RETURN_IF_ERROR(o.nullable("cwd", &c->cwd, &report_object::read_str));
  MAGPIE_RETURN_IF_ERROR(o.str("stderr", &c->stderr_log.emplace()));
  if (!c->stdout_log) return o.fail("stdout", "missing");
  if (!o.has("env") || !o.value("env").is_object()) return o.fail("env", "expected an object");
  report_object env = o.child("env");
  for (auto it = env.doc().begin(); it != env.doc().end(); ++it) {
    std::string v;
    MAGPIE_RETURN_IF_ERROR(env.str(it.key().c_str(), &v));
    c->env.emplace_back(it.key(), v);
  }
  return ok_status();
}

status dec_info(const report_object& o, const char* key, server_info* info) {
  if (!o.has(key) || !o.value(key).is_object()) return o.fail(key, "expected an object");
  info->document = o.value(key);
  return ok_status();
}

status dec_server(const report_object& o, server_record* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"tag", "variant", "url", "argv", "log", "ready_s", "info", "exit"}));
  MAGPIE_RETURN_IF_ERROR(o.str("tag", &s->tag));
  MAGPIE_RETURN_IF_ERROR(o.str("variant", &s->variant));
  MAGPIE_RETURN_IF_ERROR(o.str("url", &s->url));
  MAGPIE_RETURN_IF_ERROR(o.strs("argv", &s->argv));
  MAGPIE_RETURN_IF_ERROR(o.str("log", &s->log));
  MAGPIE_RETURN_IF_ERROR(o.num("ready_s", &s->ready_s));
  MAGPIE_RETURN_IF_ERROR(dec_info(o, "info", &s->info));
  return o.nullable("exit", &s->exit, &report_object::read_str);
}

status dec_warmup(const std::string& tag, const report_object& o, warmup_record* w) {
  MAGPIE_RETURN_IF_ERROR(o.check({"workspace", "num_prompts", "duration_s", "output_throughput"}));
  w->tag = tag;
  MAGPIE_RETURN_IF_ERROR(o.str("workspace", &w->workspace));
  MAGPIE_RETURN_IF_ERROR(o.integer("num_prompts", &w->num_prompts));
  MAGPIE_RETURN_IF_ERROR(o.nullable("duration_s", &w->duration_s, &report_object::read_num));
  return o.nullable("output_throughput", &w->output_throughput, &report_object::read_num);
}

status dec_ranked(const report_object& o, ranked_kernel* k) {
  MAGPIE_RETURN_IF_ERROR(o.check({"rank", "name", "calls", "total_us", "avg_us", "pct_total", "kind", "category",
                                  "source_resolution", "source_error", "source_file", "file", "line", "confidence",
                                  "candidates", "registry_symbol", "op", "input_shapes", "disposition", "why"}));
  MAGPIE_RETURN_IF_ERROR(o.integer("rank", &k->rank));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &k->name));
  MAGPIE_RETURN_IF_ERROR(o.integer("calls", &k->calls));
  MAGPIE_RETURN_IF_ERROR(o.num("total_us", &k->total_us));
  MAGPIE_RETURN_IF_ERROR(o.num("avg_us", &k->avg_us));
  MAGPIE_RETURN_IF_ERROR(o.num("pct_total", &k->pct_total));
  for (auto [key, dst] : {std::pair{"kind", &k->kind}, {"category", &k->category}, {"source_resolution", &k->source_resolution},
                          {"source_error", &k->source_error}, {"source_file", &k->source_file}, {"file", &k->file},
                          {"registry_symbol", &k->symbol}, {"op", &k->op}, {"input_shapes", &k->input_shapes}, {"why", &k->why}})
    MAGPIE_RETURN_IF_ERROR(o.str(key, dst));
  MAGPIE_RETURN_IF_ERROR(o.integer("line", &k->line));
  MAGPIE_RETURN_IF_ERROR(o.nullable("confidence", &k->confidence, &report_object::read_num));
  MAGPIE_RETURN_IF_ERROR(o.strs("candidates", &k->candidates));
  std::string w;
  MAGPIE_RETURN_IF_ERROR(o.str("disposition", &w));
  auto d = parse_disposition(w);
  MAGPIE_RETURN_IF_ERROR(read_word_fn(o, "disposition", w, d.has_value(),
                                      {"ours", "external", "ambiguous", "low_confidence", "disagrees"}));
  k->disposition = *d;
  return ok_status();
}

status dec_candidate(const report_object& o, candidate_result* c) {
  MAGPIE_RETURN_IF_ERROR(o.check({"id", "outcome", "correctness_method", "verdict", "speedup", "ci_low", "ci_high", "median_ns",
                                  "samples", "reason", "errors"}));
  MAGPIE_RETURN_IF_ERROR(o.str("id", &c->id));
  std::string w;
  MAGPIE_RETURN_IF_ERROR(o.str("outcome", &w));
  auto oc = parse_kernel_outcome(w);
  MAGPIE_RETURN_IF_ERROR(read_word_fn(o, "outcome", w, oc.has_value(), kernel_outcome_names()));
  c->outcome = *oc;
  MAGPIE_RETURN_IF_ERROR(o.str("correctness_method", &w));
  auto b = parse_correctness_basis(w);
  MAGPIE_RETURN_IF_ERROR(read_word_fn(o, "correctness_method", w, b.has_value(), correctness_basis_names()));
  c->basis = *b;
  MAGPIE_RETURN_IF_ERROR(o.str("verdict", &w));
  if (!w.empty()) {
    c->verdict = parse_verdict_kind(w);
    MAGPIE_RETURN_IF_ERROR(read_word_fn(o, "verdict", w, c->verdict.has_value(), verdict_kind_names()));
  }
  for (auto [key, dst] : {std::pair{"speedup", &c->speedup}, {"ci_low", &c->ci_low}, {"ci_high", &c->ci_high}, {"median_ns", &c->median_ns}})
    MAGPIE_RETURN_IF_ERROR(o.nullable(key, dst, &report_object::read_num));
  MAGPIE_RETURN_IF_ERROR(o.integer("samples", &c->samples));
  MAGPIE_RETURN_IF_ERROR(o.str("reason", &c->reason));
  return o.strs("errors", &c->errors);
}

status dec_gate(const report_object& o, gate_result* g) {
  MAGPIE_RETURN_IF_ERROR(o.check({"baseline_id", "reference", "kernels", "winner", "impl", "speedup", "ci_low", "ci_high",
                                  "baseline_median_ns", "winner_median_ns"}));
  MAGPIE_RETURN_IF_ERROR(o.str("baseline_id", &g->baseline_id));
  std::optional<std::string> ref;
  MAGPIE_RETURN_IF_ERROR(o.nullable("reference", &ref, &report_object::read_str));
  g->reference = ref.value_or("");
  MAGPIE_RETURN_IF_ERROR(read_array<candidate_result>(o, "kernels", &g->kernels, dec_candidate));
  if (!o.has("winner")) return ok_status();
  winner w;
  MAGPIE_RETURN_IF_ERROR(o.str("winner", &w.id));
  MAGPIE_RETURN_IF_ERROR(o.str("impl", &w.impl));
  MAGPIE_RETURN_IF_ERROR(o.num("speedup", &w.speedup));
  MAGPIE_RETURN_IF_ERROR(o.num("ci_low", &w.ci_low));
  MAGPIE_RETURN_IF_ERROR(o.num("ci_high", &w.ci_high));
  MAGPIE_RETURN_IF_ERROR(o.nullable("baseline_median_ns", &w.baseline_median_ns, &report_object::read_num));
  MAGPIE_RETURN_IF_ERROR(o.nullable("winner_median_ns", &w.winner_median_ns, &report_object::read_num));
  g->win = std::move(w);
  return ok_status();
}

status dec_metric_change(const std::string& name, const report_object& o, std::pair<std::string, metric_change>* out) {
  out->first = name;
  metric_change& c = out->second;
  MAGPIE_RETURN_IF_ERROR(o.boolean("tested", &c.tested));
  int64_t nb = 0, na = 0;
  MAGPIE_RETURN_IF_ERROR(o.integer("n_before", &nb));
  MAGPIE_RETURN_IF_ERROR(o.integer("n_after", &na));
  c.n_before = static_cast<size_t>(nb), c.n_after = static_cast<size_t>(na);
  if (!c.tested) return o.check({"tested", "n_before", "n_after"});
  MAGPIE_RETURN_IF_ERROR(o.check({"tested", "before_mean", "before_std", "before_min", "before_max", "before_spread_pct", "after_mean",
                                  "after_std", "after_min", "after_max", "change_pct", "welch_t", "welch_df", "p_value",
                                  "beyond_noise", "better", "mde_pct", "n_before", "n_after"}));
  for (auto [key, dst] : {std::pair{"before_mean", &c.before_mean}, {"before_std", &c.before_std}, {"before_min", &c.before_min},
                          {"before_max", &c.before_max}, {"before_spread_pct", &c.before_spread_pct}, {"after_mean", &c.after_mean},
                          {"after_std", &c.after_std}, {"after_min", &c.after_min}, {"after_max", &c.after_max},
                          {"change_pct", &c.change_pct}, {"welch_t", &c.welch_t}, {"welch_df", &c.welch_df},
                          {"p_value", &c.p_value}, {"mde_pct", &c.mde_pct}})
    MAGPIE_RETURN_IF_ERROR(o.num(key, dst));
  MAGPIE_RETURN_IF_ERROR(o.boolean("beyond_noise", &c.beyond_noise));
  return o.nullable("better", &c.better, &report_object::read_bool);
}

status dec_external(const report_object& o, external_verdict* v) {
  MAGPIE_RETURN_IF_ERROR(o.check({"name", "beyond_noise", "verdict", "change_pct", "basis"}));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &v->name));
  MAGPIE_RETURN_IF_ERROR(o.nullable("beyond_noise", &v->beyond_noise, &report_object::read_bool));
  MAGPIE_RETURN_IF_ERROR(o.str("verdict", &v->verdict));
  MAGPIE_RETURN_IF_ERROR(o.num("change_pct", &v->change_pct));
  return o.str("basis", &v->basis);
}

status dec_e2e(const report_object& o, e2e_record* e) {
  MAGPIE_RETURN_IF_ERROR(o.check({"metrics", "primary_metric", "decision_metrics", "alpha", "results_compare_error",
                                  "magpie_results_compare", "magpie_results_compare_all", "store_hash_warning"}));
  std::vector<std::pair<std::string, metric_change>> ms;
  using named_change = std::pair<std::string, metric_change>;
  MAGPIE_RETURN_IF_ERROR(read_members<named_change>(o, "metrics", &ms, dec_metric_change));
  for (auto& [k, c] : ms) e->metrics[k] = c;
  MAGPIE_RETURN_IF_ERROR(o.str("primary_metric", &e->primary_metric));
  MAGPIE_RETURN_IF_ERROR(o.strs("decision_metrics", &e->decision_metrics));
  MAGPIE_RETURN_IF_ERROR(o.num("alpha", &e->alpha));
  MAGPIE_RETURN_IF_ERROR(o.optional("results_compare_error", &e->results_compare_error, &report_object::read_str));
  MAGPIE_RETURN_IF_ERROR(o.optional("store_hash_warning", &e->store_hash_warning, &report_object::read_str));
  if (e->results_compare_error) return ok_status();
  if (!o.has("magpie_results_compare")) return o.fail("magpie_results_compare", "missing");  // derived from _all
  using named_verdict = std::pair<std::string, external_verdict>;
  std::vector<named_verdict> all;
  MAGPIE_RETURN_IF_ERROR(read_members<named_verdict>(
      o, "magpie_results_compare_all", &all, [](const std::string& k, const report_object& f, named_verdict* v) {
        v->first = k;
        return dec_external(f, &v->second);
      }));
  e->results_compare = std::move(all);
  return ok_status();
}

status dec_summary_kernel(const report_object& o, summary_kernel* k) {
  MAGPIE_RETURN_IF_ERROR(o.check({"name", "calls", "total_us", "category", "bound", "pct_roofline"}));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &k->name));
  for (auto [key, dst] : {std::pair{"calls", &k->calls}, {"total_us", &k->total_us}, {"category", &k->category}, {"bound", &k->bound},
                          {"pct_roofline", &k->pct_roofline}})
    MAGPIE_RETURN_IF_ERROR(o.raw(key, dst));
  return ok_status();
}

status dec_summary_op(const report_object& o, summary_op* p) {
  MAGPIE_RETURN_IF_ERROR(o.check({"name", "category", "kernel_time_us_sum", "bound", "pct_roofline_mean"}));
  MAGPIE_RETURN_IF_ERROR(o.str("name", &p->name));
  for (auto [key, dst] : {std::pair{"category", &p->category}, {"kernel_time_us_sum", &p->kernel_time_us_sum}, {"bound", &p->bound},
                          {"pct_roofline_mean", &p->pct_roofline_mean}})
    MAGPIE_RETURN_IF_ERROR(o.raw(key, dst));
  return ok_status();
}

status dec_summary_stage(const std::string& name, const report_object& o, summary_stage* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"step", "why", "error", "roofline_csv", "top"}));
  s->stage = name;
  MAGPIE_RETURN_IF_ERROR(o.raw("step", &s->step));
  MAGPIE_RETURN_IF_ERROR(o.raw("why", &s->why));
  MAGPIE_RETURN_IF_ERROR(o.raw("error", &s->error));
  MAGPIE_RETURN_IF_ERROR(o.str("roofline_csv", &s->roofline_csv));
  using row = std::vector<std::pair<std::string, std::string>>;
  return read_array<row>(o, "top", &s->top, [](const report_object& r, row* out) {
    if (!r.doc().is_object()) return r.fail("", "expected an object");
    for (auto it = r.doc().begin(); it != r.doc().end(); ++it) {
      std::string v;
      MAGPIE_RETURN_IF_ERROR(r.str(it.key().c_str(), &v));
      out->emplace_back(it.key(), v);
    }
    return ok_status();
  });
}

status dec_summary(const report_object& o, analysis_summary* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"gap_csv", "gpu_spec", "gpu_timeline", "top_kernels", "top_ops", "report_error", "stages",
                                  "stages_errors", "sources_summary", "trace"}));
  MAGPIE_RETURN_IF_ERROR(o.str("gap_csv", &s->gap_csv));
  MAGPIE_RETURN_IF_ERROR(o.raw("gpu_spec", &s->gpu_spec));
  MAGPIE_RETURN_IF_ERROR(o.raw("gpu_timeline", &s->gpu_timeline));
  MAGPIE_RETURN_IF_ERROR(read_array<summary_kernel>(o, "top_kernels", &s->top_kernels, dec_summary_kernel));
  MAGPIE_RETURN_IF_ERROR(read_array<summary_op>(o, "top_ops", &s->top_ops, dec_summary_op));
  if (o.has("report_error")) s->report_error = o.value("report_error");
  MAGPIE_RETURN_IF_ERROR(read_members<summary_stage>(o, "stages", &s->stages, dec_summary_stage));
  MAGPIE_RETURN_IF_ERROR(o.raw("stages_errors", &s->stages_errors));
  if (!s->stages_errors.is_array()) return o.fail("stages_errors", "expected an array");
  MAGPIE_RETURN_IF_ERROR(o.raw("sources_summary", &s->sources_summary));
  return o.optional("trace", &s->trace, &report_object::read_str);
}

status dec_analysis(const report_object& o, analysis_record* a) {
  MAGPIE_RETURN_IF_ERROR(o.check({"trace", "window_pct", "window_widened", "gap_csv", "sources_json", "summary"}));
  MAGPIE_RETURN_IF_ERROR(o.str("trace", &a->trace));
  const json w = o.has("window_pct") ? o.value("window_pct") : json();
  if (!w.is_array() || w.size() != 2 || !w[0].is_number() || !w[1].is_number()) return o.fail("window_pct", "expected [start, end]");
  a->window_lo = w[0].get<double>(), a->window_hi = w[1].get<double>();
  MAGPIE_RETURN_IF_ERROR(o.boolean("window_widened", &a->window_widened));
  MAGPIE_RETURN_IF_ERROR(o.str("gap_csv", &a->gap_csv));
  MAGPIE_RETURN_IF_ERROR(o.str("sources_json", &a->sources_json));
  if (!o.has("summary")) return o.fail("summary", "missing");
  return dec_summary(o.child("summary"), &a->summary);
}

status dec_chosen(const report_object& o, chosen_kernel* c) {
  MAGPIE_RETURN_IF_ERROR(o.check({"kernel", "rank", "op", "source_file", "file", "path", "line", "confidence", "total_us", "pct_total",
                                  "calls", "op_share_pct", "op_share_of_ranked_pct", "skipped_above"}));
  for (auto [key, dst] : {std::pair{"kernel", &c->kernel}, {"op", &c->op}, {"source_file", &c->source_file}, {"file", &c->file},
                          {"path", &c->path}})
    MAGPIE_RETURN_IF_ERROR(o.str(key, dst));
  MAGPIE_RETURN_IF_ERROR(o.integer("rank", &c->rank));
  MAGPIE_RETURN_IF_ERROR(o.integer("line", &c->line));
  MAGPIE_RETURN_IF_ERROR(o.nullable("confidence", &c->confidence, &report_object::read_num));
  for (auto [key, dst] : {std::pair{"total_us", &c->total_us}, {"pct_total", &c->pct_total}, {"op_share_pct", &c->op_share_pct},
                          {"op_share_of_ranked_pct", &c->op_share_of_ranked_pct}})
    MAGPIE_RETURN_IF_ERROR(o.num(key, dst));
  MAGPIE_RETURN_IF_ERROR(o.integer("calls", &c->calls));
  return read_array<skipped_kernel>(o, "skipped_above", &c->skipped_above, [](const report_object& f, skipped_kernel* k) {
    MAGPIE_RETURN_IF_ERROR(f.check({"rank", "name", "why"}));
    MAGPIE_RETURN_IF_ERROR(f.integer("rank", &k->rank));
    MAGPIE_RETURN_IF_ERROR(f.str("name", &k->name));
    return f.str("why", &k->why);
  });
}

status dec_design(const report_object& o, loop_design* d) {
  MAGPIE_RETURN_IF_ERROR(o.check({"order", "servers", "sequence", "pairs", "server_starts", "power_history", "seconds",
                                  "max_series_s", "budget_stop"}));
  MAGPIE_RETURN_IF_ERROR(o.str("order", &d->order));
  MAGPIE_RETURN_IF_ERROR(o.str("servers", &d->servers));
  MAGPIE_RETURN_IF_ERROR(o.strs("sequence", &d->sequence));
  MAGPIE_RETURN_IF_ERROR(o.integer("pairs", &d->pairs));
  MAGPIE_RETURN_IF_ERROR(o.integer("server_starts", &d->server_starts));
  MAGPIE_RETURN_IF_ERROR(read_array<power_step>(o, "power_history", &d->power.history, [](const report_object& f, power_step* p) {
    MAGPIE_RETURN_IF_ERROR(f.check({"pairs", "mde_pct"}));
    MAGPIE_RETURN_IF_ERROR(f.integer("pairs", &p->pairs));
    return f.num("mde_pct", &p->mde_pct);
  }));
  MAGPIE_RETURN_IF_ERROR(o.num("seconds", &d->seconds));
  MAGPIE_RETURN_IF_ERROR(o.num("max_series_s", &d->max_series_s));
  return o.optional("budget_stop", &d->power.budget_stop, &report_object::read_str);
}

using named_value = std::pair<std::string, double>;

status dec_power(const report_object& o, power_statement* p) {
  MAGPIE_RETURN_IF_ERROR(o.check({"alpha", "power", "n_per_side", "target_mde_pct", "mde_pct", "reached"}));
  MAGPIE_RETURN_IF_ERROR(o.num("alpha", &p->alpha));
  MAGPIE_RETURN_IF_ERROR(o.num("power", &p->power));
  MAGPIE_RETURN_IF_ERROR(o.integer("n_per_side", &p->n_per_side));
  MAGPIE_RETURN_IF_ERROR(o.num("target_mde_pct", &p->target_mde_pct));
  if (o.has("mde_pct"))
    MAGPIE_RETURN_IF_ERROR(read_members<named_value>(
        o, "mde_pct", &p->mde_pct, [](const std::string& k, const report_object& f, named_value* v) {
          v->first = k;
          return report_object::read_num(f.doc(), &v->second) ? ok_status() : f.fail("", "wrong type");
        }));
  return o.boolean("reached", &p->reached);
}

status dec_pair(const report_object& o, const char* key, std::pair<double, double>* out) {
  const json w = o.has(key) ? o.value(key) : json();
  if (!w.is_array() || w.size() != 2 || !w[0].is_number() || !w[1].is_number()) return o.fail(key, "expected [low, high]");
  *out = {w[0].get<double>(), w[1].get<double>()};
  return ok_status();
}

status dec_prediction(const report_object& o, loop_prediction* p) {
  MAGPIE_RETURN_IF_ERROR(o.check({"op_share_of_gpu_time_pct", "kernel_speedup", "kernel_speedup_ci", "gpu_time_change_pct",
                                  "gpu_time_change_pct_ci", "throughput_change_pct_if_gpu_bound",
                                  "throughput_change_pct_if_gpu_bound_ci", "formula", "measured_change_pct",
                                  "measured_tpot_change_pct"}));
  kernel_prediction& k = p->predicted;
  std::string formula;
  MAGPIE_RETURN_IF_ERROR(o.num("op_share_of_gpu_time_pct", &k.op_share_pct));
  MAGPIE_RETURN_IF_ERROR(o.num("kernel_speedup", &k.speedup));
  MAGPIE_RETURN_IF_ERROR(dec_pair(o, "kernel_speedup_ci", &k.speedup_ci));
  MAGPIE_RETURN_IF_ERROR(o.num("gpu_time_change_pct", &k.gpu_time_change_pct));
  MAGPIE_RETURN_IF_ERROR(dec_pair(o, "gpu_time_change_pct_ci", &k.gpu_time_change_pct_ci));
  MAGPIE_RETURN_IF_ERROR(o.num("throughput_change_pct_if_gpu_bound", &k.throughput_change_pct));
  MAGPIE_RETURN_IF_ERROR(dec_pair(o, "throughput_change_pct_if_gpu_bound_ci", &k.throughput_change_pct_ci));
  MAGPIE_RETURN_IF_ERROR(o.str("formula", &formula));  // a constant sentence
  MAGPIE_RETURN_IF_ERROR(o.num("measured_change_pct", &p->measured_change_pct));
  return o.num("measured_tpot_change_pct", &p->measured_tpot_change_pct);
}

status dec_switch(const report_object& o, switch_record* s) {
  MAGPIE_RETURN_IF_ERROR(o.check({"variant", "control", "servers", "server", "baseline_server", "kernel_spec"}));
  MAGPIE_RETURN_IF_ERROR(o.str("variant", &s->variant));
  MAGPIE_RETURN_IF_ERROR(o.str("control", &s->control));
  MAGPIE_RETURN_IF_ERROR(o.str("servers", &s->servers));
  MAGPIE_RETURN_IF_ERROR(dec_info(o, "server", &s->server));
  if (o.has("baseline_server")) MAGPIE_RETURN_IF_ERROR(dec_info(o, "baseline_server", &s->baseline_server.emplace()));
  if (!o.has("kernel_spec")) return o.fail("kernel_spec", "missing");  // derived from server
  return ok_status();
}

status dec_benchmark(const report_object& o, loop_benchmark* b) {
  if (!o.doc().is_object()) return o.fail("", "expected an object");
  MAGPIE_RETURN_IF_ERROR(o.integer("concurrency", &b->concurrency));
  MAGPIE_RETURN_IF_ERROR(o.num("target_s", &b->target_s));
  MAGPIE_RETURN_IF_ERROR(o.integer("warmup_prompts", &b->warmup_prompts));
  MAGPIE_RETURN_IF_ERROR(o.integer("profile_prompts", &b->profile_prompts));
  b->client = json::object();
  for (auto it = o.doc().begin(); it != o.doc().end(); ++it)
    if (it.key() != "concurrency" && it.key() != "target_s" && it.key() != "warmup_prompts" && it.key() != "profile_prompts")
      b->client[it.key()] = it.value();
  return ok_status();
}

/// Decodes the block `key` of the report when it is there.
template <typename T>
status optional_block(const report_object& r, const char* key, std::optional<T>* out, const std::function<status(const report_object&, T*)>& fn) {
  if (!r.has(key)) return ok_status();
  T v{};
  MAGPIE_RETURN_IF_ERROR(fn(r.child(key), &v));
  *out = std::move(v);
  return ok_status();
}

template <typename T>
status array_optional_block(const report_object& r, const char* key, std::optional<std::vector<T>>* out,
                   const std::function<status(const report_object&, T*)>& fn) {
  if (!r.has(key)) return ok_status();
  std::vector<T> v;
  MAGPIE_RETURN_IF_ERROR(read_array<T>(r, key, &v, fn));
  *out = std::move(v);
  return ok_status();
}

// ---------------------------------------------------------------- blocks: encode
json opt_num_json(const std::optional<double>& v) { return v ? json_finite(*v) : json(nullptr); }

json step_json(const step_record& s) {
  json j = {{"status", step_status_name(s.status)}};
  if (s.seconds) j["seconds"] = *s.seconds;
  if (s.stop) j["stop"] = stop_reason_json(*s.stop);
  if (s.error) j["error"] = *s.error;
  if (s.resumed) j["resumed"] = true;
  return j;
}

json command_json(const command_record& c) {
  if (c.in_process) {
    json j = {{"name", c.name}, {"in_process", true}, {"argv", c.argv}, {"rc", c.rc}, {"seconds", c.seconds}};
    if (c.stdout_log) j["stdout"] = *c.stdout_log;
    return j;
  }
  json env = json::object();
  for (const auto& [k, v] : c.env) env[k] = v;
  return {{"name", c.name}, {"argv", c.argv}, {"cwd", c.cwd ? json(*c.cwd) : json(nullptr)}, {"env", env}, {"rc", c.rc},
          {"seconds", c.seconds}, {"stdout", c.stdout_log.value_or("")}, {"stderr", c.stderr_log.value_or("")}};
}

json server_json(const server_record& s) {
  return {{"tag", s.tag},   {"variant", s.variant}, {"url", s.url},         {"argv", s.argv},
          {"log", s.log},   {"ready_s", s.ready_s}, {"info", s.info.document}, {"exit", s.exit ? json(*s.exit) : json(nullptr)}};
}

json run_json(const run_record& r) {
  return {{"workspace", r.workspace}, {"url", r.url}, {"server", r.server}, {"metrics", metrics_json(r.metrics)},
          {"fingerprint", r.fp.total}, {"fingerprint_parts", fingerprint_json(r.fp)["parts"]}};
}

json runs_json(const std::vector<run_record>& rs) {
  json a = json::array();
  for (const auto& r : rs) a.push_back(run_json(r));
  return a;
}

json summary_json(const analysis_summary& s) {
  json kernels = json::array(), ops = json::array(), stages = json::object();
  for (const auto& k : s.top_kernels)
    kernels.push_back({{"name", k.name}, {"calls", k.calls}, {"total_us", k.total_us}, {"category", k.category}, {"bound", k.bound},
                       {"pct_roofline", k.pct_roofline}});
  for (const auto& o : s.top_ops)
    ops.push_back({{"name", o.name}, {"category", o.category}, {"kernel_time_us_sum", o.kernel_time_us_sum}, {"bound", o.bound},
                   {"pct_roofline_mean", o.pct_roofline_mean}});
  for (const auto& st : s.stages) {
    json top = json::array();
    for (const auto& row : st.top) {
      json r = json::object();
      for (const auto& [k, v] : row) r[k] = v;
      top.push_back(r);
    }
    stages[st.stage] = {{"step", st.step}, {"why", st.why}, {"error", st.error}, {"roofline_csv", st.roofline_csv}, {"top", top}};
  }
  json j = {{"gap_csv", s.gap_csv}, {"gpu_spec", s.gpu_spec}, {"gpu_timeline", s.gpu_timeline}, {"top_kernels", kernels}, {"top_ops", ops}};
  if (s.report_error) j["report_error"] = *s.report_error;
  j["stages"] = stages;
  j["stages_errors"] = s.stages_errors;
  j["sources_summary"] = s.sources_summary;
  if (s.trace) j["trace"] = *s.trace;
  return j;
}

json analysis_json(const analysis_record& a) {
  // The configured window is written as configured (floating point); the widened one as 0, 100.
  json window = a.window_widened ? json::array({0, 100}) : json::array({a.window_lo, a.window_hi});
  return {{"trace", a.trace}, {"window_pct", window}, {"window_widened", a.window_widened}, {"gap_csv", a.gap_csv},
          {"sources_json", a.sources_json}, {"summary", summary_json(a.summary)}};
}

json chosen_json(const chosen_kernel& c) {
  json above = json::array();
  for (const auto& k : c.skipped_above) above.push_back({{"rank", k.rank}, {"name", k.name}, {"why", k.why}});
  return {{"kernel", c.kernel}, {"rank", c.rank}, {"op", c.op}, {"source_file", c.source_file}, {"file", c.file}, {"path", c.path},
          {"line", c.line}, {"confidence", c.confidence ? json(*c.confidence) : json(nullptr)}, {"total_us", c.total_us},
          {"pct_total", c.pct_total}, {"calls", c.calls}, {"op_share_pct", c.op_share_pct},
          {"op_share_of_ranked_pct", c.op_share_of_ranked_pct}, {"skipped_above", above}};
}

json switch_json(const switch_record& s) {
  json j = {{"variant", s.variant}, {"control", s.control}, {"servers", s.servers}, {"server", s.server.document}};
  if (s.baseline_server) j["baseline_server"] = s.baseline_server->document;
  j["kernel_spec"] = kernel_spec_of(s.server, s.variant);
  return j;
}

json design_json(const loop_design& d) {
  json history = json::array();
  for (const auto& p : d.power.history) history.push_back({{"pairs", p.pairs}, {"mde_pct", p.mde_pct}});
  json j = {{"order", d.order}, {"servers", d.servers}, {"sequence", d.sequence}, {"pairs", d.pairs}, {"server_starts", d.server_starts},
            {"power_history", history}, {"seconds", d.seconds}, {"max_series_s", d.max_series_s}};
  if (d.power.budget_stop) j["budget_stop"] = *d.power.budget_stop;
  return j;
}

json power_json(const power_statement& p) {
  json j = {{"alpha", p.alpha}, {"power", p.power}, {"n_per_side", p.n_per_side}, {"target_mde_pct", p.target_mde_pct}};
  for (const auto& [m, v] : p.mde_pct) j["mde_pct"][m] = v;
  j["reached"] = p.reached;
  return j;
}

json e2e_json(const e2e_record& e) {
  json metrics = json::object();
  for (const auto& [k, c] : e.metrics) metrics[k] = metric_change_json(c);
  json j = {{"metrics", metrics}, {"primary_metric", e.primary_metric}, {"decision_metrics", e.decision_metrics}, {"alpha", e.alpha}};
  if (e.results_compare_error) j["results_compare_error"] = *e.results_compare_error;
  if (e.results_compare) {
    json all = json::object();
    for (const auto& [m, v] : *e.results_compare) all[m] = external_verdict_json(v);
    const std::string primary = e.decision_metrics.empty() ? std::string() : e.decision_metrics.front();
    j["magpie_results_compare"] = all.contains(primary) ? all[primary] : json(nullptr);
    j["magpie_results_compare_all"] = all;
  }
  if (e.store_hash_warning) j["store_hash_warning"] = *e.store_hash_warning;
  return j;
}

json prediction_json(const loop_prediction& p) {
  json j = kernel_prediction_json(p.predicted);
  j["measured_change_pct"] = p.measured_change_pct;
  j["measured_tpot_change_pct"] = p.measured_tpot_change_pct;
  return j;
}

json resumed_json(const resumed_record& r) {
  json j = {{"from", r.from}, {"from_step", r.from_step}, {"kept", r.kept}};
  if (r.num_prompts_was) j["num_prompts_was"] = *r.num_prompts_was;
  return j;
}

/// The blocks after `commands`, in the order a run fills them: (key, value or null when absent).
std::vector<std::pair<const char*, std::optional<json>>> step_blocks(const loop_report& r) {
  auto present = [](const auto& v, auto fn) { return v ? std::optional<json>(fn(*v)) : std::nullopt; };
  auto text = [](const std::optional<std::string>& s) { return s ? std::optional<json>(*s) : std::nullopt; };
  auto list = [](const auto& v, auto fn) -> std::optional<json> {
    if (!v) return std::nullopt;
    json a = json::array();
    for (const auto& x : *v) a.push_back(fn(x));
    return a;
  };
  std::optional<json> warmups;
  if (r.warmups) {
    warmups = json::object();
    for (const auto& w : *r.warmups)
      (*warmups)[w.tag] = {{"workspace", w.workspace}, {"num_prompts", w.num_prompts}, {"duration_s", opt_num_json(w.duration_s)},
                           {"output_throughput", opt_num_json(w.output_throughput)}};
  }
  std::optional<json> calibration, profile;
  if (const auto& c = r.calibration) {
    calibration = json{{"num_prompts", c->num_prompts}};
    if (c->probe_workspace) (*calibration)["probe_workspace"] = *c->probe_workspace;
    (*calibration)["how"] = c->how;
  }
  if (const auto& p = r.profile) {
    profile = json::object();
    if (p->workspace) (*profile)["workspace"] = *p->workspace;
    (*profile)["trace"] = p->trace;
    if (p->metrics) (*profile)["metrics"] = metrics_json(*p->metrics);
    if (p->profiling_enabled) (*profile)["profiling_enabled"] = *p->profiling_enabled;
  }
  std::optional<json> inputs;
  if (const auto& in = r.inputs)
    inputs = json{{"fingerprint", in->fingerprint ? json(*in->fingerprint) : json(nullptr)}, {"runs_checked", in->runs_checked}};
  return {{"server_baseline", present(r.server_baseline, [](const server_info& i) { return i.document; })},
          {"servers", list(r.servers, server_json)},
          {"warmups", warmups},
          {"num_prompts", r.num_prompts ? std::optional<json>(*r.num_prompts) : std::nullopt},
          {"calibration", calibration},
          {"initial_runs", present(r.initial_runs, runs_json)},
          {"profile", profile},
          {"analysis", present(r.analysis, analysis_json)},
          {"ranking", list(r.ranking, ranked_kernel_json)},
          {"chosen", present(r.chosen, chosen_json)},
          {"compare_report", text(r.compare_report)},
          {"kernel", present(r.kernel, gate_result_json)},
          {"switch", present(r.switched, switch_json)},
          {"baseline_runs", present(r.baseline_runs, runs_json)},
          {"after_runs", present(r.after_runs, runs_json)},
          {"design", present(r.design, design_json)},
          {"inputs", inputs},
          {"power", present(r.power, power_json)},
          {"prediction", present(r.prediction, prediction_json)},
          {"e2e", present(r.e2e, e2e_json)},
          {"control_result", text(r.control_result)},
          {"error", text(r.error)},
          {"error_code", text(r.error_code)},
          {"paused_after", text(r.paused_after)},
          {"interrupted", text(r.interrupted)},
          {"finished_at", text(r.finished_at)}};
}

}  // namespace

const char* loop_result_name(loop_result r) { return enum_name(k_loop_result_names, r, "failed"); }
std::optional<loop_result> parse_loop_result(std::string_view word) { return enum_parse(k_loop_result_names, word); }
const char* step_status_name(step_status s) { return enum_name(k_step_status_names, s, "failed"); }
std::optional<step_status> parse_step_status(std::string_view word) { return enum_parse(k_step_status_names, word); }

const std::vector<std::string>& step_keys(const std::string& step) {
  static const std::map<std::string, std::vector<std::string>> k = {
      {"start_server", {"server_baseline", "warmups", "servers"}},
      {"calibrate", {"num_prompts", "calibration"}},
      {"baseline_benchmarks", {"initial_runs"}},
      {"profiled_run", {"profile"}},
      {"trace_analysis", {"analysis"}},
      {"choose_kernel", {"ranking", "chosen"}},
      {"compare", {"kernel", "compare_report"}},
      {"switch_in", {"switch"}},
      {"after_benchmarks", {"baseline_runs", "after_runs", "design"}},
      {"inputs_check", {"inputs"}},
      {"e2e", {"e2e", "power", "prediction"}}};
  static const std::vector<std::string> none;
  auto it = k.find(step);
  return it == k.end() ? none : it->second;
}

json loop_report_json(const loop_report& r) {
  json j = json::object();
  auto put_text = [&](const char* k, const std::optional<std::string>& v) {
    if (v) j[k] = *v;
  };
  put_text("schema", r.schema);
  put_text("started_at", r.started_at);
  put_text("name", r.name);
  put_text("magpie", r.magpie);
  put_text("workspace", r.workspace);
  if (r.config) j["config"] = *r.config;
  put_text("control", r.control);
  if (r.runs_per_side) j["runs_per_side"] = *r.runs_per_side;
  if (const auto& b = r.benchmark) {
    json bench = b->client;
    bench["concurrency"] = b->concurrency;
    bench["target_s"] = b->target_s;
    bench["warmup_prompts"] = b->warmup_prompts;
    bench["profile_prompts"] = b->profile_prompts;
    j["benchmark"] = bench;
  }
  json steps = json::object();
  for (const auto& s : r.steps) steps[s.name] = step_json(s);
  j["steps"] = steps;
  j["stop"] = r.stop ? stop_reason_json(*r.stop) : json(nullptr);
  j["outcome"] = r.outcome ? json(loop_result_name(*r.outcome)) : json(nullptr);
  auto blocks = step_blocks(r);
  auto put_block = [&](const std::string& key) {
    for (auto& [k, v] : blocks)
      if (v && key == k) {
        j[k] = std::move(*v);
        v.reset();
      }
  };
  // A resumed report holds the kept steps' blocks first (in each step's key order), as resume
  // copied them before this run's first step.
  if (r.resumed) {
    for (const auto& s : r.resumed->kept)
      for (const auto& k : step_keys(s)) put_block(k);
    j["resumed"] = resumed_json(*r.resumed);
  }
  if (r.progress) j["progress"] = {{"step", r.progress->step}, {"index", r.progress->index}, {"total", r.progress->total}};
  json commands = json::array();
  for (const auto& c : r.commands) commands.push_back(command_json(c));
  j["commands"] = commands;
  for (auto& [k, v] : blocks)
    if (v) j[k] = std::move(*v);
  return j;
}

status_or<loop_report> decode_loop_report(const json& doc, const std::string& where) {
  report_object o(doc, where, "");
  MAGPIE_RETURN_IF_ERROR(o.check({"schema", "started_at", "name", "magpie", "workspace", "config", "control", "runs_per_side",
                                  "benchmark", "steps", "stop", "outcome", "resumed", "progress", "commands", "server_baseline",
                                  "servers", "warmups", "num_prompts", "calibration", "initial_runs", "profile", "analysis",
                                  "ranking", "chosen", "compare_report", "kernel", "switch", "baseline_runs", "after_runs",
                                  "design", "inputs", "power", "prediction", "e2e", "control_result", "error", "error_code",
                                  "paused_after", "interrupted", "finished_at"}));
  loop_report r;
  for (auto [key, dst] : {std::pair{"schema", &r.schema}, {"started_at", &r.started_at}, {"name", &r.name}, {"magpie", &r.magpie},
                          {"workspace", &r.workspace}, {"control", &r.control}, {"compare_report", &r.compare_report},
                          {"control_result", &r.control_result}, {"error", &r.error}, {"error_code", &r.error_code},
                          {"paused_after", &r.paused_after}, {"interrupted", &r.interrupted}, {"finished_at", &r.finished_at}})
    MAGPIE_RETURN_IF_ERROR(o.optional(key, dst, &report_object::read_str));
  if (o.has("config")) r.config = o.value("config");
  MAGPIE_RETURN_IF_ERROR(o.optional("runs_per_side", &r.runs_per_side, &report_object::read_int));
  MAGPIE_RETURN_IF_ERROR(o.optional("num_prompts", &r.num_prompts, &report_object::read_int));
  MAGPIE_RETURN_IF_ERROR(optional_block<loop_benchmark>(o, "benchmark", &r.benchmark, dec_benchmark));
  MAGPIE_RETURN_IF_ERROR(read_members<step_record>(o, "steps", &r.steps, dec_step));
  if (o.has("stop") && !o.value("stop").is_null()) MAGPIE_RETURN_IF_ERROR(dec_stop(o.child("stop"), &r.stop.emplace()));
  if (o.has("outcome") && !o.value("outcome").is_null()) MAGPIE_RETURN_IF_ERROR(read_word(o, "outcome", k_loop_result_names, &r.outcome.emplace()));
  MAGPIE_RETURN_IF_ERROR(optional_block<resumed_record>(o, "resumed", &r.resumed, [](const report_object& f, resumed_record* v) {
    MAGPIE_RETURN_IF_ERROR(f.check({"from", "from_step", "kept", "num_prompts_was"}));
    MAGPIE_RETURN_IF_ERROR(f.str("from", &v->from));
    MAGPIE_RETURN_IF_ERROR(f.str("from_step", &v->from_step));
    MAGPIE_RETURN_IF_ERROR(f.strs("kept", &v->kept));
    return f.optional("num_prompts_was", &v->num_prompts_was, &report_object::read_int);
  }));
  MAGPIE_RETURN_IF_ERROR(optional_block<loop_progress>(o, "progress", &r.progress, [](const report_object& f, loop_progress* p) {
    MAGPIE_RETURN_IF_ERROR(f.check({"step", "index", "total"}));
    MAGPIE_RETURN_IF_ERROR(f.str("step", &p->step));
    MAGPIE_RETURN_IF_ERROR(f.integer("index", &p->index));
    return f.integer("total", &p->total);
  }));
  if (o.has("commands")) MAGPIE_RETURN_IF_ERROR(read_array<command_record>(o, "commands", &r.commands, dec_command));
  if (o.has("server_baseline")) MAGPIE_RETURN_IF_ERROR(dec_info(o, "server_baseline", &r.server_baseline.emplace()));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<server_record>(o, "servers", &r.servers, dec_server));
  if (o.has("warmups")) MAGPIE_RETURN_IF_ERROR(read_members<warmup_record>(o, "warmups", &r.warmups.emplace(), dec_warmup));
  MAGPIE_RETURN_IF_ERROR(optional_block<calibration_record>(o, "calibration", &r.calibration, [](const report_object& f, calibration_record* c) {
    MAGPIE_RETURN_IF_ERROR(f.check({"num_prompts", "probe_workspace", "how"}));
    MAGPIE_RETURN_IF_ERROR(f.integer("num_prompts", &c->num_prompts));
    MAGPIE_RETURN_IF_ERROR(f.optional("probe_workspace", &c->probe_workspace, &report_object::read_str));
    return f.str("how", &c->how);
  }));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<run_record>(o, "initial_runs", &r.initial_runs, dec_run));
  MAGPIE_RETURN_IF_ERROR(optional_block<profile_record>(o, "profile", &r.profile, [](const report_object& f, profile_record* p) {
    MAGPIE_RETURN_IF_ERROR(f.check({"workspace", "trace", "metrics", "profiling_enabled"}));
    MAGPIE_RETURN_IF_ERROR(f.optional("workspace", &p->workspace, &report_object::read_str));
    MAGPIE_RETURN_IF_ERROR(f.str("trace", &p->trace));
    if (f.has("metrics")) MAGPIE_RETURN_IF_ERROR(dec_metrics(f.child("metrics"), &p->metrics.emplace()));
    return f.optional("profiling_enabled", &p->profiling_enabled, &report_object::read_bool);
  }));
  MAGPIE_RETURN_IF_ERROR(optional_block<analysis_record>(o, "analysis", &r.analysis, dec_analysis));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<ranked_kernel>(o, "ranking", &r.ranking, dec_ranked));
  MAGPIE_RETURN_IF_ERROR(optional_block<chosen_kernel>(o, "chosen", &r.chosen, dec_chosen));
  MAGPIE_RETURN_IF_ERROR(optional_block<gate_result>(o, "kernel", &r.kernel, dec_gate));
  MAGPIE_RETURN_IF_ERROR(optional_block<switch_record>(o, "switch", &r.switched, dec_switch));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<run_record>(o, "baseline_runs", &r.baseline_runs, dec_run));
  MAGPIE_RETURN_IF_ERROR(array_optional_block<run_record>(o, "after_runs", &r.after_runs, dec_run));
  MAGPIE_RETURN_IF_ERROR(optional_block<loop_design>(o, "design", &r.design, dec_design));
  MAGPIE_RETURN_IF_ERROR(optional_block<inputs_record>(o, "inputs", &r.inputs, [](const report_object& f, inputs_record* in) {
    MAGPIE_RETURN_IF_ERROR(f.check({"fingerprint", "runs_checked"}));
    MAGPIE_RETURN_IF_ERROR(f.nullable("fingerprint", &in->fingerprint, &report_object::read_str));
    return f.integer("runs_checked", &in->runs_checked);
  }));
  MAGPIE_RETURN_IF_ERROR(optional_block<power_statement>(o, "power", &r.power, dec_power));
  MAGPIE_RETURN_IF_ERROR(optional_block<loop_prediction>(o, "prediction", &r.prediction, dec_prediction));
  MAGPIE_RETURN_IF_ERROR(optional_block<e2e_record>(o, "e2e", &r.e2e, dec_e2e));
  return r;
}

}  // namespace magpie::optimize
