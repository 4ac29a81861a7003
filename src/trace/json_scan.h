// Validating JSON scanner primitives for the streaming trace reader (internal to src/trace).
//
// Every function works on a window [p, ctx.end) of a larger stream and is *restartable*:
// it either completes (scan::ok, p advanced past the token), reports that the window ends
// before the token does (scan::more, p unchanged: the caller refills and calls again from the
// same start), or finds invalid JSON (scan::bad, ctx.err_at / ctx.err_msg set). When
// ctx.final is true no more bytes will come, so running off the end is scan::bad
// ("unexpected end of input"). Nothing recurses: nesting depth is bounded by k_max_depth.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace magpie::trace::detail {

enum class scan { ok, more, bad };

constexpr size_t k_max_depth = 4096;

struct scan_ctx {
  const char* end = nullptr;
  bool final = false;
  const char* err_at = nullptr;
  const char* err_msg = nullptr;
  std::vector<char> stack;  ///< container closers of skip_value (reused, never shrinks)

  scan fail(const char* at, const char* msg) {
    err_at = at;
    err_msg = msg;
    return scan::bad;
  }
  /// Running off the window: more data may come, or the input is truncated.
  scan eof(const char* at) { return final ? fail(at, "unexpected end of input") : scan::more; }
};

/// Skips JSON whitespace. ok with p < end, or (end reached) more / ok-at-end when final.
inline scan skip_ws(const char*& p, scan_ctx& ctx);
/// p at '"'. Validates escapes; rejects raw control characters. `*escaped` tells whether the
/// string holds a backslash escape (then read_string decodes it).
inline scan skip_string(const char*& p, scan_ctx& ctx, bool* escaped);
/// p at '"'. `*out` views the raw bytes when there is no escape, else `*scratch` (decoded,
/// \uXXXX with surrogate pairs as UTF-8; a lone surrogate becomes U+FFFD).
inline scan read_string(const char*& p, scan_ctx& ctx, std::string_view* out, std::string* scratch);
/// Decodes an escaped string body [b, e) (validated by skip_string) into `out`.
void decode_escapes(const char* b, const char* e, std::string* out);
/// p at '-' or a digit; JSON number grammar. `*text` views the number's characters.
inline scan skip_number(const char*& p, scan_ctx& ctx, std::string_view* text);
/// Any JSON value (validated). `*raw` (optional) views its text. Strings and numbers inline;
/// containers and literals in skip_value_slow.
inline scan skip_value(const char*& p, scan_ctx& ctx, std::string_view* raw = nullptr);
/// skip_value's general path (every value kind; the same results and errors): arrays first
/// through skip_array_fast, then skip_value_general.
scan skip_value_slow(const char*& p, scan_ctx& ctx, std::string_view* raw);
/// Token-by-token validation of any value (the reference the fast paths are tested against).
scan skip_value_general(const char*& p, scan_ctx& ctx, std::string_view* raw);
/// q at '['. The end of the array when [q, end) holds all of it in the common layout (nested
/// arrays up to 64 deep of strings without escapes and numbers without exponent, ',' or ", "
/// between elements); nullptr otherwise (then skip_value_general decides). Every array it
/// accepts is valid JSON ending where skip_value_general ends it.
const char* skip_array_fast(const char* q, const char* end);

/// Numeric conversions of validated number text.
/// Integer value when the number is integral and fits int64 (1.0 and 1e3 count), else false.
bool number_to_int(std::string_view text, int64_t* out);
/// Correctly rounded double (as Python's float()).
double number_to_double(std::string_view text);
/// Microseconds text → exact integer nanoseconds (decimal arithmetic for plain d+.d{0,3}
/// text; rounded half away from zero beyond 3 decimals or with an exponent). False when the
/// value does not fit.
/// `*exact` (optional) is set when the text had at most 3 decimals and no exponent.
bool micros_to_ns(std::string_view text, int64_t* out, bool* exact = nullptr);

// ---- inline hot paths ----

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/// The separator `sep` (':' or ',') at q followed by at most one space and a token byte, all
/// inside the window — the layout of Kineto's and Python's json output. Advances q to that token
/// byte and returns true; false leaves q unchanged for the general path.
inline bool sep_fast(const char*& q, const char* end, char sep) {
  if (end - q < 3 || q[0] != sep) return false;
  unsigned char c1 = static_cast<unsigned char>(q[1]);
  if (c1 > ' ') {
    q += 1;
    return true;
  }
  if (c1 == ' ' && static_cast<unsigned char>(q[2]) > ' ') {
    q += 2;
    return true;
  }
  return false;
}

