#include "serve/metrics.h"

#include <algorithm>
#include <cmath>

#include "core/stats.h"
#include "core/strings.h"

namespace magpie::serve {

namespace {

constexpr double k_ns_per_ms = 1e6;

double ms(int64_t ns) { return static_cast<double>(ns) / k_ns_per_ms; }

void merge_source(std::string& acc, const std::string& s) {
  if (acc.empty()) acc = s;
  else if (acc != s) acc = "mixed";
}

/// Peak of intervals in flight over half-open [start, end): ends sort before starts at a tie.
int64_t peak_in_flight(std::vector<std::pair<int64_t, int>> ev) {
  std::sort(ev.begin(), ev.end());
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

/// Sample lists of one computation, in ms.
struct samples {
  std::vector<double> ttft, tpot, itl, e2el, cqueue, e2el_cq;                        // vLLM
  std::vector<double> ttft_c, tpot_c, itl_read, itl_token, e2el_resp, queue, e2el_q, slip;  // magpie
};

/// vLLM's per-request part: distributions, goodput, peak chunks per second, peak concurrency.
void add_vllm(const request_record& r, const vllm_request_view& v, const metric_options& o, samples& s, serving_metrics& m) {
  const auto& ct = r.stream.choice_times;
  s.ttft.push_back(ms(v.ttft_ns));
  s.e2el.push_back(ms(v.latency_ns));
  for (size_t i = 1; i < ct.size(); ++i) s.itl.push_back(ms(ct[i] - ct[i - 1]));
  double tpot = 0;
  if (v.output_len > 1) {
    tpot = ms(v.latency_ns - v.ttft_ns) / static_cast<double>(v.output_len - 1);
    s.tpot.push_back(tpot);
  }
  double cq = ms(r.start_ns - r.arrival_ns);
  s.cqueue.push_back(cq);
  s.e2el_cq.push_back(ms(v.latency_ns) + cq);
  bool good = true;
  for (const auto& [k, slo] : o.goodput_slo_ms) {
    double val = k == "ttft" ? ms(v.ttft_ns) : k == "tpot" ? tpot : ms(v.latency_ns);
    if (val > slo) good = false;
  }
  if (good && !o.goodput_slo_ms.empty()) ++m.good_requests;
}

/// vLLM's peak output chunks per second and peak concurrency over successful requests.
void vllm_peaks(const std::vector<std::pair<const request_record*, vllm_request_view>>& ok, serving_metrics& m) {
  if (ok.empty()) return;
  int64_t min_start = ok.front().first->start_ns, max_end = min_start;
  for (const auto& [r, v] : ok) {
    min_start = std::min(min_start, r->start_ns);
    max_end = std::max(max_end, r->start_ns + v.latency_ns);
  }
  auto nbuckets = static_cast<size_t>(std::ceil(static_cast<double>(max_end - min_start) * 1e-9)) + 1;
  std::vector<double> buckets(nbuckets, 0.0);
  std::vector<std::pair<int64_t, int>> ev;
  for (const auto& [r, v] : ok) {
    for (int64_t t : r->stream.choice_times) {
      auto b = static_cast<size_t>(static_cast<double>(t - min_start) * 1e-9);
      if (b < nbuckets) buckets[b] += 1;
    }
    ev.emplace_back(r->start_ns, +1);
    ev.emplace_back(r->start_ns + v.latency_ns, -1);
  }
  m.max_output_tokens_per_s = *std::max_element(buckets.begin(), buckets.end());
  m.max_concurrent_requests = peak_in_flight(std::move(ev));
}

/// magpie's per-request part for a successful request.
void add_magpie(const request_record& r, int64_t output_tokens, samples& s, size_t* with_deltas) {
  const auto& del = r.stream.deliveries;
  if (!del.empty()) s.ttft_c.push_back(ms(del.front().t_ns - r.start_ns));
  if (output_tokens > 1 && !del.empty())
    s.tpot_c.push_back(ms(del.back().t_ns - del.front().t_ns) / static_cast<double>(output_tokens - 1));
  for (size_t i = 1; i < del.size(); ++i) s.itl_read.push_back(ms(del[i].t_ns - del[i - 1].t_ns));
  s.e2el_resp.push_back(ms(r.end_ns - r.start_ns));
  s.e2el_q.push_back(ms(r.end_ns - r.scheduled_ns));
  bool all_known = !del.empty();
  for (const auto& d : del) all_known = all_known && d.tokens > 0;
  if (!all_known) return;
  ++*with_deltas;
  for (size_t i = 1; i < del.size(); ++i) {
    double per = ms(del[i].t_ns - del[i - 1].t_ns) / del[i].tokens;
    for (int32_t k = 0; k < del[i].tokens; ++k) s.itl_token.push_back(per);
  }
}

void set_distributions(samples& s, const std::vector<double>& p, serving_metrics& m) {
  m.ttft = summarize_ms(std::move(s.ttft), p);
  m.tpot = summarize_ms(std::move(s.tpot), p);
  m.itl = summarize_ms(std::move(s.itl), p);
  m.e2el = summarize_ms(std::move(s.e2el), p);
  m.client_queue_time = summarize_ms(std::move(s.cqueue), p);
  m.e2el_including_client_queue = summarize_ms(std::move(s.e2el_cq), p);
  m.ttft_content = summarize_ms(std::move(s.ttft_c), p);
  m.tpot_content = summarize_ms(std::move(s.tpot_c), p);
  m.itl_read = summarize_ms(std::move(s.itl_read), p);
  m.itl_token = summarize_ms(std::move(s.itl_token), p);
  m.e2el_response = summarize_ms(std::move(s.e2el_resp), p);
  m.queue_time = summarize_ms(std::move(s.queue), p);
  m.e2el_incl_queue = summarize_ms(std::move(s.e2el_q), p);
  m.schedule_slip = summarize_ms(std::move(s.slip), p);
  m.read_lag = summarize_ms({}, p);
}

}  // namespace

double distribution::at(double p) const {
  for (const auto& [q, v] : percentiles)
    if (q == p) return v;
  return 0;
}

const std::vector<double>& report_percentiles() {
  static const std::vector<double> p = {50, 90, 95, 99};
  return p;
}

distribution summarize_ms(std::vector<double> v, const std::vector<double>& pcts) {
  std::vector<double> all = report_percentiles();
  all.insert(all.end(), pcts.begin(), pcts.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  distribution d;
  d.n = v.size();
  std::sort(v.begin(), v.end());
  if (!v.empty()) {
    d.mean = mean(v);
    double acc = 0;
    for (double x : v) acc += (x - d.mean) * (x - d.mean);
    d.std = std::sqrt(acc / static_cast<double>(v.size()));
    d.median = percentile_sorted(v, 50);
    d.min = v.front();
    d.max = v.back();
  }
  for (double p : all) d.percentiles.emplace_back(p, v.empty() ? 0.0 : percentile_sorted(v, p));
  return d;
}

vllm_request_view vllm_view(const request_record& r) {
  vllm_request_view v;
  v.success = r.success;
  v.prompt_len = r.stream.prompt_tokens >= 0 ? r.stream.prompt_tokens : r.prompt_len;
  const auto& ct = r.stream.choice_times;
  if (!ct.empty() && r.start_ns > 0) v.ttft_ns = ct.front() - r.start_ns;
  if (!r.success) return v;
  if (!ct.empty()) v.latency_ns = ct.back() - r.start_ns;
  v.output_len = output_token_count(r.stream, &v.output_source);
  return v;
}

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

status_or<std::vector<std::string>> parse_percentile_metrics(const std::string& list) {
  static const char* const known[] = {"ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue",
                                      "ttft_content", "tpot_content", "itl_read", "itl_token", "e2el_response",
                                      "queue_time", "e2el_incl_queue", "schedule_slip", "read_lag"};
  std::vector<std::string> out;
  for (const auto& item : split(list, ',')) {
    std::string name(trim(item));
    if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return name == k; }) == std::end(known))
      return invalid_argument("--percentile-metrics: unknown metric '%s' (ttft, tpot, itl, e2el, client_queue_time, "
                              "e2el_including_client_queue, or one of magpie's: ttft_content, itl_read, ...)", name.c_str());
    out.push_back(name);
  }
  return out;
}

