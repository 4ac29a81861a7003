// Plain blocking HTTP/1.1 request/response over TCP (no TLS): health checks, model lists,
// profiler control (src/serve) and the Ray Jobs REST API (src/sched). The streaming load
// client stays in src/serve/http_client.*. Beast/Asio live only in http.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace magpie::net {

struct endpoint_url {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;
  std::string base_path;  ///< path prefix without a trailing '/', e.g. "" or "/proxy"
  std::string to_string() const;
};

/// Parses "http://host[:port][/prefix]" (https is rejected: plain HTTP only; port 80 when absent).
status_or<endpoint_url> parse_base_url(const std::string& url);

struct http_response {
  int status = 0;
  std::string body;
  std::string content_type;
};

/// One blocking request to url.base_path + target; a non-empty body is sent as
/// application/json. Any HTTP status is a response, not an error. Errors: unavailable
/// (cannot resolve, refused, reset), timeout (no complete answer within timeout_s seconds).
status_or<http_response> http_call(const endpoint_url& url, const std::string& method, const std::string& target,
                                   const std::string& body, double timeout_s);

/// A TCP connection to url's host and port opens within timeout_s (then closed): a reachability
/// check that sends nothing. Errors: unavailable (refused, unresolvable, unreachable) and
/// timeout, naming the URL.
status probe_connect(const endpoint_url& url, double timeout_s);

}  // namespace magpie::net
