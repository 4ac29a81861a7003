// magpie_sim_server: a deterministic simulated OpenAI-compatible inference server for tests
// and benchmarks (loopback only). Timing follows sim_engine's continuous-batching model; every
// SSE event's send time (CLOCK_MONOTONIC ns, taken as its socket write starts) is recorded as
// ground truth (--record FILE, one JSON line per request). Failure modes: HTTP errors, aborted
// streams, never/late ready, dying mid-run, ignoring SIGTERM. Profiling: /start_profile and
// /stop_profile write a Chrome trace (.pt.trace.json.gz) to the profiler directory.
#include <signal.h>
#include <unistd.h>

#include <utility>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>

#include "core/args.h"
#include "core/json.h"
#include "core/strings.h"
#include "sim_engine.h"
#include "sim_trace.h"

namespace magpie::sim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct options {
  std::string host = "127.0.0.1", model = "sim-model", record, port_file, trace_dir;
  int port = 0;
  engine_config eng;
  bool reuse_port = false;  ///< SO_REUSEPORT: several simulators share one port (one per core)
  bool role_chunk = false, force_continuous_usage = false, never_ready = false, ignore_sigterm = false;
  double ready_after_s = 0, die_after_s = 0, die_delay_ms = 0;
  int64_t error_every = 0, error_status = 500, abort_every = 0, abort_after_tokens = 1, die_after_requests = 0;
  int64_t default_max_tokens = 16;
  int burst_steps = 1;  ///< zero-time steps run back to back before the sockets are written
  int events_per_write = 1;  ///< a stream's SSE events are held until K are due (or it ends), then written at once
};

class session;
struct out_item;

struct gen_request {
  uint64_t id = 0;
  std::string req_id, path;
  bool chat = false, stream = true, include_usage = false, continuous_usage = false;
  int64_t prompt_tokens = 0, max_tokens = 0, generated = 0, abort_after = 0;
  int64_t received_ns = 0, role_ns = 0, end_ns = 0;
  std::vector<std::pair<int64_t, int>> events;  ///< (send ns, tokens)
  std::weak_ptr<session> owner;
  std::string text;  ///< non-streaming responses
  bool aborted = false;
  std::vector<out_item> held;  ///< events waiting for --events-per-write
};

struct out_item {
  std::string data;
  std::shared_ptr<gen_request> req;  ///< whose event this is (stamped when written)
  int event = -1;
  bool role = false;
};

class server;

class session : public std::enable_shared_from_this<session> {
 public:
  session(tcp::socket s, server& srv) : m_sock(std::move(s)), m_srv(srv) {}
  void start() { read(); }
  void send(out_item item);
  /// Queues several items so that they leave in one write.
  void send_batch(std::vector<out_item>& items);
  void flush_deferred() { flush(); }
  void close_after_write() { m_close_after = true; maybe_close(); }
  bool open() const { return m_sock.is_open(); }

 private:
  void read();
  void flush();
  void maybe_close();
  tcp::socket m_sock;
  server& m_srv;
  beast::flat_buffer m_buf;
  http::request<http::string_body> m_req;
  std::deque<out_item> m_out;
  bool m_writing = false, m_close_after = false;
  std::string m_wire;
  std::vector<out_item> m_batch;
};

class server {
 public:
  explicit server(options o) : m_opts(std::move(o)), m_acceptor(m_io), m_engine(m_opts.eng), m_step_timer(m_io), m_die_timer(m_io) {}

