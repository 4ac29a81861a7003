#include "trace/json_scan.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>


namespace magpie::trace::detail {
namespace {




/// First byte in [p, end) that is '"', '\\' or a control character (< 0x20), or end.




void append_utf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

/// Decodes the escaped body [b, e) (already validated by skip_string) into `out`.
}  // namespace

void decode_escapes(const char* b, const char* e, std::string* out) {
  out->clear();
  while (b < e) {
    if (*b != '\\') {
      out->push_back(*b++);
      continue;
    }
    char c = b[1];
    b += 2;
    switch (c) {
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        uint32_t cp = 0;
        for (int i = 0; i < 4; ++i) cp = cp * 16 + static_cast<uint32_t>(hex_value(b[i]));
        b += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && e - b >= 6 && b[0] == '\\' && b[1] == 'u') {
          uint32_t lo = 0;
          bool ok = true;
          for (int i = 0; i < 4; ++i) {
            int h = hex_value(b[2 + i]);
            if (h < 0) ok = false;
            lo = lo * 16 + static_cast<uint32_t>(h < 0 ? 0 : h);
          }
          if (ok && lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            b += 6;
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        append_utf8(out, cp);
        break;
      }
      default: out->push_back(c); break;  // '"', '\\', '/'
    }
  }
}

namespace {

scan skip_literal(const char*& p, scan_ctx& ctx, const char* word, size_t n) {
  size_t have = static_cast<size_t>(ctx.end - p);
  size_t cmp = have < n ? have : n;
  if (std::memcmp(p, word, cmp) != 0) return ctx.fail(p, "invalid literal");
  if (have < n) return ctx.eof(p);
  p += n;
  return scan::ok;
}





/// Object key at q (after '{' or ','): "key" ws ':'. q ends past the ':'.
inline scan skip_key(const char*& q, const char* p, scan_ctx& ctx) {
  if (*q != '"') return ctx.fail(q, "object key expected");
  if (scan r = skip_string(q, ctx, nullptr); r != scan::ok) return r;
  if (sep_fast(q, ctx.end, ':')) return scan::ok;
  if (!skip_ws_to(q, ctx.end)) return ctx.eof(p);
  if (*q != ':') return ctx.fail(q, "':' expected");
  ++q;
  return scan::ok;
}

}  // namespace

// The loop below in the layout Kineto and Python's json write, without the general path's
// per-token whitespace skipping, dispatch and closer stack: only arrays, whose closers need a
// depth count only. Anything else (an object, a literal, an exponent, an escape, other
// whitespace, the window's end) gives nullptr, and the general path decides, errors included.
const char* skip_array_fast(const char* q, const char* end) {
  constexpr int k_fast_depth = 64;
  int depth = 0;
  for (;;) {
    // A value at q.
    if (q >= end) return nullptr;
    char c = *q;
    if (c == '[') {
      if (++depth > k_fast_depth) return nullptr;
      ++q;
      if (q < end && *q == ']') {
        ++q;
        --depth;
      } else {
        continue;
      }
    } else if (c == '"') {
      q = find_string_special(q + 1, end);
      if (q == end || *q != '"') return nullptr;
      ++q;
    } else {
      if (c == '-') ++q;
      if (q >= end) return nullptr;
      if (*q == '0') {
        ++q;
      } else if (*q >= '1' && *q <= '9') {
        ++q;
        while (q < end && is_digit(*q)) ++q;
      } else {
        return nullptr;
      }
      if (q < end && *q == '.') {
        ++q;
        if (q >= end || !is_digit(*q)) return nullptr;
        while (q < end && is_digit(*q)) ++q;
      }
    }
    // After a value: closers, then ',' (one optional space) before the next value.
    for (;;) {
      if (depth == 0) return q;
      if (q >= end) return nullptr;
      if (*q != ']') break;
      ++q;
      --depth;
    }
    if (*q != ',') return nullptr;
    ++q;
    if (q < end && *q == ' ') ++q;
  }
}

// One token per iteration, containers' closers on a fixed stack (ctx.stack, k_max_depth
// deep). Every error is reported at the same byte and with the same message as a
// token-by-token recursive validator would: the restart point p for a window that ends.
scan skip_value_slow(const char*& p, scan_ctx& ctx, std::string_view* raw) {
  if (p < ctx.end && *p == '[') {
    if (const char* e = skip_array_fast(p, ctx.end)) {
      if (raw) *raw = std::string_view(p, static_cast<size_t>(e - p));
      p = e;
      return scan::ok;
    }
  }
  return skip_value_general(p, ctx, raw);
}

scan skip_value_general(const char*& p, scan_ctx& ctx, std::string_view* raw) {
  const char* q = p;
  const char* const end = ctx.end;
  if (ctx.stack.size() < k_max_depth) ctx.stack.resize(k_max_depth);
  char* const st = ctx.stack.data();
  size_t depth = 0;
  scan r;
  for (;;) {
    // Expect a value at q.
    if (!skip_ws_to(q, end)) return ctx.eof(p);
    char c = *q;
    if (c == '"') {
      if ((r = skip_string(q, ctx, nullptr)) != scan::ok) return r;
    } else if (c == '-' || is_digit(c)) {
      if ((r = skip_number(q, ctx, nullptr)) != scan::ok) return r;
    } else if (c == '{' || c == '[') {
      if (depth >= k_max_depth) return ctx.fail(q, "nesting too deep");
      char closer = c == '{' ? '}' : ']';
      st[depth++] = closer;
      ++q;
      if (!skip_ws_to(q, end)) return ctx.eof(p);
      if (*q == closer) {
        ++q;
        --depth;
      } else if (c == '{') {
        if ((r = skip_key(q, p, ctx)) != scan::ok) return r;
        continue;
      } else {
        continue;
      }
    } else if (c == 't') {
      if ((r = skip_literal(q, ctx, "true", 4)) != scan::ok) return r;
    } else if (c == 'f') {
      if ((r = skip_literal(q, ctx, "false", 5)) != scan::ok) return r;
    } else if (c == 'n') {
      if ((r = skip_literal(q, ctx, "null", 4)) != scan::ok) return r;
    } else {
      return ctx.fail(q, "value expected");
    }
    // After a value: close containers or continue with the next element.
    for (;;) {
      if (depth == 0) {
        if (raw) *raw = std::string_view(p, static_cast<size_t>(q - p));
        p = q;
        return scan::ok;
      }
      if (!skip_ws_to(q, end)) return ctx.eof(p);
      if (*q == st[depth - 1]) {
        ++q;
        --depth;
        continue;
      }
      if (!sep_fast(q, end, ',')) {
        if (*q != ',') return ctx.fail(q, "',' or closing bracket expected");
        ++q;
      }
      if (st[depth - 1] == '}') {
        if (!skip_ws_to(q, end)) return ctx.eof(p);
        if ((r = skip_key(q, p, ctx)) != scan::ok) return r;
      }
      break;
    }
  }
}

bool number_to_int(std::string_view t, int64_t* out) {
  if (!t.empty() && t.size() <= 18) {  // plain [-]digits: no overflow possible
    size_t i = t[0] == '-' ? 1 : 0;
    int64_t v = 0;
    bool plain = i < t.size();
    for (; i < t.size(); ++i) {
      char c = t[i];
      if (c < '0' || c > '9') {
        plain = false;
        break;
      }
      v = v * 10 + (c - '0');
    }
    if (plain) {
      *out = t[0] == '-' ? -v : v;
      return true;
    }
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc() && ptr == t.data() + t.size()) {
    *out = v;
    return true;
  }
  double d = number_to_double(t);
  if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) >= 9.2e18) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

