// `magpie benchmark vllm|sglang|atom ...` and `magpie benchmark --base-url URL`: serving
// benchmarks (src/serve). Magpie's flags, plus vLLM `bench serve`-style client flags.
#include <cmath>
#include <cstdio>

#include "cli/benchmark_hooks.h"
#include "core/log.h"
#include "core/utf8.h"
#include "core/strings.h"
#include "serve/dry_run_printer.h"
#include "serve/orchestrator.h"
#include "serve/report_printer.h"
#include "store/results_store.h"

namespace magpie::cli {

void add_serving_flags(arg_parser& p) {
  const std::string m = "serving benchmark (Magpie's flags)";
  p.add_positional("framework", "vllm | sglang | atom (the server to launch; omit with --base-url or -b)", false)
      .add_value("--benchmark-config", "-b", "FILE", "benchmark YAML with a top-level 'benchmark:' block (Magpie's schema)", {}, m)
      .add_value("--model", "-m", "MODEL", "model: Hugging Face id or local directory", {}, m)
      .add_value("--precision", "-p", "P", "precision (default fp8; fp16/bf16 add --dtype, quantized checkpoints carry theirs)",
                 {"fp8", "fp16", "bf16", "fp4", "mxfp4"}, m)
      .add_value("--tp", "", "N", "tensor-parallel size, envs TP (default 1)", {}, m)
      .add_value("--concurrency", "", "N", "max requests in flight, envs CONC (default 32)", {}, m)
      .add_value("--input-len", "", "TOKENS", "prompt length, envs ISL (default 1024; spread by RANDOM_RANGE_RATIO 0.5: uniform in [ISL*r, ISL]); "
                 "with vllm defaults: --random-input-len, as vllm bench serve maps it", {}, m)
      .add_value("--output-len", "", "TOKENS", "max output tokens, envs OSL (default 512; same spread); with vllm defaults: --random-output-len", {}, m)
      .add_bool("--torch-profiler", "", "profile the server with the torch profiler (traces in <workspace>/torch_trace, run kind diagnostic)", m)
      .add_value("--run-mode", "", "MODE", "where the server runs (default docker)", {"docker", "local"}, m)
      .add_value("--run-kind", "", "KIND", "measurement (no profilers allowed) or diagnostic (default: auto)", {"measurement", "diagnostic"}, m)
      .add_value("--docker-image", "", "IMAGE", "server image for --run-mode docker (default: Magpie's image table)", {}, m)
      .add_value("--timeout", "", "S", "whole-benchmark time limit, seconds (default 3600)", {}, m)
      .add_value("--output-dir", "-o", "DIR", "results directory; a workspace benchmark_<framework>_<time>/ is created in it (default ./results)", {}, m);
  const std::string c =
      "load generator (vLLM bench-serve names; defaults: vLLM's with --base-url, Magpie's otherwise, see --client-defaults)";
  p.add_value("--base-url", "", "URL", "benchmark an already running OpenAI-compatible server (client only), e.g. http://127.0.0.1:8000", {}, c)
      .add_value("--client-defaults", "", "STYLE",
                 "defaults for unset client settings: vllm (vllm bench serve's) or magpie (Magpie's envs). "
                 "Default: vllm with --base-url and no -b / framework, else magpie", {"vllm", "magpie"}, c)
      .add_value("--endpoint", "", "PATH", "API path: /v1/completions (default, token-id prompts) or /v1/chat/completions", {}, c)
      .add_value("--served-model-name", "", "NAME", "the request's \"model\" (default: the server's first /v1/models id)", {}, c)
      .add_value("--dataset-name", "", "NAME", "random (default), sharegpt (JSON) or custom (JSONL: prompt, output_tokens)", {"random", "sharegpt", "custom"}, c)
      .add_value("--dataset-path", "", "FILE", "dataset file for sharegpt / custom", {}, c)
      .add_value("--num-prompts", "", "N", "requests in the measured run (vllm: 1000; magpie: NUM_PROMPTS or 10 x concurrency)", {}, c)
      .add_value("--request-rate", "", "RPS", "arrival rate, requests/s, or inf (default inf: all at t = 0)", {}, c)
      .add_value("--burstiness", "", "B", "gamma shape of the arrival gaps: 1 = Poisson (default), < 1 burstier, > 1 steadier, inf constant", {}, c)
      .add_value("--max-concurrency", "", "N", "requests in flight at most; 0 = unlimited (vllm: unlimited; magpie: --concurrency, 32)", {}, c)
      .add_value("--random-input-len", "", "TOKENS", "random dataset prompt tokens (vllm: 1024; magpie: ISL)", {}, c)
      .add_value("--random-output-len", "", "TOKENS", "random dataset max output tokens (vllm: 128; magpie: OSL)", {}, c)
      .add_value("--random-range-ratio", "", "R", "uniform lengths in [L*(1-R), L*(1+R)], R in [0, 1) (vLLM semantics; default 0)", {}, c)
      .add_bool("--ignore-eos", "", "send ignore_eos: true so every request produces max_tokens (vllm: always on for the random dataset)", c)
      .add_value("--temperature", "", "T", "sampling temperature sent with every request (vllm: none, the server decides; magpie: 0)", {}, c)
      .add_value("--num-warmups", "", "N", "warm-up requests before the measured run, excluded from metrics (vllm: 0; magpie: 1)", {}, c)
      .add_value("--seed", "", "N", "seed of the dataset and the arrival schedule (default 0)", {}, c)
      .add_multi("--goodput", "", "SLO", "goodput SLOs in ms, e.g. ttft:500 tpot:50 e2el:3000", c)
      .add_value("--metric-percentiles", "", "LIST", "comma-separated percentiles for vLLM's pNN keys (vllm: 99; magpie: 50,90,95,99); "
                 "the report always has p50/p90/p95/p99", {}, c)
      .add_value("--percentile-metrics", "", "LIST", "metrics whose vLLM stats keys are written to serving_result.json "
                 "(vllm: ttft,tpot,itl; magpie: ttft,tpot,itl,e2el,client_queue_time,e2el_including_client_queue)", {}, c)
      .add_value("--label", "", "TEXT", "result label (vLLM's \"label\"; default none)", {}, c)
      .add_value("--request-timeout", "", "S", "per-request time limit from the request's start, seconds; 0 = none (default: "
                 "60 s + 0.5 s per max_tokens + 0.002 s per prompt token of that request); also bounds the /v1/models lookup", {}, c)
      .add_value("--max-event-bytes", "", "BYTES", "bytes one SSE line or event may hold before its request fails; 0 = no limit "
                 "(default: 4 MiB + 256 B per prompt token)", {}, c)
      .add_value("--max-response-bytes", "", "BYTES", "response body bytes per request before it fails, and at most 8 choices chunks "
                 "per max_tokens + 256; 0 = no limit (default: the event limit + 16 KiB per max_tokens)", {}, c)
      .add_bool("--keep-generated-text", "", "keep every response's text (serving_result.json generated_texts; default: "
                "empty strings, only what the metrics need is kept)", c)
      .add_multi("--header", "", "H", "extra request header 'Name: value' (OPENAI_API_KEY is sent as a bearer token)", c)
      .add_value("--timestamps", "", "SRC", "clock of token arrivals: kernel (the kernel's receive time, SO_TIMESTAMPING; "
                 "default, falls back to read) or read (the time of the socket read)", {"kernel", "read"}, c)
      .add_bool("--no-continuous-usage", "", "do not ask for usage in every chunk (per-token ITL then unavailable)", c);
  const std::string s = "server launch and profiling (magpie)";
  p.add_value("--port", "", "N", "server port (default: envs PORT, else a free port)", {}, s)
      .add_value("--ready-timeout", "", "S", "seconds to wait for /health and /v1/models (default 1800)", {}, s)
      .add_value("--server-args", "", "ARGS", "extra server arguments (whitespace-separated)", {}, s)
      .add_value("--profile-prompts", "", "N", "profile a separate pass of N requests after the measured run (default: profile the measured run)", {}, s)
      .add_value("--server-trace-dir", "", "DIR", "with --base-url and --torch-profiler: where that server writes its traces (copied to the workspace)", {}, s)
      .add_bool("--dry-run", "", "print the server command line and client settings as JSON; launch nothing", s);
  p.set_epilog(
      "Exit codes: 0 ok; 1 failed (nothing completed, the server failed, a pre-flight check failed: nothing is written\n"
      "then); 2 usage (bad flags or config values); 3 partial: the report is written but some measured requests\n"
      "failed (gap analysis: a trace was read only partly); --allow-partial makes 3 a 0. Errors go to stderr.\n"
      "Before anything is written magpie checks the output directory, the dataset file and the server (--base-url:\n"
      "a TCP connection and /v1/models; a launch: its program on PATH).\n\n"
      "Examples:\n"
      "  magpie benchmark vllm -m Qwen/Qwen3-8B --run-mode local --concurrency 16 --input-len 1024 --output-len 256\n"
      "  magpie benchmark -b examples/benchmarks/vllm_local.yaml\n"
      "  magpie benchmark --base-url http://127.0.0.1:8000 --random-input-len 512 --random-output-len 128 --request-rate 20\n"
      "Outputs in the workspace: benchmark_report.json, summary.txt, serving_result.json (vLLM bench-serve keys),\n"
      "requests.jsonl, server.log, config.yaml, torch_trace/, gap_analysis/. Times are milliseconds unless named.");
}

namespace {

template <class T>
status read_number(const arg_parser& p, const char* flag, T* out) {
  if (!p.has(flag)) return ok_status();
  MAGPIE_ASSIGN_OR_RETURN(double v, p.number(flag, 0));
  *out = static_cast<T>(v);
  return ok_status();
}

status apply_magpie_flags(const arg_parser& p, const global_options& g, serve::benchmark_config& c) {
  if (!p.positionals().empty()) {
    MAGPIE_ASSIGN_OR_RETURN(c.framework, serve::framework_from_word(p.positionals()[0]));
  }
  if (p.has("--model")) c.model = p.value("--model");
  if (p.has("--precision")) c.precision = p.value("--precision");
  bool vllm = c.client.vllm_defaults;
  for (auto [flag, env] : {std::pair{"--tp", "TP"}, {"--concurrency", "CONC"}, {"--input-len", "ISL"}, {"--output-len", "OSL"}}) {
    if (!p.has(flag)) continue;
    MAGPIE_ASSIGN_OR_RETURN(int64_t v, p.integer(flag, 0));
    if (v < 1) return invalid_argument("%s must be >= 1", flag);
    // vllm bench serve maps --input-len / --output-len to the dataset's lengths (no spread)
    if (vllm && env == std::string("ISL")) c.client.random_input_len = v;
    else if (vllm && env == std::string("OSL")) c.client.random_output_len = v;
    else c.set_env(env, std::to_string(v));
  }
  if (p.has("--torch-profiler")) c.profiler.torch_profiler = true;
  // the flags' choices are the codec's words (arg_parser refuses others)
  if (p.has("--run-mode")) c.run_mode = serve::parse_server_run_mode(p.value("--run-mode")).value_or(c.run_mode);
  if (p.has("--run-kind")) c.run_kind = serve::parse_run_kind(p.value("--run-kind")).value_or(c.run_kind);
  if (!g.docker_image.empty()) c.docker_image = g.docker_image;
  if (p.has("--docker-image")) c.docker_image = p.value("--docker-image");
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--timeout", &c.timeout_seconds));
  return ok_status();
}

status apply_client_flags(const arg_parser& p, serve::benchmark_config& c) {
  serve::client_settings& s = c.client;
  if (p.has("--base-url")) c.base_url = p.value("--base-url");
  if (p.has("--endpoint")) s.endpoint = p.value("--endpoint");
  if (p.has("--served-model-name")) s.served_model_name = p.value("--served-model-name");
  if (p.has("--dataset-name")) s.dataset_name = p.value("--dataset-name");
  if (p.has("--dataset-path")) s.dataset_path = p.value("--dataset-path");
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--num-prompts", &s.num_prompts));
  if (p.has("--request-rate")) {
    std::string v = to_lower(p.value("--request-rate"));
    auto d = parse_double(v);
    if (v == "inf") s.request_rate = 0;
    else if (d && *d > 0) s.request_rate = *d;
    else return invalid_argument("--request-rate: '%s' is not a positive number or inf", v.c_str());
  }
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--burstiness", &s.burstiness));
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--max-concurrency", &s.max_concurrency));
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--random-input-len", &s.random_input_len));
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--random-output-len", &s.random_output_len));
  if (p.has("--random-range-ratio")) {
    MAGPIE_ASSIGN_OR_RETURN(double r, p.number("--random-range-ratio", 0));
    s.random_range_ratio = r;
  }
  if (p.has("--ignore-eos")) s.ignore_eos = true;
  if (p.has("--temperature")) {
    MAGPIE_ASSIGN_OR_RETURN(double t, p.number("--temperature", 0));
    if (t < 0) return invalid_argument("--temperature must be >= 0");
    s.temperature = t;
  }
  if (s.vllm_defaults) s.num_warmups = 0;
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--num-warmups", &s.num_warmups));
  if (s.num_warmups < 0) return invalid_argument("--num-warmups must be >= 0");
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--seed", &s.seed));
  for (const auto& gp : p.values("--goodput")) s.goodput.push_back(gp);
  if (s.vllm_defaults) {
    s.percentiles = {99};
    s.percentile_metrics = {"ttft", "tpot", "itl"};
  }
  if (p.has("--percentile-metrics")) {
    MAGPIE_ASSIGN_OR_RETURN(s.percentile_metrics, serve::parse_percentile_metrics(p.value("--percentile-metrics")));
  }
  if (p.has("--label")) s.label = p.value("--label");
  if (p.has("--timestamps")) s.kernel_timestamps = p.value("--timestamps") == "kernel";
  if (p.has("--metric-percentiles")) {
    s.percentiles.clear();
    for (const auto& x : split(p.value("--metric-percentiles"), ',')) {
      auto v = parse_double(trim(x));
      if (!v || *v < 0 || *v > 100) return invalid_argument("--metric-percentiles: '%s' is not in [0, 100]", x.c_str());
      s.percentiles.push_back(*v);
    }
  }
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--request-timeout", &s.request_timeout_s));
  if (p.has("--request-timeout") && s.request_timeout_s < 0) return invalid_argument("--request-timeout must be >= 0 (0: none)");
  for (auto [flag, out] : {std::pair{"--max-event-bytes", &s.max_event_bytes}, {"--max-response-bytes", &s.max_response_bytes}}) {
    if (!p.has(flag)) continue;
    MAGPIE_ASSIGN_OR_RETURN(*out, p.integer(flag, 0));
    if (*out < 0) return invalid_argument("%s must be >= 0 (0: no limit)", flag);
  }
  if (p.has("--keep-generated-text")) s.keep_generated_text = true;
  for (const auto& h : p.values("--header")) s.headers.push_back(h);
  if (p.has("--no-continuous-usage")) s.continuous_usage = false;
  return ok_status();
}

status apply_server_flags(const arg_parser& p, serve::benchmark_config& c) {
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--port", &c.server.port));
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--ready-timeout", &c.server.ready_timeout_s));
  if (p.has("--server-args"))
    for (auto& a : split_whitespace(p.value("--server-args"))) c.server.extra_args.push_back(a);
  MAGPIE_RETURN_IF_ERROR(read_number(p, "--profile-prompts", &c.profiler.profile_prompts));
  return ok_status();
}

/// This process's argv (for provenance), from /proc/self/cmdline.
std::vector<std::string> own_argv() {
  auto text = read_file("/proc/self/cmdline");
  std::vector<std::string> out;
  if (!text.ok()) return out;
  for (auto& a : split(*text, '\0'))
    if (!a.empty()) out.push_back(a);
  return out;
}

/// vLLM's defaults for a `vllm bench serve`-style invocation (--base-url without -b or a
/// framework) unless --client-defaults says otherwise.
bool wants_vllm_defaults(const arg_parser& p) {
  if (p.has("--client-defaults")) return p.value("--client-defaults") == "vllm";
  return p.has("--base-url") && !p.has("--benchmark-config") && p.positionals().empty();
}

/// The config: the YAML when -b is given, else the CLI defaults (Magpie's envs, or none with
/// vLLM's defaults); then the flags.
status_or<serve::benchmark_config> build_config(const arg_parser& p, const global_options& g) {
  serve::benchmark_config c;
  bool vllm = wants_vllm_defaults(p);
  if (p.has("--benchmark-config")) {
    MAGPIE_ASSIGN_OR_RETURN(c, serve::load_benchmark_config(p.value("--benchmark-config")));
  } else {
    c.framework = serve::serving_framework::vllm;
    c.envs = vllm ? env_list{{"TP", "1"}} : serve::default_envs();
    c.profiler.torch_profiler = false;  // CLI runs profile only with --torch-profiler
    if (p.positionals().empty() && !p.has("--base-url"))
      return invalid_argument(
          "give a framework and a model, a benchmark config, or --base-url\n"
          "  e.g. magpie benchmark vllm -m Qwen/Qwen3-8B --run-mode local   |   magpie benchmark -b bench.yaml");
    if (p.has("--base-url") && p.positionals().empty()) c.framework.reset();
  }
  c.client.vllm_defaults = vllm;
  MAGPIE_RETURN_IF_ERROR(apply_magpie_flags(p, g, c));
  MAGPIE_RETURN_IF_ERROR(apply_client_flags(p, c));
  MAGPIE_RETURN_IF_ERROR(apply_server_flags(p, c));
  MAGPIE_RETURN_IF_ERROR(apply_magpie_compat_flags(p, c));
  return c;
}

/// Prints a status error on stderr; bad settings are usage errors (2), the rest failures (1).
int fail_with(const status& st) {
  std::fprintf(stderr, "Error: %s\n", st.message().c_str());
  bool usage = st.code() == status_code::invalid_argument || st.code() == status_code::parse_error;
  return usage ? k_exit_usage : k_exit_failure;
}

/// The run's errors and failed requests on stderr (the summary on stdout has them too); the
/// exit code: 0 success, 1 failed, 3 success with failed measured requests (0 with --allow-partial).
/// Server-provided text (errors quote it) is made printable first: no terminal escapes on stderr.
int finish_run(const serve::benchmark_report& report, bool allow_partial) {
  for (const auto& e : report.errors) MAGPIE_LOG_ERROR("%s", printable_text(e).c_str());
  size_t failed = report.serving ? report.serving->metrics.failed : 0;
  if (failed > 0)
    MAGPIE_LOG_WARN("%zu of %zu measured requests failed; first error: %s", failed, report.serving->metrics.num_requests,
                    printable_text(report.serving->first_error).c_str());
  if (!report.success) return k_exit_failure;
  if (failed > 0 && !allow_partial) {
    MAGPIE_LOG_WARN("exit %d: a partial result (the report is written; --allow-partial exits 0)", k_exit_partial);
    return k_exit_partial;
  }
  return k_exit_ok;
}

}  // namespace

int run_serving_benchmark(const arg_parser& p, const global_options& g) {
  auto cfg = build_config(p, g);
  if (!cfg.ok()) return fail_with(cfg.get_status());
  for (const auto& w : cfg->warnings) MAGPIE_LOG_WARN("%s", w.c_str());
  serve::run_options opts;
  opts.output_dir = p.value("--output-dir", "./results");
  opts.dry_run = p.has("--dry-run");
  opts.server_trace_dir = p.value("--server-trace-dir");
  opts.magpie_argv = own_argv();
  if (opts.dry_run) {
    auto plan = serve::plan_dry_run(*cfg, opts);
    if (!plan.ok()) return fail_with(plan.get_status());
    std::fputs(dump_pretty(serve::dry_run_plan_json(*plan)).c_str(), stdout);
    return k_exit_ok;
  }
  auto run = serve::run_benchmark(*cfg, opts);
  if (!run.ok()) return fail_with(run.get_status());
  if (!run->workspace.empty()) store::register_after_run(run->workspace);
  serve::benchmark_report report = serve::make_benchmark_report(*run);
  std::fputs(serve::summary_text(report).c_str(), stdout);
  std::fflush(stdout);
  return finish_run(report, p.has("--allow-partial"));
}

}  // namespace magpie::cli
