// optimize.yaml → optimize_config (see config.h for the schema's meaning).
#include "optimize/config.h"

#include <regex>

#include "core/config.h"
#include "core/strings.h"
#include "core/yaml.h"

namespace magpie::optimize {

namespace {

fs::path resolve(const fs::path& dir, const std::string& p) {
  fs::path x(p);
  return x.is_absolute() ? x : dir / x;
}

status require_positive(const config_node& at, const std::string& field, double v, bool allow_zero = false) {
  if (v > 0 || (allow_zero && v == 0)) return ok_status();
  return config_error(at, field, allow_zero ? "must be >= 0" : "must be > 0");
}

status read_choice(field_reader& r, const std::string& key, const std::vector<std::string>& choices, std::string* out) {
  MAGPIE_RETURN_IF_ERROR(r.read_string(key, out));
  for (const auto& c : choices)
    if (*out == c) return ok_status();
  return config_error(*r.get(key), r.field(key), "'" + *out + "' is not one of " + join(choices, ", "));
}

/// The client keys of a workload (vLLM bench-serve flag names in snake_case).
status read_client(field_reader& r, serve::client_settings& s) {
  MAGPIE_RETURN_IF_ERROR(r.read_string("endpoint", &s.endpoint));
  MAGPIE_RETURN_IF_ERROR(r.read_string("dataset_name", &s.dataset_name));
  MAGPIE_RETURN_IF_ERROR(r.read_string("dataset_path", &s.dataset_path));
  MAGPIE_RETURN_IF_ERROR(r.read_int("max_concurrency", &s.max_concurrency));
  MAGPIE_RETURN_IF_ERROR(r.read_int("random_input_len", &s.random_input_len));
  MAGPIE_RETURN_IF_ERROR(r.read_int("random_output_len", &s.random_output_len));
  if (r.get("random_range_ratio")) {
    double v = 0;
    MAGPIE_RETURN_IF_ERROR(r.read_double("random_range_ratio", &v));
    if (v < 0 || v >= 1) return config_error(*r.get("random_range_ratio"), r.field("random_range_ratio"), "must be in [0, 1)");
    s.random_range_ratio = v;
  }
  MAGPIE_RETURN_IF_ERROR(r.read_int("vocab_size", &s.vocab_size));
  MAGPIE_RETURN_IF_ERROR(r.read_double("request_rate", &s.request_rate));
  int64_t warmups = s.num_warmups;
  MAGPIE_RETURN_IF_ERROR(r.read_int("num_warmups", &warmups));
  s.num_warmups = static_cast<int>(warmups);
  int64_t seed = static_cast<int64_t>(s.seed);
  MAGPIE_RETURN_IF_ERROR(r.read_int("seed", &seed));
  s.seed = static_cast<uint64_t>(seed);
  MAGPIE_RETURN_IF_ERROR(r.read_bool("ignore_eos", &s.ignore_eos));
  MAGPIE_RETURN_IF_ERROR(r.read_double("request_timeout_s", &s.request_timeout_s));
  MAGPIE_RETURN_IF_ERROR(r.read_string("served_model_name", &s.served_model_name));
  return ok_status();
}

status read_workload(const config_node& n, const fs::path& dir, workload_config& w) {
  field_reader r(n, "optimize.workload");
  std::string bench_file;
  MAGPIE_RETURN_IF_ERROR(r.read_string("benchmark_config", &bench_file));
  if (!bench_file.empty()) {
    auto b = serve::load_benchmark_config(resolve(dir, bench_file));
    if (!b.ok()) return config_error(*r.get("benchmark_config"), r.field("benchmark_config"), b.get_status().message());
    w.bench = std::move(*b);
  } else {
    w.bench.envs = serve::default_envs();
  }
  w.bench.profiler.torch_profiler = false;  // only the profiled run profiles
  w.bench.framework.reset();
  w.bench.run_kind = serve::run_kind::automatic;
  MAGPIE_RETURN_IF_ERROR(read_client(r, w.bench.client));
  MAGPIE_RETURN_IF_ERROR(r.read_int("num_prompts", &w.num_prompts));
  MAGPIE_RETURN_IF_ERROR(r.read_double("target_s", &w.target_s));
  MAGPIE_RETURN_IF_ERROR(r.read_int("calibration_prompts", &w.calibration_prompts));
  MAGPIE_RETURN_IF_ERROR(r.read_int("warmup_prompts", &w.warmup_prompts));
  MAGPIE_RETURN_IF_ERROR(r.read_int("profile_prompts", &w.profile_prompts));
  MAGPIE_RETURN_IF_ERROR(r.read_int("initial_runs", &w.initial_runs));
  MAGPIE_RETURN_IF_ERROR(r.read_double("timeout_s", &w.timeout_s));
  MAGPIE_RETURN_IF_ERROR(r.check_unknown());
  MAGPIE_RETURN_IF_ERROR(require_positive(n, "optimize.workload.num_prompts", static_cast<double>(w.num_prompts), true));
  MAGPIE_RETURN_IF_ERROR(require_positive(n, "optimize.workload.target_s", w.target_s));
  MAGPIE_RETURN_IF_ERROR(require_positive(n, "optimize.workload.profile_prompts", static_cast<double>(w.profile_prompts)));
  MAGPIE_RETURN_IF_ERROR(require_positive(n, "optimize.workload.timeout_s", w.timeout_s));
  MAGPIE_RETURN_IF_ERROR(require_positive(n, "optimize.workload.initial_runs", static_cast<double>(w.initial_runs)));
  if (w.concurrency() < 1) return config_error(n, "optimize.workload.max_concurrency", "must be >= 1");
  w.bench.timeout_seconds = w.timeout_s;
  return ok_status();
}

status read_server(const config_node& n, server_config& s) {
  field_reader r(n, "optimize.server");
  argv_list cmd;
  MAGPIE_RETURN_IF_ERROR(r.read_command("command", &cmd));
  if (cmd.size() != 1) return config_error(r.get("command") ? *r.get("command") : n, r.field("command"), "one command is required (a string or a list of strings)");
  s.command = cmd.front();
  MAGPIE_RETURN_IF_ERROR(r.read_string_map("env", &s.env));
  MAGPIE_RETURN_IF_ERROR(r.read_string("baseline", &s.baseline));
  MAGPIE_RETURN_IF_ERROR(r.read_string("variant", &s.variant));
  MAGPIE_RETURN_IF_ERROR(r.read_double("ready_timeout_s", &s.ready_timeout_s));
  MAGPIE_RETURN_IF_ERROR(r.read_double("stop_grace_s", &s.stop_grace_s));
  MAGPIE_RETURN_IF_ERROR(r.read_string("info_path", &s.info_path));
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("identity_keys", &s.identity_keys));
  MAGPIE_RETURN_IF_ERROR(r.read_string("variant_check", &s.variant_check));
  MAGPIE_RETURN_IF_ERROR(r.check_unknown());
  bool has_variant = false;
  for (const auto& a : s.command) has_variant = has_variant || contains(a, "{variant}");
  for (const auto& [k, v] : s.env) has_variant = has_variant || contains(v, "{variant}");
  if (!has_variant) return config_error(n, "optimize.server.command", "neither the command nor server.env uses {variant}: the server could not tell the kernel choices apart");
  if (!contains(s.variant, "{impl}")) return config_error(n, "optimize.server.variant", "must contain {impl}");
  if ((!s.identity_keys.empty() || !s.variant_check.empty()) && s.info_path.empty())
    return config_error(n, "optimize.server.info_path", "identity_keys / variant_check need an info_path to read");
  return require_positive(n, "optimize.server.ready_timeout_s", s.ready_timeout_s);
}

status read_op(const std::string& name, const config_node& n, const fs::path& dir, op_config& op) {
  std::string path = "optimize.ops." + name;
  field_reader r(n, path);
  op.name = name;
  std::string yaml;
  MAGPIE_RETURN_IF_ERROR(r.read_string("compare", &yaml));
  if (yaml.empty()) return config_error(n, path + ".compare", "a compare YAML is required");
  op.compare_yaml = resolve(dir, yaml);
  std::error_code ec;
  if (!fs::exists(op.compare_yaml, ec)) return config_error(*r.get("compare"), path + ".compare", "no such file: " + op.compare_yaml.string());
  MAGPIE_RETURN_IF_ERROR(r.read_string("baseline_id", &op.baseline_id));
  if (op.baseline_id.empty()) return config_error(n, path + ".baseline_id", "the baseline's kernel id in the compare YAML is required");
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("kernels", &op.kernels));
  if (op.kernels.empty()) return config_error(n, path + ".kernels", "list the baseline's kernel names (as in a trace)");
  env_list cands;
  MAGPIE_RETURN_IF_ERROR(r.read_string_map("candidates", &cands));
  op.candidates = cands;
  return r.check_unknown();
}