  int run() {
    boost::system::error_code ec;
    tcp::endpoint ep(asio::ip::make_address(m_opts.host, ec), static_cast<uint16_t>(m_opts.port));
    if (ec) return fail("bad --host " + m_opts.host);
    m_acceptor.open(ep.protocol(), ec);
    m_acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (m_opts.reuse_port) m_acceptor.set_option(asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true), ec);
    m_acceptor.bind(ep, ec);
    if (ec) return fail("cannot bind " + m_opts.host + ":" + std::to_string(m_opts.port) + ": " + ec.message());
    m_acceptor.listen(asio::socket_base::max_listen_connections, ec);
    unsigned port = m_acceptor.local_endpoint().port();
    if (!m_opts.record.empty() && !(m_record = std::fopen(m_opts.record.c_str(), "w"))) return fail("cannot write " + m_opts.record);
    if (!m_opts.port_file.empty()) (void)write_file_atomic(m_opts.port_file, std::to_string(port) + "\n");
    std::fprintf(stderr, "INFO magpie-sim: serving model %s on http://%s:%u (pid %d)\n", m_opts.model.c_str(),
                 m_opts.host.c_str(), port, static_cast<int>(getpid()));
    m_start_ns = now_ns();
    if (m_opts.die_after_s > 0) die_in(m_opts.die_after_s * 1000);
    accept();
    m_io.run();
    return 0;
  }

  bool deferring() const { return m_deferring; }
  void defer(const std::shared_ptr<session>& s) { m_deferred.push_back(s); }
  bool ready() const {
    return !m_opts.never_ready && now_ns() - m_start_ns >= static_cast<int64_t>(m_opts.ready_after_s * 1e9);
  }
  void handle(const std::shared_ptr<session>& s, const http::request<http::string_body>& req);
  void cancel(const std::shared_ptr<gen_request>& r) {
    if (r->end_ns) return;
    r->aborted = true;
    r->end_ns = now_ns();
    m_engine.cancel(r->id);
    m_reqs.erase(r->id);
    record(*r, 200);
  }

 private:
  int fail(const std::string& why) {
    std::fprintf(stderr, "ERROR magpie-sim: %s\n", why.c_str());
    return 2;
  }
  void accept() {
    m_acceptor.async_accept([this](boost::system::error_code ec, tcp::socket sock) {
      if (!ec) {
        boost::system::error_code ig;
        sock.set_option(tcp::no_delay(true), ig);
        std::make_shared<session>(std::move(sock), *this)->start();
        return accept();
      }
      // e.g. EMFILE under an open-loop overload: retry later instead of spinning
      m_accept_timer.expires_after(std::chrono::milliseconds(10));
      m_accept_timer.async_wait([this](boost::system::error_code) { accept(); });
    });
  }
  void die_in(double ms) {
    m_die_timer.expires_after(std::chrono::microseconds(static_cast<int64_t>(ms * 1000)));
    m_die_timer.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      std::fprintf(stderr, "ERROR magpie-sim: simulated crash (exit 3)\n");
      if (m_record) std::fflush(m_record);
      _exit(3);
    });
  }
  void reply(const std::shared_ptr<session>& s, int status, const std::string& type, const std::string& body) {
    std::string head = strprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n", status,
                                 status == 200 ? "OK" : "Error", type.c_str(), body.size());
    s->send({head + body});
  }
  void generate(const std::shared_ptr<session>& s, const http::request<http::string_body>& req, bool chat);
  void kick() {
    if (!m_stepping && !m_engine.idle()) step();
  }
  void step();
  void end_step(const step_stats& st, int64_t t0);
  void emit(const emission& e);
  std::string event_json(const gen_request& r, const std::string& text, const char* finish, bool usage) const;
  void record(const gen_request& r, int status);
  void profile(const std::shared_ptr<session>& s, bool start);

  options m_opts;
  asio::io_context m_io{1};
  tcp::acceptor m_acceptor;
  engine m_engine;
  asio::steady_timer m_step_timer, m_die_timer, m_accept_timer{m_io};
  bool m_stepping = false;
  int64_t m_start_ns = 0;
  uint64_t m_next_id = 1;
  int64_t m_received = 0;
  std::map<uint64_t, std::shared_ptr<gen_request>> m_reqs;
  FILE* m_record = nullptr;
  std::unique_ptr<trace_writer> m_trace;
  bool m_deferring = false;
  std::vector<std::shared_ptr<session>> m_deferred;
};

