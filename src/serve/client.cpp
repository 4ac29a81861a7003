#include "serve/client.h"

#include <unistd.h>

#include <ctime>
#include <limits>

#include "core/log.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "serve/metrics_printer.h"
#include "serve/socket_read.h"

namespace magpie::serve {

std::string request_body(const client_config& cfg, const std::string& model, const prompt_spec& p) {
  bool chat = contains(cfg.endpoint, "chat/completions");
  json b;
  b["model"] = model;
  if (chat) {
    std::string text = p.text;
    if (text.empty() && !p.token_ids.empty()) {
      // Chat messages carry text: render token ids as words (length is then an estimate).
      for (size_t i = 0; i < p.token_ids.size(); ++i) text += (i ? " " : "") + std::to_string(p.token_ids[i]);
    }
    b["messages"] = json::array({{{"role", "user"}, {"content", text}}});
  } else if (!p.token_ids.empty()) {
    b["prompt"] = p.token_ids;
  } else {
    b["prompt"] = p.text;
  }
  b["max_tokens"] = p.output_len;
  if (cfg.temperature) b["temperature"] = *cfg.temperature;
  b["stream"] = true;
  json so;
  so["include_usage"] = true;
  if (cfg.continuous_usage) so["continuous_usage_stats"] = true;
  b["stream_options"] = so;
  if (cfg.ignore_eos) b["ignore_eos"] = true;
  for (const auto& [k, v] : cfg.extra_body.items()) b[k] = v;
  return dump_compact(b);
}

status_or<std::string> first_served_model(const endpoint_url& url, double timeout_s) {
  std::string where = url.to_string() + "/v1/models";
  MAGPIE_ASSIGN_OR_RETURN(http_response r, http_call(url, "GET", "/v1/models", "", timeout_s));
  if (r.status != 200)
    return error(status_code::unavailable, "GET %s answered HTTP %d: %s (give --served-model-name to skip the lookup)",
                 where.c_str(), r.status, std::string(trim(r.body.substr(0, 200))).c_str());
  MAGPIE_ASSIGN_OR_RETURN(json j, parse_json(r.body, where));
  if (j.contains("data") && j["data"].is_array() && !j["data"].empty() && j["data"][0].is_object()) {
    std::string id = json_string(j["data"][0], "id");
    if (!id.empty()) return id;
  }
  return error(status_code::unavailable, "GET %s: field data[0].id: no model listed (give --served-model-name)", where.c_str());
}

double exchange_timeout_s(const client_config& cfg) {
  double left = cfg.deadline_s > 0 ? cfg.deadline_s - monotonic_seconds() : std::numeric_limits<double>::infinity();
  return exchange_timeout_s(cfg.limits, left);
}

namespace {

/// vLLM's result "date": local time as %Y%m%d-%H%M%S.
std::string vllm_date_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

load_options make_load_options(const client_config& cfg, const client_hooks& hooks) {
  load_options lo;
  lo.url = cfg.url;
  lo.path = cfg.endpoint;
  lo.api = contains(cfg.endpoint, "chat/completions") ? api_kind::chat : api_kind::completions;
  lo.max_concurrency = cfg.max_concurrency;
  lo.limits = cfg.limits;
  lo.keep_text = cfg.keep_text;
  lo.headers = cfg.headers;
  lo.kernel_timestamps = cfg.kernel_timestamps;
  lo.abort_check = hooks.abort_check;
  return lo;
}

request_record new_record(size_t i, const std::string& id, const prompt_spec& p, int64_t sched) {
  request_record r;
  r.index = i;
  r.id = id;
  r.prompt_len = p.prompt_len;
  r.max_tokens = p.output_len;
  r.scheduled_ns = sched;
  return r;
}

status run_warmups(const client_config& cfg, const client_hooks& hooks, const std::vector<prompt_spec>& prompts,
                   const std::string& prefix, client_result& out) {
  if (cfg.num_warmups <= 0) return ok_status();
  std::vector<std::string> bodies;
  int64_t t = monotonic_ns();
  for (int k = 0; k < cfg.num_warmups; ++k) {
    const prompt_spec& p = prompts[static_cast<size_t>(k) % prompts.size()];
    out.warmups.push_back(new_record(static_cast<size_t>(k), strprintf("%s-w%d", prefix.c_str(), k), p, t));
    out.warmups.back().warmup = true;
    bodies.push_back(request_body(cfg, out.model, p));
  }
  MAGPIE_LOG_INFO("warm-up: %d request(s)", cfg.num_warmups);
  MAGPIE_RETURN_IF_ERROR(run_load(make_load_options(cfg, hooks), bodies, out.warmups));
  for (const auto& r : out.warmups)
    if (r.success) return ok_status();
  return error(status_code::failed_precondition, "every warm-up request failed; first error: %s",
               out.warmups.front().error.c_str());
}

}  // namespace

status_or<client_result> run_client(const client_config& cfg, const client_hooks& hooks) {
  rx_timestamp_primer primer(cfg.kernel_timestamps);  // before the first connection (see socket_read.h)
  client_result out;
  out.model = cfg.model;
  if (out.model.empty()) {
    MAGPIE_ASSIGN_OR_RETURN(out.model, first_served_model(cfg.url, exchange_timeout_s(cfg)));
  }
  MAGPIE_ASSIGN_OR_RETURN(std::vector<prompt_spec> prompts, load_dataset(cfg.dataset));
  raise_open_file_limit();
  std::string prefix = cfg.request_id_prefix.empty() ? strprintf("magpie-%d", static_cast<int>(getpid())) : cfg.request_id_prefix;
  MAGPIE_RETURN_IF_ERROR(run_warmups(cfg, hooks, prompts, prefix, out));
  if (hooks.before_run) MAGPIE_RETURN_IF_ERROR(hooks.before_run());
  std::vector<std::string> bodies;
  bodies.reserve(prompts.size());
  for (const auto& p : prompts) bodies.push_back(request_body(cfg, out.model, p));
  std::vector<double> offsets = arrival_offsets(prompts.size(), cfg.arrivals);
  out.records.reserve(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i)  // schedule offsets first; the origin is set last
    out.records.push_back(new_record(i, strprintf("%s-%zu", prefix.c_str(), i), prompts[i], static_cast<int64_t>(offsets[i] * 1e9)));
  load_options lo = make_load_options(cfg, hooks);
  size_t done = 0, total = out.records.size();
  lo.on_done = [&](const request_record&) {
    if (hooks.on_progress) hooks.on_progress(++done, total);
  };
  std::string abort_reason;
  lo.abort_check = [&]() {
    if (hooks.abort_check && abort_reason.empty()) abort_reason = hooks.abort_check();
    return abort_reason;
  };
  MAGPIE_LOG_INFO("benchmark: %zu request(s) to %s%s, model %s", total, cfg.url.to_string().c_str(), cfg.endpoint.c_str(),
                  out.model.c_str());
  // The origin is set when everything else is ready, with a 1 ms lead, so that building the
  // run does not make the first arrivals late (schedule slip).
  out.t0_ns = monotonic_ns() + 1000000;
  for (auto& r : out.records) r.scheduled_ns += out.t0_ns;
  MAGPIE_RETURN_IF_ERROR(run_load(lo, bodies, out.records, &out.load));
  out.aborted = abort_reason.empty() ? out.load.aborted : abort_reason;
  if (hooks.after_run) {
    if (auto st = hooks.after_run(); !st.ok()) MAGPIE_LOG_WARN("%s", st.message().c_str());
  }
  out.metrics = compute_metrics(out.records, out.t0_ns, cfg.metrics);
  out.metrics.read_lag = summarize_ms(std::vector<double>(out.load.read_lag_ms.begin(), out.load.read_lag_ms.end()),
                                      cfg.metrics.percentiles);
  out.metrics.timestamp_source = out.load.timestamp_source();
  run_info info;
  info.backend = contains(cfg.endpoint, "chat/completions") ? "openai-chat" : "openai";
  info.label = cfg.label;
  info.model_id = out.model;
  info.base_url = cfg.url.to_string();
  info.endpoint = cfg.endpoint;
  info.dataset_name = cfg.dataset.name;
  info.num_prompts = prompts.size();
  info.date = vllm_date_now();
  out.vllm_json = vllm_result_json(out.metrics, out.records, out.t0_ns, cfg.metrics, info);
  return out;
}

std::string request_details_jsonl(const std::vector<request_record>& records, int64_t t0_ns) {
  std::string out;
  auto rel = [&](int64_t t) { return t > 0 ? json(static_cast<double>(t - t0_ns) / 1e6) : json(nullptr); };
  for (const auto& r : records) {
    json j;
    j["id"] = r.id;
    j["index"] = r.index;
    j["warmup"] = r.warmup;
    j["scheduled_ms"] = rel(r.scheduled_ns);
    j["arrival_ms"] = rel(r.arrival_ns);
    j["start_ms"] = rel(r.start_ns);
    j["end_ms"] = rel(r.end_ns);
    j["http_status"] = r.http_status;
    j["success"] = r.success;
    j["error"] = r.error;
    j["prompt_len"] = r.prompt_len;
    j["prompt_tokens"] = r.stream.prompt_tokens;
    j["max_tokens"] = r.max_tokens;
    std::string src;
    j["output_tokens"] = output_token_count(r.stream, &src);
    j["output_tokens_source"] = src;
    j["finish_reason"] = r.stream.finish_reason;
    j["reused_connection"] = r.reused_connection;
    json d = json::array();
    for (const auto& del : r.stream.deliveries) d.push_back(json::array({static_cast<double>(del.t_ns - t0_ns) / 1e6, del.tokens}));
    j["deliveries_ms_tokens"] = std::move(d);
    json chunks = json::array();
    for (int64_t t : r.stream.choice_times) chunks.push_back(static_cast<double>(t - t0_ns) / 1e6);
    j["chunks_ms"] = std::move(chunks);
    j["completion_tokens_usage"] = r.stream.completion_tokens >= 0 ? json(r.stream.completion_tokens) : json(nullptr);
    j["content_events"] = r.stream.content_events;
    j["monotonic_start_ns"] = r.start_ns;
    j["monotonic_t0_ns"] = t0_ns;
    out += dump_compact(j) + "\n";
  }
  return out;
}

}  // namespace magpie::serve
