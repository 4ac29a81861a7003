// The only translation unit that includes Boost.Asio/Beast (they cost ~18 s to compile).
// Reads are done on the socket by us (each completion stamped with CLOCK_MONOTONIC) and the
// bytes are then handed to Beast's HTTP/1.1 parser synchronously, so a timestamp always
// belongs to the read that delivered the bytes, whatever the parser buffers.
#include <sys/resource.h>

#include <utility>  // before Asio (GCC 12 / C++20 awaitable.hpp needs std::exchange)

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <random>

#include "core/strings.h"
#include "net/asio_resolve.h"
#include "serve/http_client.h"
#include "serve/socket_read.h"

namespace magpie::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

uint64_t raise_open_file_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  return rl.rlim_cur;
}

namespace {

struct connection {
  connection(asio::io_context& io, size_t body_chunk) : sock(io), body(new char[body_chunk]), body_size(body_chunk) {}
  tcp::socket sock;
  beast::flat_buffer buf;             ///< bytes read from the socket, not yet parsed
  std::unique_ptr<char[]> body;       ///< parsed body bytes of one parse step (uninitialised)
  size_t body_size;
  bool used = false;  ///< carried an earlier exchange (a keep-alive reuse)
  bool kernel_ts = false;  ///< SO_TIMESTAMPING is on
};

using parser_t = http::response_parser<http::buffer_body>;

/// One request/response exchange on a connection.
struct exchange {
  exchange(asio::io_context& io, size_t i, api_kind api, bool keep_text) : index(i), timer(io), decoder(api, keep_text) {}
  size_t index;
  size_t active_pos = 0;  ///< position in runner::m_active
  std::shared_ptr<connection> conn;
  asio::steady_timer timer;
  std::optional<parser_t> parser;
  openai_stream_decoder decoder;
  std::string error_body;
  std::string wire_head;
  request_limits lim;
  uint64_t body_bytes = 0;  ///< response body bytes so far (the response cap)
  bool header_seen = false, got_bytes = false, retried = false, finished = false;
  bool event_stream = false;
  std::string stop_reason;  ///< set when we close the socket on purpose (timeout, abort)
};

class runner {
 public:
  runner(const load_options& o, const std::vector<std::string>& bodies, std::vector<request_record>& recs, load_stats& st)
      : m_opts(o), m_bodies(bodies), m_recs(recs), m_stats(st), m_sched_timer(m_io), m_abort_timer(m_io) {}

  status run() {
    MAGPIE_ASSIGN_OR_RETURN(m_endpoint, net::resolve_endpoint(m_io, m_opts.url));
    m_target = m_opts.url.base_path + m_opts.path;
    m_host_header = strprintf("%s:%u", m_opts.url.host.c_str(), m_opts.url.port);
    rx_timestamp_primer primer(m_opts.kernel_timestamps);
    schedule_next();
    if (m_opts.abort_check) arm_abort_check();
    for (;;) {
      // A handler that throws leaves run(); the io_context stays usable (Asio's contract), so
      // the failure is booked on the request being handled and the loop goes on.
      std::string what;
      try {
        m_io.run();
        return ok_status();
      } catch (const std::bad_alloc&) {
        what = "out of memory in the client (std::bad_alloc)";
      } catch (const std::exception& e) {
        what = std::string("client error: ") + e.what();
      } catch (...) {
        what = "client error: unknown exception";
      }
      if (!recover(what)) return ok_status();
    }
  }

 private:
  /// Books an exception from a handler: the request being handled fails with `what`; without
  /// one, the run stops as an abort. False when even that failed (the records keep what they have).
  bool recover(const std::string& what) {
    std::shared_ptr<exchange> ex = std::move(m_thrown);
    m_thrown.reset();
    m_current.reset();
    try {
      if (ex && !ex->finished) {
        const char* where = ex->header_seen ? " while reading the response; the response was dropped" : "";
        fail(ex, what + where);
      } else {
        abort_all(what);
      }
      return true;
    } catch (...) {
      return false;
    }
  }