/// Advances q past whitespace; false when the window [q, end) ends first. Bytes above ' '
/// (every token's first byte) cost one compare.
inline bool skip_ws_to(const char*& q, const char* end) {
  while (q < end) {
    unsigned char c = static_cast<unsigned char>(*q);
    if (c > ' ' || !is_ws(*q)) return true;
    ++q;
  }
  return false;
}

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

[[gnu::always_inline]] inline const char* find_string_special(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i bslash = _mm_set1_epi8('\\');
  const __m128i ctrl = _mm_set1_epi8(0x1f);
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Unsigned v <= 0x1f  <=>  max(v, 0x1f) == 0x1f.
    __m128i lt = _mm_cmpeq_epi8(_mm_max_epu8(v, ctrl), ctrl);
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)), lt);
    int mask = _mm_movemask_epi8(m);
    if (mask) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < end) {
    unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20) return p;
    ++p;
  }
  return end;
}

inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

inline scan skip_ws(const char*& p, scan_ctx& ctx) {
  if (skip_ws_to(p, ctx.end) || ctx.final) return scan::ok;
  return scan::more;
}

[[gnu::always_inline]] inline scan skip_string(const char*& p, scan_ctx& ctx, bool* escaped) {
  const char* q = p + 1;
  bool esc = false;
  for (;;) {
    q = find_string_special(q, ctx.end);
    if (q == ctx.end) return ctx.eof(p);
    char c = *q;
    if (c == '"') break;
    if (c != '\\') return ctx.fail(q, "control character in string");
    esc = true;
    if (ctx.end - q < 2) return ctx.eof(p);
    char e = q[1];
    if (e == 'u') {
      if (ctx.end - q < 6) return ctx.eof(p);
      for (int i = 2; i < 6; ++i)
        if (hex_value(q[i]) < 0) return ctx.fail(q, "invalid \\u escape");
      q += 6;
    } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
      q += 2;
    } else {
      return ctx.fail(q, "invalid escape in string");
    }
  }
  if (escaped) *escaped = esc;
  p = q + 1;
  return scan::ok;
}

[[gnu::always_inline]] inline scan skip_number(const char*& p, scan_ctx& ctx, std::string_view* text) {
  const char* q = p;
  const char* end = ctx.end;
  if (q < end && *q == '-') ++q;
  if (q == end) return ctx.eof(p);
  if (*q == '0') {
    ++q;
  } else if (is_digit(*q)) {
    while (q < end && is_digit(*q)) ++q;
  } else {
    return ctx.fail(q, "invalid number");
  }
  if (q < end && *q == '.') {
    ++q;
    if (q == end) return ctx.eof(p);
    if (!is_digit(*q)) return ctx.fail(q, "invalid number: digit expected after '.'");
    while (q < end && is_digit(*q)) ++q;
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    ++q;
    if (q < end && (*q == '+' || *q == '-')) ++q;
    if (q == end) return ctx.eof(p);
    if (!is_digit(*q)) return ctx.fail(q, "invalid number: digit expected in exponent");
    while (q < end && is_digit(*q)) ++q;
  }
  if (q == end && !ctx.final) return scan::more;  // more digits may follow
  if (text) *text = std::string_view(p, static_cast<size_t>(q - p));
  p = q;
  return scan::ok;
}

[[gnu::always_inline]] inline scan read_string(const char*& p, scan_ctx& ctx, std::string_view* out, std::string* scratch) {
  const char* start = p;
  bool esc = false;
  scan r = skip_string(p, ctx, &esc);
  if (r != scan::ok) return r;
  if (!esc) {
    *out = std::string_view(start + 1, static_cast<size_t>(p - start - 2));
  } else {
    decode_escapes(start + 1, p - 1, scratch);
    *out = *scratch;
  }
  return scan::ok;
}

[[gnu::always_inline]] inline scan skip_value(const char*& p, scan_ctx& ctx, std::string_view* raw) {
  const char* q = p;
  if (q < ctx.end && (*q == '"' || *q == '-' || is_digit(*q))) {
    scan r = *q == '"' ? skip_string(q, ctx, nullptr) : skip_number(q, ctx, nullptr);
    if (r != scan::ok) return r;
    if (raw) *raw = std::string_view(p, static_cast<size_t>(q - p));
    p = q;
    return scan::ok;
  }
  return skip_value_slow(p, ctx, raw);
}

}  // namespace magpie::trace::detail
