// The benchmark client: dataset → request bodies → warm-up → scheduled run → metrics.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/status.h"
#include "serve/dataset.h"
#include "serve/http_client.h"
#include "serve/metrics.h"
#include "serve/schedule.h"

namespace magpie::serve {

struct client_config {
  endpoint_url url;
  std::string endpoint = "/v1/completions";  ///< chat when it contains "chat/completions"
  std::string model;                         ///< request "model"; empty: first id of /v1/models
  dataset_options dataset;
  arrival_options arrivals;
  int64_t max_concurrency = 0;               ///< 0: unlimited
  int num_warmups = 1;                       ///< requests sent (and discarded) before the run
  bool ignore_eos = false;
  bool continuous_usage = true;              ///< ask for usage in every chunk (token-exact ITL)
  std::optional<double> temperature = 0.0;   ///< unset: not sent (the server's default, as vLLM)
  bool kernel_timestamps = true;             ///< see load_options
  std::string label;                         ///< vLLM's --label (result "label")
  json extra_body = json::object();          ///< merged into every request body
  std::vector<std::pair<std::string, std::string>> headers;
  limit_policy limits;                       ///< per-request timeout and byte caps (serve/limits.h)
  bool keep_text = false;                    ///< keep generated texts (generated_texts)
  /// Absolute monotonic_seconds() by which the whole benchmark must end (--timeout); 0: none.
  /// Bounds the model lookup (with --request-timeout, see exchange_timeout_s).
  double deadline_s = 0;
  metric_options metrics;
  std::string request_id_prefix;             ///< default "magpie-<pid>"
};

struct client_result {
  std::string model;                         ///< the model name sent
  std::vector<request_record> warmups, records;
  int64_t t0_ns = 0;                         ///< schedule origin
  serving_metrics metrics;
  load_stats load;                           ///< the measured run's client-side observations
  std::string aborted;                       ///< why the run stopped early ("" if it did not)
  json vllm_json;                            ///< vLLM bench-serve compatible result
};

/// Hooks for the orchestrator: abort_check as in load_options; on_progress(done, total).
struct client_hooks {
  std::function<std::string()> abort_check;
  std::function<void(size_t, size_t)> on_progress;
  /// Called between warm-up and the run, and after the run (profiling control).
  std::function<status()> before_run, after_run;
};

/// Runs the whole client. Errors: invalid_argument (dataset/config), unavailable / timeout (no
/// /v1/models answer when the model name is needed; bounded by exchange_timeout_s),
/// failed_precondition (every warm-up request failed: the message carries the first error).
/// A partial run (abort) is a result, not an error.
status_or<client_result> run_client(const client_config& cfg, const client_hooks& hooks = {});

/// The JSON body of one request (exposed for tests).
std::string request_body(const client_config& cfg, const std::string& model, const prompt_spec& p);

/// The first model id of GET /v1/models, within timeout_s seconds.
status_or<std::string> first_served_model(const endpoint_url& url, double timeout_s);

/// The timeout of a plain exchange with the server (model lookup, profiler control) under
/// cfg: --request-timeout when given, else the limit formula's base, never past deadline_s.
double exchange_timeout_s(const client_config& cfg);

/// One line per request for requests.jsonl: id, times (ms from t0: scheduled, arrival, start,
/// end), status, tokens, error, every content delivery (ms, tokens) and every choices chunk (ms).
std::string request_details_jsonl(const std::vector<request_record>& records, int64_t t0_ns);

}  // namespace magpie::serve