  /// Marks the request whose handler runs; when an exception unwinds through it, the innermost
  /// such request is kept in m_thrown for recover().
  struct current_guard {
    current_guard(runner& r, const std::shared_ptr<exchange>& ex)
        : m_r(r), m_prev(std::move(r.m_current)), m_uncaught(std::uncaught_exceptions()) {
      m_r.m_current = ex;
    }
    ~current_guard() {
      if (std::uncaught_exceptions() > m_uncaught && !m_r.m_thrown) m_r.m_thrown = m_r.m_current;
      m_r.m_current = std::move(m_prev);
    }
    current_guard(const current_guard&) = delete;
    current_guard& operator=(const current_guard&) = delete;
    runner& m_r;
    std::shared_ptr<exchange> m_prev;
    int m_uncaught;
  };

  int64_t now() const { return monotonic_ns(); }
  size_t chunk_bytes() const { return std::max<size_t>(m_opts.read_buffer_bytes, 4096); }

  void schedule_next() {
    int64_t t = now();
    while (m_next < m_recs.size() && m_recs[m_next].scheduled_ns <= t) arrive(m_next++);
    if (m_next >= m_recs.size()) return;
    m_sched_timer.expires_after(std::chrono::nanoseconds(m_recs[m_next].scheduled_ns - t));
    m_sched_timer.async_wait([this](boost::system::error_code ec) {
      if (!ec && m_abort.empty() && !m_finished) schedule_next();
    });
  }

  void arrive(size_t i) {
    m_recs[i].arrival_ns = now();
    if (m_opts.max_concurrency > 0 && m_in_flight >= m_opts.max_concurrency) {
      m_pending.push_back(i);
      return;
    }
    start(i);
  }

  void start(size_t i) {
    request_record& r = m_recs[i];
    r.start_ns = now();
    auto ex = std::make_shared<exchange>(m_io, i, m_opts.api, m_opts.keep_text);
    current_guard g(*this, ex);
    ++m_in_flight;
    ex->lim = limits_for(m_opts.limits, r.prompt_len, r.max_tokens);
    ex->decoder.set_limits(ex->lim.max_event_bytes, ex->lim.max_chunks);
    ex->wire_head = strprintf(
        "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"
        "User-Agent: magpie\r\nX-Request-Id: %s\r\nContent-Length: %zu\r\n",
        m_target.c_str(), m_host_header.c_str(), r.id.c_str(), m_bodies[i].size());
    for (const auto& [k, v] : m_opts.headers) ex->wire_head += k + ": " + v + "\r\n";
    ex->wire_head += "\r\n";
    ex->active_pos = m_active.size();
    m_active.push_back(ex);
    if (ex->lim.timeout_s > 0) {
      ex->timer.expires_after(std::chrono::nanoseconds(static_cast<int64_t>(std::min(ex->lim.timeout_s, 1e9) * 1e9)));
      ex->timer.async_wait([this, ex](boost::system::error_code ec) {
        current_guard g(*this, ex);
        if (!ec && !ex->finished) stop(ex, timeout_reason(ex->lim));
      });
    }
    acquire(ex);
  }

  void acquire(const std::shared_ptr<exchange>& ex) {
    if (!m_idle.empty()) {
      ex->conn = m_idle.back();
      m_idle.pop_back();
      send(ex);
      return;
    }
    ex->conn = std::make_shared<connection>(m_io, chunk_bytes());
    ex->conn->sock.async_connect(m_endpoint, [this, ex](boost::system::error_code ec) {
      current_guard g(*this, ex);
      if (ec) return fail(ex, "connect to " + m_opts.url.to_string() + " failed: " + ec.message());
      boost::system::error_code ignored;
      ex->conn->sock.set_option(tcp::no_delay(true), ignored);
      if (m_opts.kernel_timestamps) ex->conn->kernel_ts = enable_rx_timestamps(ex->conn->sock.native_handle());
      send(ex);
    });
  }

  void send(const std::shared_ptr<exchange>& ex) {
    m_recs[ex->index].reused_connection = ex->conn->used;
    ex->parser.emplace();
    ex->parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    ex->parser->eager(true);
    ex->conn->buf.clear();
    std::array<asio::const_buffer, 2> bufs = {asio::buffer(ex->wire_head), asio::buffer(m_bodies[ex->index])};
    asio::async_write(ex->conn->sock, bufs, [this, ex](boost::system::error_code ec, size_t) {
      current_guard g(*this, ex);
      if (ec) return io_failed(ex, ec, "sending the request");
      receive(ex, false);
    });
  }

