// The HTTP side of the serving client: one event loop (Boost.Asio io_context on the calling
// thread) driving pooled keep-alive HTTP/1.1 connections (Boost.Beast parser), every network
// read stamped with CLOCK_MONOTONIC as it completes. Beast/Asio live only in http_client.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "net/http.h"
#include "serve/limits.h"
#include "serve/request.h"

namespace magpie::serve {

// The blocking request/response client moved to src/net (the Ray engine in src/sched uses it
// too); these names keep serve's callers unchanged.
using net::endpoint_url;
using net::http_call;
using net::http_response;
using net::parse_base_url;
using net::probe_connect;

struct load_options {
  endpoint_url url;
  std::string path = "/v1/completions";  ///< appended to url.base_path
  api_kind api = api_kind::completions;
  int64_t max_concurrency = 0;           ///< requests in flight at most (0: unlimited)
  /// Per-request timeout (from the request's start) and byte caps (serve/limits.h); a request
  /// that passes one fails with the reason, the others go on.
  limit_policy limits;
  size_t read_buffer_bytes = 256u << 10; ///< bytes per socket read, per connection
  /// Stamp response bytes with the kernel's receive time (SO_TIMESTAMPING, software RX) instead
  /// of the time of the read; falls back to the read time where the kernel gives none.
  bool kernel_timestamps = true;
  bool keep_text = false;                ///< keep the generated text of each stream (bounded by the response cap)
  std::vector<std::pair<std::string, std::string>> headers;  ///< extra request headers
  /// Polled every 20 ms; returning a non-empty reason stops the run: requests in flight and
  /// not yet sent fail with that reason, finished ones are kept.
  std::function<std::string()> abort_check;
  /// Called after each request finishes (success or not), on the loop thread.
  std::function<void(const request_record&)> on_done;
};

/// What the load run observed about the client itself.
struct load_stats {
  size_t reads = 0;                 ///< socket reads that returned response bytes
  size_t kernel_stamped_reads = 0;  ///< of them, with a kernel receive timestamp
  /// Per kernel-stamped read: read time − kernel receive time; a uniform sample of at most
  /// k_max_read_lag_samples reads (reservoir sampling) so that memory stays bounded.
  std::vector<float> read_lag_ms;
  size_t read_lag_seen = 0;         ///< kernel-stamped reads offered to the sample
  std::string aborted;              ///< why the run stopped early (abort_check or a client error); "" if it did not
  static constexpr size_t k_max_read_lag_samples = 1u << 20;
  /// Adds one read lag to the sample.
  void add_read_lag(float ms);
  /// "kernel", "read" or "mixed" (which clock stamped the response bytes); "" before any read.
  std::string timestamp_source() const;
};

/// Sends bodies[i] for records[i] at records[i].scheduled_ns (monotonic; records sorted by it)
/// and fills in the timing, status and stream fields. A status is returned only when the run
/// cannot start (bad address); per-request failures are data in the records. An exception
/// while one request is handled (std::bad_alloc included) fails that request with the reason;
/// one outside any request stops the run as an abort (unsent requests marked, finished ones kept).
status run_load(const load_options& opts, const std::vector<std::string>& bodies, std::vector<request_record>& records,
                load_stats* stats = nullptr);

/// Raises RLIMIT_NOFILE's soft limit to the hard limit; returns the new soft limit.
uint64_t raise_open_file_limit();

}  // namespace magpie::serve