void session::read() {
  m_req = {};
  auto self = shared_from_this();
  http::async_read(m_sock, m_buf, m_req, [this, self](boost::system::error_code ec, size_t) {
    if (ec) {
      boost::system::error_code ig;
      m_sock.close(ig);
      return;
    }
    m_srv.handle(self, m_req);
    if (m_req.keep_alive()) read();
    else m_close_after = true;
  });
}

void session::send(out_item item) {
  if (!m_sock.is_open()) return;
  m_out.push_back(std::move(item));
  if (m_srv.deferring()) m_srv.defer(shared_from_this());
  else flush();
}

void session::send_batch(std::vector<out_item>& items) {
  if (!m_sock.is_open()) return items.clear();
  for (auto& it : items) m_out.push_back(std::move(it));
  items.clear();
  if (m_srv.deferring()) m_srv.defer(shared_from_this());
  else flush();
}

void session::flush() {
  if (m_writing || m_out.empty()) return;
  m_wire.clear();
  m_batch.clear();
  int64_t t = now_ns();
  while (!m_out.empty()) {
    out_item& it = m_out.front();
    if (it.req && it.event >= 0) it.req->events[static_cast<size_t>(it.event)].first = t;
    if (it.req && it.role) it.req->role_ns = t;
    m_wire += it.data;
    m_batch.push_back(std::move(it));
    m_out.pop_front();
  }
  m_writing = true;
  auto self = shared_from_this();
  asio::async_write(m_sock, asio::buffer(m_wire), [this, self](boost::system::error_code ec, size_t) {
    m_writing = false;
    if (ec) {
      boost::system::error_code ig;
      m_sock.close(ig);
      return;
    }
    flush();
    maybe_close();
  });
}

void session::maybe_close() {
  if (m_close_after && !m_writing && m_out.empty()) {
    boost::system::error_code ig;
    m_sock.shutdown(tcp::socket::shutdown_both, ig);
    m_sock.close(ig);
  }
}

int64_t count_prompt_tokens(const json& body, bool chat) {
  if (!chat) {
    const json& p = body.contains("prompt") ? body["prompt"] : json();
    if (p.is_array() && !p.empty() && p[0].is_number_integer()) return static_cast<int64_t>(p.size());
    if (p.is_string()) return std::max<int64_t>(1, static_cast<int64_t>((p.get<std::string>().size() + 3) / 4));
    return 1;
  }
  size_t bytes = 0;
  if (body.contains("messages") && body["messages"].is_array())
    for (const auto& m : body["messages"])
      if (m.is_object() && m.contains("content") && m["content"].is_string()) bytes += m["content"].get<std::string>().size();
  return std::max<int64_t>(1, static_cast<int64_t>((bytes + 3) / 4));
}

void server::handle(const std::shared_ptr<session>& s, const http::request<http::string_body>& req) {
  std::string target(req.target());
  if (target == "/health") return reply(s, ready() ? 200 : 503, "text/plain", ready() ? "" : "starting");
  if (!ready()) return reply(s, 503, "application/json", R"({"object":"error","message":"server is starting","code":503})");
  if (target == "/v1/models")
    return reply(s, 200, "application/json",
                 strprintf(R"({"object":"list","data":[{"id":"%s","object":"model","owned_by":"magpie-sim","max_model_len":32768}]})",
                           m_opts.model.c_str()));
  if (target == "/start_profile" || target == "/stop_profile") return profile(s, target == "/start_profile");
  if (req.method() == http::verb::post && (target == "/v1/completions" || target == "/v1/chat/completions"))
    return generate(s, req, target == "/v1/chat/completions");
  reply(s, 404, "application/json", R"({"object":"error","message":"not found","code":404})");
}

