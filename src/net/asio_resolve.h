// Host name → TCP endpoint for the translation units that already use Boost.Asio
// (src/net/http.cpp, src/serve/http_client.cpp); everything else includes net/http.h only.
#pragma once

#include <utility>  // before Asio (GCC 12 / C++20 awaitable.hpp needs std::exchange)

#include <boost/asio.hpp>
#include <string>

#include "core/status.h"
#include "net/http.h"

namespace magpie::net {

/// The first address of url.host:url.port. Errors: unavailable (cannot resolve).
inline status_or<boost::asio::ip::tcp::endpoint> resolve_endpoint(boost::asio::io_context& io, const endpoint_url& url) {
  boost::asio::ip::tcp::resolver r(io);
  boost::system::error_code ec;
  auto res = r.resolve(url.host, std::to_string(url.port), ec);
  if (ec || res.empty()) return error(status_code::unavailable, "cannot resolve %s: %s", url.host.c_str(), ec.message().c_str());
  return res.begin()->endpoint();
}

}  // namespace magpie::net
