#include "serve/metrics.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/stats.h"
#include "core/strings.h"

namespace magpie::serve {

namespace {

constexpr double k_ns_per_ms = 1e6;

distribution summarize_ms(std::vector<double> v, const std::vector<double>& pcts) {
  distribution d;
  d.n = v.size();
  if (v.empty()) {
    for (double p : pcts) d.percentiles.emplace_back(p, 0.0);
    return d;
  }
  std::sort(v.begin(), v.end());
  d.mean = mean(v);
  double acc = 0;
  for (double x : v) acc += (x - d.mean) * (x - d.mean);
  d.std = std::sqrt(acc / static_cast<double>(v.size()));
  d.median = percentile_sorted(v, 50);
  d.min = v.front();
  d.max = v.back();
  for (double p : pcts) d.percentiles.emplace_back(p, percentile_sorted(v, p));
  return d;
}

double ms(int64_t ns) { return static_cast<double>(ns) / k_ns_per_ms; }

/// Tokens of one delivery for the peak-throughput buckets: usage delta, else events.
int64_t delivery_tokens(const delivery& d) { return d.tokens >= 0 ? d.tokens : d.events; }

struct derived {
  double ttft_ms = 0, tpot_ms = 0, e2el_ms = 0;
  int64_t output_tokens = 0;
  bool has_tpot = false;
};

derived derive(const request_record& r, std::string* out_source) {
  derived d;
  d.output_tokens = output_token_count(r.stream, out_source);
  const auto& del = r.stream.deliveries;
  if (!del.empty()) d.ttft_ms = ms(del.front().t_ns - r.start_ns);
  d.e2el_ms = ms(r.end_ns - r.start_ns);
  if (d.output_tokens > 1 && !del.empty()) {
    d.tpot_ms = ms(del.back().t_ns - del.front().t_ns) / static_cast<double>(d.output_tokens - 1);
    d.has_tpot = true;
  }
  return d;
}

void merge_source(std::string& acc, const std::string& s) {
  if (acc.empty()) acc = s;
  else if (acc != s) acc = "mixed";
}

void add_token_gaps(const request_record& r, std::vector<double>& itl, std::vector<double>& itl_token, size_t* with_deltas) {
  const auto& del = r.stream.deliveries;
  bool all_known = !del.empty();
  for (const auto& d : del) all_known = all_known && d.tokens > 0;
  for (size_t i = 1; i < del.size(); ++i) itl.push_back(ms(del[i].t_ns - del[i - 1].t_ns));
  if (!all_known) return;
  ++*with_deltas;
  for (size_t i = 1; i < del.size(); ++i) {
    double per = ms(del[i].t_ns - del[i - 1].t_ns) / del[i].tokens;
    for (int32_t k = 0; k < del[i].tokens; ++k) itl_token.push_back(per);
  }
}

/// Peak of requests in flight: sweep over start (+1) and end (−1) events.
int64_t peak_concurrency(const std::vector<const request_record*>& sent) {
  std::vector<std::pair<int64_t, int>> ev;
  for (const auto* r : sent) {
    ev.emplace_back(r->start_ns, +1);
    ev.emplace_back(std::max(r->end_ns, r->start_ns), -1);
  }
  std::sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : a.second < b.second; });
  int64_t cur = 0, peak = 0;
  for (const auto& e : ev) peak = std::max(peak, cur += e.second);
  return peak;
}

double rate_of(std::vector<int64_t> t) {
  if (t.size() < 2) return 0;
  std::sort(t.begin(), t.end());
  double span = static_cast<double>(t.back() - t.front()) * 1e-9;
  return span > 0 ? static_cast<double>(t.size() - 1) / span : 0;
}

}  // namespace

std::string percentile_label(double p) {
  if (p == std::floor(p)) return strprintf("%d", static_cast<int>(p));
  std::string s = strprintf("%.6f", p);
  while (!s.empty() && s.back() == '0') s.pop_back();
  return s;
}

status_or<std::map<std::string, double>> parse_goodput(const std::vector<std::string>& items) {
  std::map<std::string, double> out;
  for (const auto& it : items) {
    auto parts = split(it, ':');
    if (parts.size() != 2) return invalid_argument("--goodput: '%s' is not NAME:MS", it.c_str());
    std::string name = to_lower(trim(parts[0]));
    if (name != "ttft" && name != "tpot" && name != "e2el")
      return invalid_argument("--goodput: unknown metric '%s' (ttft, tpot, e2el)", name.c_str());
    auto v = parse_double(trim(parts[1]));
    if (!v || *v < 0) return invalid_argument("--goodput: '%s' needs a non-negative number of milliseconds", it.c_str());
    out[name] = *v;
  }
  return out;
}