serving_metrics compute_metrics(const std::vector<request_record>& records, int64_t t0_ns, const metric_options& o) {
  serving_metrics m;
  samples s;
  std::vector<std::pair<const request_record*, vllm_request_view>> ok;
  std::vector<int64_t> starts, scheduled;
  int64_t last_end = t0_ns;
  double busy_s = 0;
  for (const auto& r : records) {
    if (r.warmup) continue;
    ++m.num_requests;
    scheduled.push_back(r.scheduled_ns);
    if (r.arrival_ns > 0) s.slip.push_back(ms(r.arrival_ns - r.scheduled_ns));
    if (r.start_ns > 0) {
      starts.push_back(r.start_ns);
      s.queue.push_back(ms(r.start_ns - r.scheduled_ns));
      last_end = std::max(last_end, r.end_ns);
      busy_s += static_cast<double>(r.end_ns - r.start_ns) * 1e-9;
    }
    m.role_only_chunks += r.stream.role_only_events;
    m.coalesced_events += r.stream.coalesced_events;
    vllm_request_view v = vllm_view(r);
    m.input_lens.push_back(v.prompt_len);
    m.output_lens.push_back(v.output_len);
    if (!r.success) {
      ++m.failed;
      continue;
    }
    ++m.completed;
    merge_source(m.output_tokens_source, v.output_source);
    merge_source(m.input_tokens_source, r.stream.prompt_tokens >= 0 ? "usage" : "dataset");
    m.total_input_tokens += v.prompt_len;
    m.total_output_tokens += v.output_len;
    add_vllm(r, v, o, s, m);
    add_magpie(r, v.output_len, s, &m.requests_with_token_deltas);
    ok.emplace_back(&r, std::move(v));
  }
  vllm_peaks(ok, m);
  m.goodput_configured = !o.goodput_slo_ms.empty();
  m.duration_s = static_cast<double>(last_end - t0_ns) * 1e-9;
  if (m.duration_s > 0) {
    m.request_throughput = static_cast<double>(m.completed) / m.duration_s;
    m.request_goodput = static_cast<double>(m.good_requests) / m.duration_s;
    m.output_throughput = static_cast<double>(m.total_output_tokens) / m.duration_s;
    m.total_token_throughput = static_cast<double>(m.total_input_tokens + m.total_output_tokens) / m.duration_s;
    m.mean_concurrency = busy_s / m.duration_s;
  }
  m.achieved_request_rate = rate_of(starts);
  m.scheduled_request_rate = rate_of(scheduled);
  set_distributions(s, o.percentiles, m);
  return m;
}

}  // namespace magpie::serve