  /// Reads and parses what the socket holds, stamping every read where it happens. `try_now`:
  /// read before waiting (the last read filled the buffer). Otherwise wait for readability
  /// first: Asio's wait re-arms the descriptor (EPOLL_CTL_MOD), so bytes already queued, e.g.
  /// a response that arrived while the request was being written, complete it at once.
  void receive(const std::shared_ptr<exchange>& ex, bool try_now) {
    connection& c = *ex->conn;
    while (try_now) {
      auto space = c.buf.prepare(chunk_bytes());
      stamped_read r = read_stamped(c.sock.native_handle(), static_cast<char*>(space.data()), space.size(), c.kernel_ts);
      if (r.n < 0) {
        if (r.err == EINTR) continue;
        if (r.err == EAGAIN || r.err == EWOULDBLOCK) break;
        return io_failed(ex, boost::system::error_code(r.err, boost::system::system_category()), "reading the response");
      }
      if (r.n == 0) return on_eof(ex, r.t_read);
      ex->got_bytes = true;
      c.buf.commit(static_cast<size_t>(r.n));
      if (!parse(ex, stamp(r))) return;
      try_now = static_cast<size_t>(r.n) == space.size();
    }
    c.sock.async_wait(tcp::socket::wait_read, [this, ex](boost::system::error_code ec) {
      current_guard g(*this, ex);
      if (ec) return io_failed(ex, ec, "reading the response");
      receive(ex, true);
    });
  }

  /// The time of record for a read: the kernel's receive time when it has one.
  int64_t stamp(const stamped_read& r) {
    ++m_stats.reads;
    if (r.t_kernel <= 0) return r.t_read;
    int64_t k = r.t_kernel - m_offset.at(r.t_read);
    if (k > r.t_read) k = r.t_read;  // clock jitter between the two samples
    if (r.t_read - k > 3600LL * 1000000000) return r.t_read;  // implausible (clock step): keep the read time
    ++m_stats.kernel_stamped_reads;
    m_stats.add_read_lag(static_cast<float>(static_cast<double>(r.t_read - k) * 1e-6));
    return k;
  }

  /// Feeds buffered bytes to the parser; returns true when more bytes are needed.
  bool parse(const std::shared_ptr<exchange>& ex, int64_t t) {
    parser_t& p = *ex->parser;
    connection& c = *ex->conn;
    for (;;) {
      p.get().body().data = c.body.get();
      p.get().body().size = c.body_size;
      boost::system::error_code ec;
      size_t used = p.put(ex->conn->buf.data(), ec);
      ex->conn->buf.consume(used);
      if (ec == http::error::need_buffer) ec = {};
      bool need_more = ec == http::error::need_more;
      if (need_more) ec = {};
      if (ec) {
        fail(ex, "malformed HTTP response: " + ec.message());
        return false;
      }
      if (p.is_header_done() && !ex->header_seen) on_header(ex);
      size_t got = c.body_size - p.get().body().size;
      if (got && !on_body(ex, std::string_view(c.body.get(), got), t)) return false;
      if (p.is_done()) {
        finish(ex, t);
        return false;
      }
      if (need_more || (used == 0 && got == 0) || ex->conn->buf.size() == 0) return true;
    }
  }

  void on_header(const std::shared_ptr<exchange>& ex) {
    ex->header_seen = true;
    const auto& msg = ex->parser->get();
    m_recs[ex->index].http_status = static_cast<int>(msg.result_int());
    auto ct = msg[http::field::content_type];
    ex->event_stream = contains(to_lower(std::string_view(ct.data(), ct.size())), "text/event-stream");
  }

