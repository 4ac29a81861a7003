// Checks of benchmark configs: env values, ranged fields, client settings, server_lifecycle
// (see bench_config.h and bench_config_fields.h).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/strings.h"
#include "serve/bench_config_fields.h"
#include "serve/http_client.h"

namespace magpie::serve {

namespace {

struct env_rule {
  const char* key;
  bool integer;
  double lo, hi;
  bool lo_open;
  const char* what;
};

// The envs magpie reads itself; anything else is passed to the server untouched.
const env_rule k_env_rules[] = {
    {"TP", true, 1, 4096, false, "tensor-parallel size"},
    {"CONC", true, 1, 10000000, false, "maximum concurrent requests"},
    {"ISL", true, 1, 100000000, false, "input length in tokens"},
    {"OSL", true, 1, 100000000, false, "output length in tokens"},
    {"NUM_PROMPTS", true, 1, 1000000000, false, "number of requests"},
    {"MAX_MODEL_LEN", true, 1, 1000000000, false, "context length in tokens"},
    {"PORT", true, 1, 65535, false, "TCP port"},
    {"RANDOM_RANGE_RATIO", false, 0, 1, false, "length spread ratio"},
    {"GPU_MEM_UTIL", false, 0, 1, true, "fraction of GPU memory"},
    {"GPU_MEMORY_UTILIZATION", false, 0, 1, true, "fraction of GPU memory"},
};

}  // namespace

std::string check_env_value(const std::string& key, const std::string& value) {
  for (const auto& r : k_env_rules) {
    if (key != r.key) continue;
    std::string range = r.integer ? strprintf("an integer in [%.0f, %.0f]", r.lo, r.hi)
                                  : strprintf("a number in %s%g, %g]", r.lo_open ? "(" : "[", r.lo, r.hi);
    std::string v(trim(value));
    if (v.empty()) return "expected " + range + " (" + r.what + "), got an empty value";
    bool ok = false;
    if (r.integer) {
      auto i = parse_int(v);
      ok = i && *i >= r.lo && *i <= r.hi;
    } else {
      auto d = parse_double(v);
      ok = d && std::isfinite(*d) && *d >= r.lo && *d <= r.hi && !(r.lo_open && *d == r.lo);
    }
    return ok ? std::string() : "expected " + range + " (" + r.what + "), got '" + v + "'";
  }
  return {};
}

std::string gpu_memory_utilization(const benchmark_config& c) {
  std::string v = c.env("GPU_MEMORY_UTILIZATION");
  return v.empty() ? c.env("GPU_MEM_UTIL") : v;
}

namespace detail {

status read_int_in(field_reader& r, const char* key, int64_t lo, int64_t hi, int64_t* out) {
  const config_node* n = r.get(key);
  if (!n) return ok_status();
  int64_t v = 0;
  MAGPIE_RETURN_IF_ERROR(r.read_int(key, &v));
  if (v < lo || v > hi)
    return config_error(*n, r.field(key), strprintf("expected an integer in [%lld, %lld], got %lld", static_cast<long long>(lo),
                                                    static_cast<long long>(hi), static_cast<long long>(v)));
  *out = v;
  return ok_status();
}

status read_double_in(field_reader& r, const char* key, double lo, double hi, bool lo_open, double* out) {
  const config_node* n = r.get(key);
  if (!n) return ok_status();
  double v = 0;
  MAGPIE_RETURN_IF_ERROR(r.read_double(key, &v));
  if (!std::isfinite(v) || v < lo || v > hi || (lo_open && v == lo))
    return config_error(*n, r.field(key), strprintf("expected a number in %s%g, %g], got %s", lo_open ? "(" : "[", lo, hi,
                                                    n->text.c_str()));
  *out = v;
  return ok_status();
}

/// Magpie's AgentX capture keys of torch_profiler: validated; flush_timeout_seconds bounds the
/// wait for trace files (trace_wait_s); the capture schedule keys are reported as unused.
status read_agentx_profile_keys(field_reader& t, benchmark_config& c) {
  for (const char* k : {"num_steps", "num_profiles"}) {
    if (!t.get(k)) continue;
    int64_t v = 0;
    MAGPIE_RETURN_IF_ERROR(t.read_int(k, &v));
    if (v < 1) return config_error(*t.get(k), t.field(k), "expected a positive integer");
    c.warnings.push_back(strprintf("benchmark.profiler.torch_profiler.%s is accepted but not used: magpie profiles "
                                   "the measured run (or profile_prompts requests)", k));
  }
  for (const char* k : {"interval_seconds", "start_seconds", "capture_timeout_seconds", "flush_timeout_seconds"}) {
    if (!t.get(k)) continue;
    double v = 0;
    MAGPIE_RETURN_IF_ERROR(t.read_double(k, &v));
    bool positive = std::string(k) == "capture_timeout_seconds" || std::string(k) == "flush_timeout_seconds";
    if (!std::isfinite(v) || v < 0 || (positive && v == 0))
      return config_error(*t.get(k), t.field(k), positive ? "expected a positive number of seconds" : "expected seconds >= 0");
    if (std::string(k) == "flush_timeout_seconds") c.profiler.trace_wait_s = v;
    else
      c.warnings.push_back(strprintf("benchmark.profiler.torch_profiler.%s is accepted but not used: magpie profiles "
                                     "the measured run (or profile_prompts requests)", k));
  }
  if (t.get("detailed_annotations")) {
    bool v = false;
    MAGPIE_RETURN_IF_ERROR(t.read_bool("detailed_annotations", &v));
    if (v) c.warnings.push_back("benchmark.profiler.torch_profiler.detailed_annotations is accepted but not used");
  }
  return ok_status();
}

/// envs: keys upper-cased (Magpie), values checked where magpie knows their meaning.
status read_envs(const config_node& n, benchmark_config& c) {
  if (!n.is_map()) return config_error(n, "benchmark.envs", "expected a mapping of NAME: value");
  for (const auto& [k, v] : n.entries) {
    std::string up = k;
    std::transform(up.begin(), up.end(), up.begin(), [](unsigned char ch) { return std::toupper(ch); });
    std::string field = "benchmark.envs." + k;
    if (v.is_map() || v.is_sequence()) return config_error(v, field, "expected a scalar value");
    if (std::string problem = check_env_value(up, v.text); !problem.empty()) return config_error(v, field, problem);
    c.set_env(up, v.text);
  }
  const std::string a = c.env("GPU_MEM_UTIL"), b = c.env("GPU_MEMORY_UTILIZATION");
  if (!a.empty() && !b.empty() && parse_double(a) != parse_double(b))
    return config_error(n, "benchmark.envs", "GPU_MEM_UTIL (" + a + ") and GPU_MEMORY_UTILIZATION (" + b + ") disagree");
  return ok_status();
}

status read_lifecycle(const config_node& node, lifecycle_settings& l) {
  field_reader r(node, "benchmark.server_lifecycle");
  if (node.is_null()) return ok_status();
  MAGPIE_RETURN_IF_ERROR(r.read_bool("enabled", &l.enabled));
  MAGPIE_RETURN_IF_ERROR(r.read_bool("cleanup", &l.cleanup));
  MAGPIE_RETURN_IF_ERROR(r.read_bool("force_reuse", &l.force_reuse));
  MAGPIE_RETURN_IF_ERROR(r.read_string("pid_dir", &l.pid_dir));
  MAGPIE_RETURN_IF_ERROR(r.read_double("server_ready_timeout_s", &l.server_ready_timeout_s));
  if (!std::isfinite(l.server_ready_timeout_s) || l.server_ready_timeout_s <= 0)
    return config_error(*r.get("server_ready_timeout_s"), r.field("server_ready_timeout_s"), "expected a positive number of seconds");
  return r.check_unknown();
}

status check_gap_analysis(const config_node& g) {
  if (!g.is_map()) return config_error(g, "benchmark.gap_analysis", "expected a mapping");
  field_reader r(g, "benchmark.gap_analysis");
  double start = 0, end = 100, min_dur = 0;
  int64_t top_k = 20;
  MAGPIE_RETURN_IF_ERROR(read_double_in(r, "trace_start_pct", 0, 100, false, &start));
  MAGPIE_RETURN_IF_ERROR(read_double_in(r, "trace_end_pct", 0, 100, false, &end));
  MAGPIE_RETURN_IF_ERROR(read_int_in(r, "top_k", 1, 100000000, &top_k));
  MAGPIE_RETURN_IF_ERROR(read_double_in(r, "min_duration_us", 0, 1e300, false, &min_dur));
  if (start >= end)
    return config_error(r.get("trace_start_pct") ? *r.get("trace_start_pct") : g, "benchmark.gap_analysis.trace_start_pct",
                        strprintf("must be less than trace_end_pct (%g >= %g)", start, end));
  return ok_status();
}

status check_tracelens(const config_node& t) {
  if (!t.is_map()) return config_error(t, "benchmark.profiler.tracelens", "expected a mapping");
  if (const config_node* f = t.get("export_format"); f && f->text != "csv" && f->text != "excel")
    return config_error(*f, "benchmark.profiler.tracelens.export_format", "expected csv or excel, got '" + f->text + "'");
  if (const config_node* m = t.get("analysis_mode"); m && m->text != "inference" && m->text != "pytorch" && m->text != "classic")
    return config_error(*m, "benchmark.profiler.tracelens.analysis_mode", "expected inference or pytorch, got '" + m->text + "'");
  return ok_status();
}

}  // namespace detail

namespace {

status validate_client(const client_settings& s) {
  auto bad = [](const char* what, const std::string& got) {
    return invalid_argument("%s, got %s", what, got.c_str());
  };
  if (s.num_prompts == 0 || s.num_prompts < -1) return bad("num_prompts (--num-prompts) must be >= 1", std::to_string(s.num_prompts));
  if (s.max_concurrency < -1) return bad("max_concurrency (--max-concurrency) must be >= 0", std::to_string(s.max_concurrency));
  if (s.random_input_len == 0 || s.random_input_len < -1) return bad("random_input_len must be >= 1", std::to_string(s.random_input_len));
  if (s.random_output_len == 0 || s.random_output_len < -1) return bad("random_output_len must be >= 1", std::to_string(s.random_output_len));
  if (s.random_range_ratio && (!std::isfinite(*s.random_range_ratio) || *s.random_range_ratio < 0 || *s.random_range_ratio >= 1))
    return bad("random_range_ratio (--random-range-ratio) must be in [0, 1)", strprintf("%g", *s.random_range_ratio));
  if (!std::isfinite(s.request_rate) || s.request_rate < 0) return bad("request_rate must be > 0 or inf", strprintf("%g", s.request_rate));
  if (!std::isfinite(s.burstiness) || s.burstiness <= 0) return bad("burstiness must be > 0", strprintf("%g", s.burstiness));
  if (s.num_warmups < 0) return bad("num_warmups must be >= 0", std::to_string(s.num_warmups));
  if (!std::isfinite(s.request_timeout_s) || (s.request_timeout_s < 0 && s.request_timeout_s != -1))
    return bad("request_timeout_s (--request-timeout) must be >= 0 (0: none) or auto", strprintf("%g", s.request_timeout_s));
  if (s.max_event_bytes < -1) return bad("max_event_bytes (--max-event-bytes) must be >= 0 (0: none) or auto", std::to_string(s.max_event_bytes));
  if (s.max_response_bytes < -1)
    return bad("max_response_bytes (--max-response-bytes) must be >= 0 (0: none) or auto", std::to_string(s.max_response_bytes));
  if (s.vocab_size < 1) return bad("vocab_size must be >= 1", std::to_string(s.vocab_size));
  return ok_status();
}

status validate_lifecycle(const benchmark_config& c) {
  const lifecycle_settings& l = c.lifecycle;
  if (!l.enabled) return ok_status();
  if (!c.base_url.empty()) return invalid_argument("server_lifecycle does not apply to --base-url runs (no server is launched)");
  if (c.run_mode == server_run_mode::ray)
    return invalid_argument("server_lifecycle.enabled requires run_mode local or docker (run_mode %s)",
                            server_run_mode_name(c.run_mode));
  if (c.profiler.torch_profiler && !l.cleanup)
    return invalid_argument("server_lifecycle with profiler.torch_profiler.enabled needs cleanup: true (the profiled "
                            "server must end with its run); disable the profiler for reuse runs");
  if (c.profiler.system_profiler && !l.cleanup)
    return invalid_argument("server_lifecycle with profiler.system_profiler.enabled needs cleanup: true");
  return ok_status();
}

}  // namespace

status validate_config(const benchmark_config& c) {
  if (c.base_url.empty()) {
    if (!c.framework) return framework_from_word("").get_status();
    if (c.model.empty() && c.server.command.empty()) return invalid_argument("a model is required (-m/--model or benchmark.model)");
    // ray never reaches a local run: cli/benchmark_ray.cpp submits it, to run there with run_mode local.
    if (c.run_mode == server_run_mode::ray)
      return invalid_argument("run_mode '%s' is not supported (local, docker)", server_run_mode_name(c.run_mode));
  } else {
    MAGPIE_RETURN_IF_ERROR(parse_base_url(c.base_url).get_status());
  }
  if (c.run_kind == run_kind::measurement && c.profiling_requested())
    return invalid_argument("run_kind measurement cannot enable the torch or system profiler, tracelens or gap analysis (they perturb the measurement); use diagnostic or auto");
  for (const auto& [k, v] : c.envs)
    if (std::string problem = check_env_value(k, v); !problem.empty())
      return invalid_argument("envs.%s: %s", k.c_str(), problem.c_str());
  if (!std::isfinite(c.timeout_seconds) || c.timeout_seconds <= 0) return invalid_argument("timeout_seconds must be > 0");
  MAGPIE_RETURN_IF_ERROR(validate_client(c.client));
  if (c.server.port < 0 || c.server.port > 65535) return invalid_argument("server port must be in [1, 65535], got %d", c.server.port);
  if (!std::isfinite(c.server.ready_timeout_s) || c.server.ready_timeout_s <= 0) return invalid_argument("ready timeout must be > 0");
  if (c.profiler.profile_prompts < 0) return invalid_argument("profile_prompts must be >= 0");
  if (!std::isfinite(c.profiler.trace_wait_s) || c.profiler.trace_wait_s < 0) return invalid_argument("trace_wait_s must be >= 0");
  if (c.profiler.vllm_profiler_args == profiler_delivery::none)
    return invalid_argument("profiler.torch_profiler.vllm_profiler_args must be auto, flags or env");
  return validate_lifecycle(c);
}

}  // namespace magpie::serve