status read_e2e(const config_node& n, e2e_config& e) {
  field_reader r(n, "optimize.e2e");
  MAGPIE_RETURN_IF_ERROR(read_choice(r, "order", {"abba", "abab"}, &e.order));
  MAGPIE_RETURN_IF_ERROR(read_choice(r, "servers", {"restart", "concurrent"}, &e.servers));
  MAGPIE_RETURN_IF_ERROR(r.read_int("pairs", &e.pairs));
  e.max_pairs = e.pairs;
  MAGPIE_RETURN_IF_ERROR(r.read_int("max_pairs", &e.max_pairs));
  MAGPIE_RETURN_IF_ERROR(r.read_double("target_mde_pct", &e.target_mde_pct));
  MAGPIE_RETURN_IF_ERROR(r.read_double("power", &e.power));
  MAGPIE_RETURN_IF_ERROR(r.read_double("max_series_s", &e.max_series_s));
  MAGPIE_RETURN_IF_ERROR(read_choice(r, "control", {"none", "aa"}, &e.control));
  MAGPIE_RETURN_IF_ERROR(r.check_unknown());
  if (e.pairs < 2) return config_error(n, "optimize.e2e.pairs", "must be >= 2 (the noise test needs repeated runs)");
  if (e.max_pairs < e.pairs) return config_error(n, "optimize.e2e.max_pairs", "must be >= pairs");
  if (e.power <= 0 || e.power >= 1) return config_error(n, "optimize.e2e.power", "must be in (0, 1)");
  MAGPIE_RETURN_IF_ERROR(require_positive(n, "optimize.e2e.max_series_s", e.max_series_s, true));
  return require_positive(n, "optimize.e2e.target_mde_pct", e.target_mde_pct, true);
}

