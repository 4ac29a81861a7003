// The only translation unit of src/net that includes Boost.Asio/Beast.
#include <algorithm>
#include <utility>  // before Asio (GCC 12 / C++20 awaitable.hpp needs std::exchange)

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "core/strings.h"
#include "net/asio_resolve.h"
#include "net/http.h"

namespace magpie::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string endpoint_url::to_string() const { return strprintf("http://%s:%u%s", host.c_str(), port, base_path.c_str()); }

status_or<endpoint_url> parse_base_url(const std::string& url) {
  std::string_view s = url;
  if (starts_with(s, "https://")) return invalid_argument("%s: https is not supported (plain HTTP only)", url.c_str());
  if (!starts_with(s, "http://")) return invalid_argument("%s: expected http://HOST[:PORT][/PREFIX]", url.c_str());
  s.remove_prefix(7);
  endpoint_url out;
  size_t slash = s.find('/');
  std::string_view hostport = s.substr(0, slash);
  if (slash != std::string_view::npos) {
    out.base_path = std::string(s.substr(slash));
    while (!out.base_path.empty() && out.base_path.back() == '/') out.base_path.pop_back();
  }
  size_t colon = hostport.rfind(':');
  if (colon != std::string_view::npos && hostport.find(']') == std::string_view::npos) {
    auto port = parse_int(hostport.substr(colon + 1));
    if (!port || *port <= 0 || *port > 65535) return invalid_argument("%s: bad port", url.c_str());
    out.port = static_cast<uint16_t>(*port);
    hostport = hostport.substr(0, colon);
  } else {
    out.port = 80;
  }
  if (hostport.empty()) return invalid_argument("%s: missing host", url.c_str());
  out.host = std::string(hostport);
  return out;
}

status_or<http_response> http_call(const endpoint_url& url, const std::string& method, const std::string& target,
                                   const std::string& body, double timeout_s) {
  asio::io_context io(1);
  MAGPIE_ASSIGN_OR_RETURN(tcp::endpoint ep, resolve_endpoint(io, url));
  beast::tcp_stream stream(io);
  http::request<http::string_body> req(http::string_to_verb(method), url.base_path + target, 11);
  req.set(http::field::host, strprintf("%s:%u", url.host.c_str(), url.port));
  req.set(http::field::user_agent, "magpie");
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  boost::system::error_code result;
  bool done = false;
  stream.expires_after(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  stream.async_connect(ep, [&](boost::system::error_code ec) {
    if (ec) { result = ec; done = true; return; }
    http::async_write(stream, req, [&](boost::system::error_code ec2, size_t) {
      if (ec2) { result = ec2; done = true; return; }
      http::async_read(stream, buf, res, [&](boost::system::error_code ec3, size_t) { result = ec3; done = true; });
    });
  });
  io.run();
  std::string what = method + " " + url.to_string() + target;
  if (!done || result == beast::error::timeout)
    return error(status_code::timeout, "%s: no answer within %.1f s", what.c_str(), timeout_s);
  if (result) return error(status_code::unavailable, "%s: %s", what.c_str(), result.message().c_str());
  http_response out;
  out.status = static_cast<int>(res.result_int());
  out.body = std::move(res.body());
  out.content_type = std::string(res[http::field::content_type]);
  return out;
}

status probe_connect(const endpoint_url& url, double timeout_s) {
  asio::io_context io(1);
  MAGPIE_ASSIGN_OR_RETURN(tcp::endpoint ep, resolve_endpoint(io, url));
  tcp::socket sock(io);
  asio::steady_timer timer(io);
  boost::system::error_code result = asio::error::would_block;
  timer.expires_after(std::chrono::milliseconds(static_cast<int64_t>(std::max(timeout_s, 0.001) * 1000)));
  timer.async_wait([&](boost::system::error_code ec) {
    if (!ec && result == asio::error::would_block) {
      result = asio::error::timed_out;
      boost::system::error_code ignored;
      sock.close(ignored);
    }
  });
  sock.async_connect(ep, [&](boost::system::error_code ec) {
    if (result == asio::error::would_block) result = ec;
    timer.cancel();
  });
  io.run();
  boost::system::error_code ignored;
  sock.close(ignored);
  if (result == asio::error::timed_out)
    return error(status_code::timeout, "%s: no TCP connection within %.1f s", url.to_string().c_str(), timeout_s);
  if (result) return error(status_code::unavailable, "%s: %s", url.to_string().c_str(), result.message().c_str());
  return ok_status();
}

}  // namespace magpie::net