  /// False when the request was failed here (a limit passed).
  /// The decoder's own limits (one event, chunks) are checked first: they name the cause better
  /// than the response total when one read passes both.
  bool on_body(const std::shared_ptr<exchange>& ex, std::string_view bytes, int64_t t) {
    ex->body_bytes += bytes.size();
    if (m_recs[ex->index].http_status == 200) {
      ex->decoder.on_body(bytes, t);
      if (!ex->decoder.fatal().empty()) {
        fail(ex, cut_reason(ex, ex->decoder.fatal()));
        return false;
      }
    } else if (ex->error_body.size() < 4096) {
      ex->error_body.append(bytes.substr(0, 4096 - ex->error_body.size()));
    }
    if (ex->lim.max_response_bytes != 0 && ex->body_bytes > ex->lim.max_response_bytes) {
      fail(ex, cut_reason(ex, strprintf("the response exceeded %llu bytes (--max-response-bytes)",
                                        static_cast<unsigned long long>(ex->lim.max_response_bytes))));
      return false;
    }
    return true;
  }

  std::string cut_reason(const std::shared_ptr<exchange>& ex, const std::string& why) {
    return strprintf("%s; the request was stopped after %zu token chunk(s)", why.c_str(), ex->decoder.result().content_events);
  }

  void on_eof(const std::shared_ptr<exchange>& ex, int64_t t) {
    if (!ex->got_bytes && ex->conn->used && !ex->retried) return retry(ex);
    boost::system::error_code ec;
    if (ex->parser && ex->header_seen) ex->parser->put_eof(ec);
    if (ex->parser && ex->header_seen && !ec && ex->parser->is_done()) return finish(ex, t);
    fail(ex, describe_cut(ex, "the server closed the connection"));
  }

  void io_failed(const std::shared_ptr<exchange>& ex, boost::system::error_code ec, const char* what) {
    if (!ex->stop_reason.empty()) return fail(ex, ex->stop_reason);
    if (!ex->got_bytes && ex->conn->used && !ex->retried) return retry(ex);
    fail(ex, describe_cut(ex, std::string(what) + ": " + ec.message()));
  }

  std::string describe_cut(const std::shared_ptr<exchange>& ex, const std::string& what) {
    if (!ex->header_seen) return what + " before any response";
    const auto& s = ex->decoder.result();
    return strprintf("stream aborted: %s after %zu token chunk(s)", what.c_str(), s.content_events);
  }

  /// A reused keep-alive connection the server had closed: send once more on a fresh one.
  void retry(const std::shared_ptr<exchange>& ex) {
    ex->retried = true;
    close_conn(ex->conn);
    ex->conn.reset();
    for (auto it = m_idle.begin(); it != m_idle.end();) it = m_idle.erase(it);  // likely all stale
    acquire(ex);
  }

  void finish(const std::shared_ptr<exchange>& ex, int64_t t) {
    request_record& r = m_recs[ex->index];
    const stream_result& s = ex->decoder.result();
    bool keep = ex->parser->get().keep_alive();
    if (r.http_status != 200) {
      std::string body(trim(ex->error_body));
      r.error = strprintf("HTTP %d%s%s", r.http_status, body.empty() ? "" : ": ", body.substr(0, 300).c_str());
    } else if (!ex->event_stream && s.events == 0) {
      auto ct = ex->parser->get()[http::field::content_type];
      r.error = "the server did not stream (Content-Type: " + std::string(ct.data(), ct.size()) + ")";
    } else if (!s.error.empty()) {
      r.error = "server error in stream: " + s.error;
    } else if (s.deliveries.empty()) {
      r.error = "the stream ended without a generated token";
    }
    r.success = r.error.empty();
    if (keep) {
      ex->conn->used = true;
      m_idle.push_back(ex->conn);
    } else {
      close_conn(ex->conn);
    }
    complete(ex, t);
  }

  void fail(const std::shared_ptr<exchange>& ex, const std::string& why) {
    if (ex->finished) return;
    m_recs[ex->index].error = why;
    m_recs[ex->index].success = false;
    if (ex->conn) close_conn(ex->conn);
    complete(ex, now());
  }

  void complete(const std::shared_ptr<exchange>& ex, int64_t t) {
    ex->finished = true;
    ex->timer.cancel();
    request_record& r = m_recs[ex->index];
    r.end_ns = t;
    r.stream = std::move(ex->decoder.result());
    --m_in_flight;
    remove_active(ex);
    if (m_opts.on_done) m_opts.on_done(r);
    if (!m_abort.empty()) return maybe_done();
    while (!m_pending.empty() && (m_opts.max_concurrency <= 0 || m_in_flight < m_opts.max_concurrency)) {
      size_t i = m_pending.front();
      m_pending.pop_front();
      start(i);
    }
    maybe_done();
  }