void server::profile(const std::shared_ptr<session>& s, bool start) {
  if (m_opts.trace_dir.empty())
    return reply(s, 404, "application/json", R"({"object":"error","message":"profiler is not enabled","code":404})");
  if (start) {
    m_trace = std::make_unique<trace_writer>();
    std::fprintf(stderr, "INFO magpie-sim: profiler started\n");
    return reply(s, 200, "text/plain", "");
  }
  if (!m_trace) return reply(s, 400, "application/json", R"({"object":"error","message":"profiler not started","code":400})");
  std::string err = m_trace->write(m_opts.trace_dir);
  m_trace.reset();
  std::fprintf(stderr, "INFO magpie-sim: profiler stopped%s%s\n", err.empty() ? "" : ": ", err.c_str());
  reply(s, err.empty() ? 200 : 500, "text/plain", err);
}

void server::generate(const std::shared_ptr<session>& s, const http::request<http::string_body>& req, bool chat) {
  json body = json::parse(req.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return reply(s, 400, "application/json", R"({"object":"error","message":"invalid JSON body","code":400})");
  int64_t n = ++m_received;
  if (m_opts.die_after_requests > 0 && n == m_opts.die_after_requests) die_in(m_opts.die_delay_ms);
  auto r = std::make_shared<gen_request>();
  r->id = m_next_id++;
  r->req_id = std::string(req["X-Request-Id"]);
  r->chat = chat;
  r->received_ns = now_ns();
  r->owner = s;
  r->stream = json_bool(body, "stream", false);
  r->max_tokens = static_cast<int64_t>(json_number(body, "max_tokens", json_number(body, "max_completion_tokens", static_cast<double>(m_opts.default_max_tokens))));
  r->prompt_tokens = count_prompt_tokens(body, chat);
  if (body.contains("stream_options") && body["stream_options"].is_object()) {
    r->include_usage = json_bool(body["stream_options"], "include_usage", false);
    r->continuous_usage = json_bool(body["stream_options"], "continuous_usage_stats", false);
  }
  r->continuous_usage = r->continuous_usage || m_opts.force_continuous_usage;
  if (m_opts.error_every > 0 && n % m_opts.error_every == 0) {
    reply(s, static_cast<int>(m_opts.error_status), "application/json",
          strprintf(R"({"object":"error","message":"simulated failure of request %lld","type":"InternalServerError","code":%lld})",
                    static_cast<long long>(n), static_cast<long long>(m_opts.error_status)));
    r->end_ns = now_ns();
    return record(*r, static_cast<int>(m_opts.error_status));
  }
  if (m_opts.abort_every > 0 && n % m_opts.abort_every == 0) r->abort_after = std::max<int64_t>(1, m_opts.abort_after_tokens);
  if (r->stream) {
    s->send({"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\n"
             "Transfer-Encoding: chunked\r\n\r\n"});
    if (chat && m_opts.role_chunk) {
      std::string ev = "data: " + strprintf(R"({"id":"chatcmpl-%llu","object":"chat.completion.chunk","created":0,"model":"%s","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})",
                                            static_cast<unsigned long long>(r->id), m_opts.model.c_str()) + "\n\n";
      s->send({strprintf("%zx\r\n", ev.size()) + ev + "\r\n", r, -1, true});
    }
  }
  m_reqs[r->id] = r;
  m_engine.add(r->id, r->prompt_tokens, r->max_tokens);
  kick();
}

void server::step() {
  m_stepping = true;
  step_stats st = m_engine.begin_step();
  int64_t t0 = now_ns();
  if (st.duration_s <= 0) {
    asio::post(m_io, [this, st, t0] { end_step(st, t0); });
    return;
  }
  m_step_timer.expires_after(std::chrono::nanoseconds(static_cast<int64_t>(st.duration_s * 1e9)));
  m_step_timer.async_wait([this, st, t0](boost::system::error_code ec) {
    if (!ec) end_step(st, t0);
  });
}