status read_decision(const config_node& n, decision_config& d) {
  field_reader r(n, "optimize.decision");
  MAGPIE_RETURN_IF_ERROR(r.read_double("alpha", &d.alpha));
  MAGPIE_RETURN_IF_ERROR(r.read_double("min_confidence", &d.min_confidence));
  std::string primary;
  MAGPIE_RETURN_IF_ERROR(r.read_string("primary_metric", &primary));
  MAGPIE_RETURN_IF_ERROR(r.read_string_list("metrics", &d.metrics));
  if (!primary.empty() && !r.get("metrics")) d.metrics = {primary};
  MAGPIE_RETURN_IF_ERROR(r.check_unknown());
  if (d.alpha <= 0 || d.alpha >= 0.5) return config_error(n, "optimize.decision.alpha", "must be in (0, 0.5)");
  if (d.min_confidence < 0 || d.min_confidence > 1) return config_error(n, "optimize.decision.min_confidence", "must be in [0, 1]");
  if (d.metrics.empty()) return config_error(n, "optimize.decision.metrics", "at least one metric");
  static const std::vector<std::string> known = {"output_throughput", "request_throughput", "total_token_throughput",
                                                 "tpot_mean_ms", "tpot_median_ms", "ttft_mean_ms", "itl_mean_ms", "e2el_mean_ms"};
  for (const auto& m : d.metrics)
    if (std::find(known.begin(), known.end(), m) == known.end())
      return config_error(n, "optimize.decision.metrics", "unknown metric '" + m + "' (" + join(known, ", ") + ")");
  return ok_status();
}