  void remove_active(const std::shared_ptr<exchange>& ex) {
    size_t i = ex->active_pos;
    if (i >= m_active.size() || m_active[i] != ex) return;
    if (i + 1 != m_active.size()) {
      m_active[i] = std::move(m_active.back());
      m_active[i]->active_pos = i;
    }
    m_active.pop_back();
  }

  void maybe_done() {
    if (m_in_flight == 0 && m_pending.empty() && (m_next >= m_recs.size() || !m_abort.empty())) {
      m_finished = true;  // a timer handler already queued must not re-arm
      m_abort_timer.cancel();
      m_sched_timer.cancel();
      for (auto& c : m_idle) close_conn(c);
      m_idle.clear();
    }
  }

  void stop(const std::shared_ptr<exchange>& ex, const std::string& why) {
    ex->stop_reason = why;
    boost::system::error_code ignored;
    if (ex->conn) ex->conn->sock.close(ignored);
  }

  static void close_conn(const std::shared_ptr<connection>& c) {
    boost::system::error_code ignored;
    c->sock.shutdown(tcp::socket::shutdown_both, ignored);
    c->sock.close(ignored);
  }

  void arm_abort_check() {
    m_abort_timer.expires_after(std::chrono::milliseconds(20));
    m_abort_timer.async_wait([this](boost::system::error_code ec) {
      if (ec || m_finished) return;
      std::string why = m_opts.abort_check();
      if (why.empty()) return arm_abort_check();
      abort_all(why);
    });
  }

  void abort_all(const std::string& why) {
    m_abort = why;
    m_stats.aborted = why;
    m_sched_timer.cancel();
    int64_t t = now();
    auto not_sent = [&](size_t i) {
      m_recs[i].error = "not sent: " + why;
      m_recs[i].end_ns = t;
    };
    for (size_t i : m_pending) not_sent(i);
    m_pending.clear();
    for (; m_next < m_recs.size(); ++m_next) not_sent(m_next);
    auto active = m_active;
    for (auto& ex : active) stop(ex, "aborted: " + why);
    maybe_done();
  }

  const load_options& m_opts;
  const std::vector<std::string>& m_bodies;
  std::vector<request_record>& m_recs;
  load_stats& m_stats;
  clock_offset m_offset;
  asio::io_context m_io{1};
  asio::steady_timer m_sched_timer, m_abort_timer;
  tcp::endpoint m_endpoint;
  std::string m_target, m_host_header, m_abort;
  size_t m_next = 0;
  int64_t m_in_flight = 0;
  bool m_finished = false;
  std::deque<size_t> m_pending;
  std::vector<std::shared_ptr<connection>> m_idle;
  std::vector<std::shared_ptr<exchange>> m_active;
  std::shared_ptr<exchange> m_current;  ///< the request whose handler runs
  std::shared_ptr<exchange> m_thrown;   ///< the request whose handler threw (recover())
};

}  // namespace

void load_stats::add_read_lag(float ms) {
  ++read_lag_seen;
  if (read_lag_ms.size() < k_max_read_lag_samples) {
    read_lag_ms.push_back(ms);
    return;
  }
  static thread_local std::mt19937_64 rng(0x5eed);
  uint64_t j = rng() % read_lag_seen;
  if (j < k_max_read_lag_samples) read_lag_ms[j] = ms;
}

std::string load_stats::timestamp_source() const {
  if (reads == 0) return {};
  if (kernel_stamped_reads == reads) return "kernel";
  return kernel_stamped_reads == 0 ? "read" : "mixed";
}

status run_load(const load_options& opts, const std::vector<std::string>& bodies, std::vector<request_record>& records,
                load_stats* stats) {
  if (bodies.size() != records.size()) return error(status_code::internal, "run_load: %zu bodies for %zu records", bodies.size(), records.size());
  if (records.empty()) return ok_status();
  load_stats local;
  runner r(opts, bodies, records, stats ? *stats : local);
  return r.run();
}

}  // namespace magpie::serve