void server::end_step(const step_stats& first, int64_t t0) {
  step_stats st = first;
  m_deferring = m_opts.burst_steps > 1;
  for (int k = 0; k < m_opts.burst_steps; ++k) {
    if (k > 0) {  // further zero-time steps of the burst (only when steps cost nothing)
      if (m_engine.idle() || st.duration_s > 0) break;
      t0 = now_ns();
      st = m_engine.begin_step();
      if (st.duration_s > 0) break;  // planned but not run: the step timer takes it
    }
    if (m_trace) m_trace->add_step(t0, now_ns(), st.prefill_tokens, st.running);
    for (const emission& e : m_engine.end_step()) emit(e);
  }
  m_deferring = false;
  std::vector<std::shared_ptr<session>> due;
  due.swap(m_deferred);
  for (auto& s : due) s->flush_deferred();
  m_stepping = false;
  kick();
}

std::string server::event_json(const gen_request& r, const std::string& text, const char* finish, bool usage) const {
  std::string fin = finish ? strprintf("\"%s\"", finish) : "null";
  std::string u = usage ? strprintf(R"(,"usage":{"prompt_tokens":%lld,"completion_tokens":%lld,"total_tokens":%lld})",
                                    static_cast<long long>(r.prompt_tokens), static_cast<long long>(r.generated),
                                    static_cast<long long>(r.prompt_tokens + r.generated))
                        : "";
  if (r.chat)
    return strprintf(R"({"id":"chatcmpl-%llu","object":"chat.completion.chunk","created":0,"model":"%s","choices":[{"index":0,"delta":{"content":"%s"},"logprobs":null,"finish_reason":%s}]%s})",
                     static_cast<unsigned long long>(r.id), m_opts.model.c_str(), text.c_str(), fin.c_str(), u.c_str());
  return strprintf(R"({"id":"cmpl-%llu","object":"text_completion","created":0,"model":"%s","choices":[{"index":0,"text":"%s","logprobs":null,"finish_reason":%s}]%s})",
                   static_cast<unsigned long long>(r.id), m_opts.model.c_str(), text.c_str(), fin.c_str(), u.c_str());
}

void server::emit(const emission& e) {
  auto it = m_reqs.find(e.id);
  if (it == m_reqs.end()) return;
  std::shared_ptr<gen_request> r = it->second;
  auto s = r->owner.lock();
  if (!s || !s->open()) return cancel(r);
  std::string text;
  for (int64_t k = r->generated; k < e.generated; ++k) text += strprintf(" t%lld", static_cast<long long>(k));
  r->generated = e.generated;
  if (!r->stream) {
    r->text += text;
    if (!e.finished) return;
    r->events.emplace_back(0, e.tokens);
    std::string obj = event_json(*r, r->text, "length", true);
    r->end_ns = now_ns();
    m_reqs.erase(r->id);
    reply(s, 200, "application/json", obj);
    r->events.back().first = r->end_ns;
    return record(*r, 200);
  }
  bool cut = r->abort_after > 0 && r->generated >= r->abort_after && !e.finished;
  std::string ev = "data: " + event_json(*r, text, e.finished ? "length" : nullptr, r->continuous_usage) + "\n\n";
  r->events.emplace_back(0, e.tokens);
  out_item item{strprintf("%zx\r\n", ev.size()) + ev + "\r\n", r, static_cast<int>(r->events.size() - 1)};
  if (m_opts.events_per_write <= 1) {
    s->send(std::move(item));
  } else {
    r->held.push_back(std::move(item));
    if (static_cast<int>(r->held.size()) < m_opts.events_per_write && !cut && !e.finished) return;
    s->send_batch(r->held);
  }
  if (cut) {
    s->close_after_write();
    return cancel(r);
  }
  if (!e.finished) return;
  std::string tail;
  if (r->include_usage) {
    std::string u = "data: " + strprintf(R"({"id":"x-%llu","object":"%s","created":0,"model":"%s","choices":[],"usage":{"prompt_tokens":%lld,"completion_tokens":%lld,"total_tokens":%lld}})",
                                         static_cast<unsigned long long>(r->id), r->chat ? "chat.completion.chunk" : "text_completion",
                                         m_opts.model.c_str(), static_cast<long long>(r->prompt_tokens),
                                         static_cast<long long>(r->generated), static_cast<long long>(r->prompt_tokens + r->generated)) + "\n\n";
    tail += strprintf("%zx\r\n", u.size()) + u + "\r\n";
  }
  std::string done = "data: [DONE]\n\n";
  tail += strprintf("%zx\r\n", done.size()) + done + "\r\n0\r\n\r\n";
  s->send({tail});
  r->end_ns = now_ns();
  m_reqs.erase(r->id);
  record(*r, 200);
}