status read_top(const config_node& n, optimize_config& c) {
  field_reader r(n, "optimize");
  MAGPIE_RETURN_IF_ERROR(r.read_string("name", &c.name));
  const config_node* w = r.get("workload");
  if (!w) return config_error(n, "optimize.workload", "is required");
  MAGPIE_RETURN_IF_ERROR(read_workload(*w, c.dir, c.workload));
  const config_node* s = r.get("server");
  if (!s) return config_error(n, "optimize.server", "is required");
  MAGPIE_RETURN_IF_ERROR(read_server(*s, c.server));
  if (const config_node* src = r.get("sources")) {
    field_reader sr(*src, "optimize.sources");
    std::vector<std::string> repos;
    MAGPIE_RETURN_IF_ERROR(sr.read_string_list("repos", &repos));
    for (const auto& p : repos) c.source_repos.push_back(resolve(c.dir, p));
    MAGPIE_RETURN_IF_ERROR(sr.read_double("min_confidence", &c.decision.min_confidence));
    MAGPIE_RETURN_IF_ERROR(sr.check_unknown());
  }
  if (c.source_repos.empty()) return config_error(n, "optimize.sources.repos", "name at least one source tree to map kernels into");
  if (const config_node* g = r.get("gap")) {
    field_reader gr(*g, "optimize.gap");
    MAGPIE_RETURN_IF_ERROR(gr.read_double("start_pct", &c.gap.start_pct));
    MAGPIE_RETURN_IF_ERROR(gr.read_double("end_pct", &c.gap.end_pct));
    MAGPIE_RETURN_IF_ERROR(gr.read_int("top_k", &c.gap.top_k));
    MAGPIE_RETURN_IF_ERROR(gr.check_unknown());
    if (c.gap.start_pct < 0 || c.gap.end_pct > 100 || c.gap.start_pct >= c.gap.end_pct)
      return config_error(*g, "optimize.gap", "need 0 <= start_pct < end_pct <= 100");
  }
  if (const config_node* cmp = r.get("compare")) {
    field_reader cr(*cmp, "optimize.compare");
    MAGPIE_RETURN_IF_ERROR(cr.read_double("max_time_s", &c.compare_max_time_s));
    MAGPIE_RETURN_IF_ERROR(cr.read_string_map("env", &c.compare_env));
    MAGPIE_RETURN_IF_ERROR(cr.check_unknown());
  }
  const config_node* ops = r.get("ops");
  if (!ops || !ops->is_map() || ops->entries.empty()) return config_error(ops ? *ops : n, "optimize.ops", "a mapping of op name → settings is required");
  for (const auto& [name, node] : ops->entries) {
    op_config op;
    MAGPIE_RETURN_IF_ERROR(read_op(name, node, c.dir, op));
    c.ops.push_back(std::move(op));
  }
  if (const config_node* e = r.get("e2e")) MAGPIE_RETURN_IF_ERROR(read_e2e(*e, c.e2e));
  if (const config_node* d = r.get("decision")) MAGPIE_RETURN_IF_ERROR(read_decision(*d, c.decision));
  return r.check_unknown();
}

}  // namespace

int64_t workload_config::concurrency() const {
  return bench.client.max_concurrency > 0 ? bench.client.max_concurrency : bench.env_int("CONC", 32);
}

const op_config* optimize_config::find_op(const std::string& n) const {
  for (const auto& o : ops)
    if (o.name == n) return &o;
  return nullptr;
}

std::string optimize_config::op_of_kernel(const std::string& kernel_name, std::string* symbol) const {
  static const std::regex triton_suffix("(_\\d+d)*(_[0-9a-z]+)?");
  for (int exact = 1; exact >= 0; --exact)
    for (const auto& o : ops)
      for (const auto& k : o.kernels) {
        bool hit = exact ? kernel_name == k
                         : starts_with(kernel_name, k) && std::regex_match(kernel_name.substr(k.size()), triton_suffix);
        if (!hit) continue;
        if (symbol) *symbol = k;
        return o.name;
      }
  return {};
}

status_or<optimize_config> parse_optimize_yaml(const std::string& text, const fs::path& file) {
  MAGPIE_ASSIGN_OR_RETURN(config_node root, parse_yaml(text, file.string()));
  const config_node* top = root.get("optimize");
  if (!root.is_map() || !top) return config_error(root, "optimize", "the file needs a top-level 'optimize:' mapping");
  optimize_config c;
  c.path = absolute_path(file);
  c.dir = c.path.parent_path();
  MAGPIE_RETURN_IF_ERROR(read_top(*top, c));
  return c;
}

status_or<optimize_config> load_optimize_config(const fs::path& path) {
  // A directory, FIFO or oversized file is refused by name (issue 10), like -k/-b configs.
  MAGPIE_ASSIGN_OR_RETURN(std::string text, read_input_file(path, yaml_limits{}.max_bytes, "optimize config"));
  return parse_optimize_yaml(text, path);
}

status_or<std::string> expand_placeholders(const std::string& s, const std::vector<std::pair<std::string, std::string>>& vars) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t open = s.find('{', i);
    if (open == std::string::npos) {
      out += s.substr(i);
      break;
    }
    size_t close = s.find('}', open);
    if (close == std::string::npos) {
      out += s.substr(i);
      break;
    }
    std::string key = s.substr(open + 1, close - open - 1);
    auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& kv) { return kv.first == key; });
    if (it == vars.end()) {
      std::vector<std::string> names;
      for (const auto& kv : vars) names.push_back("{" + kv.first + "}");
      return invalid_argument("unknown placeholder {%s} in '%s' (known: %s)", key.c_str(), s.c_str(), join(names, " ").c_str());
    }
    out += s.substr(i, open - i) + it->second;
    i = close + 1;
  }
  return out;
}

}  // namespace magpie::optimize