serving_metrics compute_metrics(const std::vector<request_record>& records, int64_t t0_ns, const metric_options& o) {
  serving_metrics m;
  std::vector<double> ttft, tpot, itl, itl_token, e2el, queue, e2el_q;
  std::vector<const request_record*> sent;
  std::vector<int64_t> starts, scheduled;
  int64_t last_end = t0_ns;
  std::vector<int64_t> buckets;
  for (const auto& r : records) {
    if (r.warmup) continue;
    ++m.num_requests;
    scheduled.push_back(r.scheduled_ns);
    if (r.start_ns > 0) {
      sent.push_back(&r);
      starts.push_back(r.start_ns);
      queue.push_back(ms(r.start_ns - r.scheduled_ns));
      last_end = std::max(last_end, r.end_ns);
    }
    m.role_only_chunks += r.stream.role_only_events;
    m.coalesced_events += r.stream.coalesced_events;
    if (!r.success) {
      ++m.failed;
      m.input_lens.push_back(r.stream.prompt_tokens >= 0 ? r.stream.prompt_tokens : r.prompt_len);
      m.output_lens.push_back(0);
      continue;
    }
    std::string src;
    derived d = derive(r, &src);
    merge_source(m.output_tokens_source, src);
    int64_t in = r.stream.prompt_tokens >= 0 ? r.stream.prompt_tokens : r.prompt_len;
    merge_source(m.input_tokens_source, r.stream.prompt_tokens >= 0 ? "usage" : "dataset");
    ++m.completed;
    m.input_lens.push_back(in);
    m.output_lens.push_back(d.output_tokens);
    m.total_input_tokens += in;
    m.total_output_tokens += d.output_tokens;
    ttft.push_back(d.ttft_ms);
    e2el.push_back(d.e2el_ms);
    e2el_q.push_back(ms(r.end_ns - r.scheduled_ns));
    if (d.has_tpot) tpot.push_back(d.tpot_ms);
    add_token_gaps(r, itl, itl_token, &m.requests_with_token_deltas);
    for (const auto& del : r.stream.deliveries) {
      auto b = static_cast<size_t>(std::max<int64_t>(0, del.t_ns - t0_ns) / 1000000000);
      if (buckets.size() <= b) buckets.resize(b + 1, 0);
      buckets[b] += delivery_tokens(del);
    }
    bool good = true;
    auto slo = [&](const char* k, double v) {
      auto it = o.goodput_slo_ms.find(k);
      if (it != o.goodput_slo_ms.end() && v > it->second) good = false;
    };
    slo("ttft", d.ttft_ms);
    slo("tpot", d.has_tpot ? d.tpot_ms : 0.0);
    slo("e2el", d.e2el_ms);
    if (good && !o.goodput_slo_ms.empty()) ++m.good_requests;
  }
  m.goodput_configured = !o.goodput_slo_ms.empty();
  m.duration_s = static_cast<double>(last_end - t0_ns) * 1e-9;
  if (m.duration_s > 0) {
    m.request_throughput = static_cast<double>(m.completed) / m.duration_s;
    m.request_goodput = static_cast<double>(m.good_requests) / m.duration_s;
    m.output_throughput = static_cast<double>(m.total_output_tokens) / m.duration_s;
    m.total_token_throughput = static_cast<double>(m.total_input_tokens + m.total_output_tokens) / m.duration_s;
    double busy = 0;
    for (const auto* r : sent) busy += static_cast<double>(r->end_ns - r->start_ns) * 1e-9;
    m.mean_concurrency = busy / m.duration_s;
  }
  for (int64_t b : buckets) m.max_output_tokens_per_s = std::max(m.max_output_tokens_per_s, static_cast<double>(b));
  m.max_concurrent_requests = peak_concurrency(sent);
  m.achieved_request_rate = rate_of(starts);
  m.scheduled_request_rate = rate_of(scheduled);
  const auto& p = o.percentiles;
  m.ttft = summarize_ms(ttft, p);
  m.tpot = summarize_ms(tpot, p);
  m.itl = summarize_ms(itl, p);
  m.itl_token = summarize_ms(itl_token, p);
  m.e2el = summarize_ms(e2el, p);
  m.queue = summarize_ms(queue, p);
  m.e2el_incl_queue = summarize_ms(e2el_q, p);
  return m;
}

json metric_definitions() {
  json d;
  d["ttft"] = "time to first token: first read carrying a generated token minus request start (role-only and usage-only chunks are not tokens; client queueing excluded)";
  d["tpot"] = "time per output token excluding the first: (last token read - first token read) / (output tokens - 1), per request with > 1 output token";
  d["itl"] = "inter-token (inter-chunk) latency: gaps between successive reads that carried tokens, pooled over requests; events coalesced into one read count once";
  d["itl_token"] = "per-token latency: each read gap divided by the tokens it carried (server usage deltas), repeated per token; requests with per-chunk usage only";
  d["e2el"] = "end-to-end latency: end of response minus request start";
  d["queue_time"] = "client-side queueing: request start minus its scheduled arrival (max-concurrency wait, event-loop lag)";
  d["e2el_incl_queue"] = "end of response minus scheduled arrival";
  d["duration"] = "benchmark start (schedule origin) to the end of the last response, seconds";
  d["request_throughput"] = "completed requests / duration";
  d["output_throughput"] = "output tokens of completed requests / duration";
  d["total_token_throughput"] = "(input + output tokens of completed requests) / duration";
  d["request_goodput"] = "completed requests meeting every --goodput SLO / duration";
  d["max_concurrent_requests"] = "peak number of requests between start and end of response";
  d["mean_concurrency"] = "sum of (end - start) over sent requests / duration";
  d["achieved_request_rate"] = "(requests sent - 1) / (last start - first start)";
  d["statistics"] = "times in ms; std = population standard deviation; percentiles interpolate linearly between order statistics";
  d["clock"] = "CLOCK_MONOTONIC; per-request arrays in seconds relative to the benchmark start unless named otherwise";
  return d;
}

}  // namespace magpie::serve