double number_to_double(std::string_view t) {
  double d = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
  if (ec == std::errc::result_out_of_range) {
    return (!t.empty() && t[0] == '-') ? -std::numeric_limits<double>::infinity()
                                       : std::numeric_limits<double>::infinity();
  }
  (void)ptr;
  return d;
}

bool micros_to_ns(std::string_view t, int64_t* out, bool* exact) {
  const char* p = t.data();
  const char* end = p + t.size();
  bool neg = false;
  if (p < end && *p == '-') {
    neg = true;
    ++p;
  }
  uint64_t ip = 0;
  int digits = 0;
  while (p < end && is_digit(*p)) {
    if (++digits > 15) goto fallback;  // keeps ip*1000 far from overflow
    ip = ip * 10 + static_cast<uint64_t>(*p++ - '0');
  }
  {
    uint64_t frac = 0;
    int nfrac = 0;
    bool round_up = false;
    if (p < end && *p == '.') {
      ++p;
      while (p < end && is_digit(*p)) {
        if (nfrac < 3) {
          frac = frac * 10 + static_cast<uint64_t>(*p - '0');
        } else if (nfrac == 3) {
          round_up = *p >= '5';
        }
        ++nfrac;
        ++p;
      }
    }
    if (p != end) goto fallback;  // exponent
    if (exact) *exact = nfrac <= 3;
    for (int i = nfrac; i < 3; ++i) frac *= 10;
    uint64_t v = ip * 1000 + frac + (round_up ? 1 : 0);
    *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
fallback : {
  if (exact) *exact = false;
  double d = number_to_double(t) * 1000.0;
  if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return false;
  *out = static_cast<int64_t>(std::llround(d));
  return true;
}
}

}  // namespace magpie::trace::detail