void server::record(const gen_request& r, int status) {
  if (!m_record) return;
  json j;
  j["id"] = r.req_id;
  j["path"] = r.chat ? "/v1/chat/completions" : "/v1/completions";
  j["status"] = status;
  j["stream"] = r.stream;
  j["received_ns"] = r.received_ns;
  j["role_ns"] = r.role_ns;
  j["end_ns"] = r.end_ns;
  j["prompt_tokens"] = r.prompt_tokens;
  j["max_tokens"] = r.max_tokens;
  j["generated"] = r.generated;
  j["aborted"] = r.aborted;
  json ev = json::array();
  for (const auto& [t, n] : r.events) ev.push_back(json::array({t, n}));
  j["events"] = std::move(ev);
  std::string line = dump_compact(j) + "\n";
  std::fwrite(line.data(), 1, line.size(), m_record);
  std::fflush(m_record);
}

status_or<options> parse_options(int argc, char** argv) {
  arg_parser p("magpie_sim_server", "Simulated OpenAI-compatible server (loopback tests and benchmarks).");
  p.add_value("--host", "", "ADDR", "listen address (default 127.0.0.1)")
      .add_value("--port", "", "N", "listen port (default 0 = any free port, see --port-file)")
      .add_value("--port-file", "", "FILE", "write the bound port here once listening")
      .add_value("--model", "", "NAME", "served model name (default sim-model)")
      .add_value("--record", "", "FILE", "ground-truth JSONL, one line per finished request")
      .add_value("--trace-dir", "", "DIR", "profiler output dir (default: $VLLM_TORCH_PROFILER_DIR, $SGLANG_TORCH_PROFILER_DIR)")
      .add_value("--prefill-tokens-per-s", "", "R", "prefill speed, tokens/s (default 0 = free)")
      .add_value("--decode-step-ms", "", "MS", "fixed decode step time (default 10)")
      .add_value("--decode-per-seq-ms", "", "MS", "extra step time per running sequence (default 0)")
      .add_value("--max-batch", "", "N", "running sequences at most (default 256)")
      .add_value("--chunk-tokens", "", "K", "tokens per SSE event (default 1)")
      .add_value("--default-max-tokens", "", "N", "max_tokens when the request has none (default 16)")
      .add_bool("--role-chunk", "", "chat: send a role-only first chunk at once")
      .add_bool("--continuous-usage", "", "usage in every chunk even when not requested")
      .add_bool("--never-ready", "", "/health answers 503 forever")
      .add_value("--ready-after", "", "S", "/health answers 503 for the first S seconds")
      .add_value("--error-every", "", "N", "every N-th generation request fails with --error-status")
      .add_value("--error-status", "", "CODE", "HTTP status for --error-every (default 500)")
      .add_value("--abort-every", "", "N", "every N-th stream is cut (connection closed) after --abort-after-tokens")
      .add_value("--abort-after-tokens", "", "K", "tokens sent before the cut (default 1)")
      .add_value("--die-after-requests", "", "N", "exit(3) --die-delay-ms after the N-th generation request")
      .add_value("--die-delay-ms", "", "MS", "delay for --die-after-requests (default 0)")
      .add_value("--die-after", "", "S", "exit(3) S seconds after start")
      .add_bool("--ignore-sigterm", "", "ignore SIGTERM (tests the SIGKILL escalation)")
      .add_bool("--reuse-port", "", "SO_REUSEPORT: start several simulators on one --port (load spread by the kernel)")
      .add_value("--burst-steps", "", "K", "with --decode-step-ms 0: run K steps before writing (K events per write; default 1)")
      .add_value("--events-per-write", "", "K", "hold each stream's SSE events until K are due (or it ends), then write them at once (default 1)");
  std::vector<std::string> args(argv + 1, argv + argc);
  MAGPIE_RETURN_IF_ERROR(p.parse(args));
  if (p.help_requested()) {
    std::fputs(p.help().c_str(), stdout);
    std::exit(0);
  }
  options o;
  o.host = p.value("--host", o.host);
  o.model = p.value("--model", o.model);
  o.record = p.value("--record");
  o.port_file = p.value("--port-file");
  o.trace_dir = p.value("--trace-dir");
  for (const char* env : {"VLLM_TORCH_PROFILER_DIR", "SGLANG_TORCH_PROFILER_DIR", "ATOM_TORCH_PROFILER_DIR"})
    if (o.trace_dir.empty() && std::getenv(env)) o.trace_dir = std::getenv(env);
  MAGPIE_ASSIGN_OR_RETURN(int64_t port, p.integer("--port", 0));
  o.port = static_cast<int>(port);
  MAGPIE_ASSIGN_OR_RETURN(o.eng.prefill_tokens_per_s, p.number("--prefill-tokens-per-s", 0));
  MAGPIE_ASSIGN_OR_RETURN(o.eng.decode_step_ms, p.number("--decode-step-ms", 10));
  MAGPIE_ASSIGN_OR_RETURN(o.eng.decode_per_seq_ms, p.number("--decode-per-seq-ms", 0));
  MAGPIE_ASSIGN_OR_RETURN(int64_t mb, p.integer("--max-batch", 256));
  MAGPIE_ASSIGN_OR_RETURN(int64_t ck, p.integer("--chunk-tokens", 1));
  o.eng.max_batch = static_cast<int>(mb);
  o.eng.chunk_tokens = static_cast<int>(ck);
  MAGPIE_ASSIGN_OR_RETURN(o.default_max_tokens, p.integer("--default-max-tokens", 16));
  o.role_chunk = p.has("--role-chunk");
  o.force_continuous_usage = p.has("--continuous-usage");
  o.never_ready = p.has("--never-ready");
  o.ignore_sigterm = p.has("--ignore-sigterm");
  o.reuse_port = p.has("--reuse-port");
  MAGPIE_ASSIGN_OR_RETURN(o.ready_after_s, p.number("--ready-after", 0));
  MAGPIE_ASSIGN_OR_RETURN(o.error_every, p.integer("--error-every", 0));
  MAGPIE_ASSIGN_OR_RETURN(o.error_status, p.integer("--error-status", 500));
  MAGPIE_ASSIGN_OR_RETURN(o.abort_every, p.integer("--abort-every", 0));
  MAGPIE_ASSIGN_OR_RETURN(o.abort_after_tokens, p.integer("--abort-after-tokens", 1));
  MAGPIE_ASSIGN_OR_RETURN(o.die_after_requests, p.integer("--die-after-requests", 0));
  MAGPIE_ASSIGN_OR_RETURN(o.die_delay_ms, p.number("--die-delay-ms", 0));
  MAGPIE_ASSIGN_OR_RETURN(o.die_after_s, p.number("--die-after", 0));
  MAGPIE_ASSIGN_OR_RETURN(int64_t burst, p.integer("--burst-steps", 1));
  o.burst_steps = static_cast<int>(std::max<int64_t>(1, burst));
  MAGPIE_ASSIGN_OR_RETURN(int64_t per_write, p.integer("--events-per-write", 1));
  o.events_per_write = static_cast<int>(std::max<int64_t>(1, per_write));
  return o;
}

}  // namespace
}  // namespace magpie::sim

int main(int argc, char** argv) {
  using namespace magpie::sim;
  auto o = parse_options(argc, argv);
  if (!o.ok()) {
    std::fprintf(stderr, "magpie_sim_server: %s\n", o.get_status().message().c_str());
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  if (o->ignore_sigterm) signal(SIGTERM, SIG_IGN);
  server s(std::move(*o));
  return s.run();
}
