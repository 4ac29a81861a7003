#include "trace/reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/progress.h"
#include "core/strings.h"
#include "core/subprocess.h"
#include "trace/byte_source.h"
#include "trace/event_keys.h"
#include "trace/json_scan.h"

namespace magpie::trace {

using detail::scan;
using detail::scan_ctx;

namespace {

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/// Skips whitespace; ok only when a character is available at q.
inline scan next(const char*& q, scan_ctx& ctx) {
  if (detail::skip_ws_to(q, ctx.end)) return scan::ok;
  return ctx.eof(q);
}

#define SCAN_TRY(expr)             \
  do {                             \
    scan r_ = (expr);              \
    if (r_ != scan::ok) return r_; \
  } while (0)

struct scratch {
  std::string key, ph, cat, name, pid, tid, bp;
};

[[gnu::always_inline]] inline scan read_str(const char*& q, scan_ctx& ctx, std::string_view* out, std::string* s,
                                          bool* has, event_view& ev) {
  if (*q == '"') {
    SCAN_TRY(detail::read_string(q, ctx, out, s));
    if (has) *has = true;
    return scan::ok;
  }
  ++ev.bad_fields;
  return detail::skip_value_slow(q, ctx, nullptr);
}

constexpr uint64_t k_pow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/// The leading ASCII digits of the 8 bytes at p (all readable): their count n (0-8) and value
/// (the SWAR digit test and 8-digit conversion of simdjson / fast_float, the n digits moved to
/// the top bytes so the bytes below read as leading zeros).
[[gnu::always_inline]] inline int digit_run8(const char* p, uint64_t* value) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  uint64_t non_digit = ((x + 0x4646464646464646ull) | (x - 0x3030303030303030ull)) & 0x8080808080808080ull;
  int n = non_digit ? __builtin_ctzll(non_digit) >> 3 : 8;
  if (n == 0) {
    *value = 0;
    return 0;
  }
  // Borrows of the subtraction only run upwards from bytes below '0', which lie past the digits.
  x = (x - 0x3030303030303030ull) << (8 * (8 - n));
  x = (x * 10) + (x >> 8);
  x = (((x & 0x000000FF000000FFull) * 0x000F424000000064ull) +
       (((x >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
  *value = x & 0xFFFFFFFFull;
  return n;
}

/// Accumulates the run of ASCII digits at p into *out (*out * 10^n + digits), up to 8 at a time
/// while 8 bytes are left in the window. Overflow wraps; callers bound the digit count.
[[gnu::always_inline]] inline void read_digits(const char*& p, const char* end, uint64_t* out) {
  uint64_t v = *out;  // a local: stores through *out would alias the char reads of p
  while (end - p >= 8) {
    uint64_t d;
    int n = digit_run8(p, &d);
    v = v * k_pow10[n] + d;
    p += n;
    if (n < 8) {
      *out = v;
      return;
    }
  }
  while (p < end && *p >= '0' && *p <= '9') v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  *out = v;
}

/// The common number shapes, parsed while validated: [-]digits (at most 18) for ints and
/// [-]digits(.d{1,3})? (at most 15 integer digits) for µs times, ending inside the window with no
/// exponent. False leaves q unchanged for the general path (which also reports invalid input).
[[gnu::always_inline]] inline bool fast_int(const char*& q, const char* end, int64_t* out) {
  const char* p = q;
  bool neg = *p == '-';
  if (neg) ++p;
  const char* d0 = p;
  uint64_t v = 0;
  while (p < end && *p >= '0' && *p <= '9') v = v * 10 + static_cast<uint64_t>(*p++ - '0');  // ids: short
  size_t nd = static_cast<size_t>(p - d0);
  if (nd == 0 || nd > 18 || (nd > 1 && *d0 == '0') || p >= end || *p == '.' || *p == 'e' || *p == 'E') return false;
  *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  q = p;
  return true;
}

inline bool fast_micros(const char*& q, const char* end, int64_t* ns, std::string_view* text) {
  const char* p = q;
  bool neg = *p == '-';
  if (neg) ++p;
  const char* d0 = p;
  uint64_t ip = 0;
  read_digits(p, end, &ip);
  size_t nd = static_cast<size_t>(p - d0);
  if (nd == 0 || nd > 15 || (nd > 1 && *d0 == '0')) return false;
  uint64_t frac = 0;
  if (p < end && *p == '.') {
    ++p;
    const char* f0 = p;
    read_digits(p, end, &frac);
    size_t nf = static_cast<size_t>(p - f0);
    if (nf == 0 || nf > 3) return false;  // no digit, or > 3 decimals (rounding: the general path)
    frac *= k_pow10[3 - nf];
  }
  if (p >= end || *p == 'e' || *p == 'E') return false;
  uint64_t v = ip * 1000 + frac;
  *ns = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  *text = std::string_view(q, static_cast<size_t>(p - q));
  q = p;
  return true;
}

/// read_time / read_int when the fast path did not apply (q unchanged).
[[gnu::noinline]] scan read_time_slow(const char*& q, scan_ctx& ctx, double* us, int64_t* ns, bool* has,
                                      std::string_view* text, bool* bad, event_view& ev) {
  if (*q == '-' || (*q >= '0' && *q <= '9')) {
    SCAN_TRY(detail::skip_number(q, ctx, text));
    bool exact = false;
    if (detail::micros_to_ns(*text, ns, &exact)) {
      *has = true;
      // ns/1000 is the exact decimal value, so one IEEE division gives the correctly rounded
      // double — the same value strtod / Python's float() produce.
      constexpr int64_t k_2p53 = int64_t{1} << 53;
      *us = (exact && *ns < k_2p53 && *ns > -k_2p53) ? static_cast<double>(*ns) / 1000.0
                                                     : detail::number_to_double(*text);
    } else {
      *us = detail::number_to_double(*text);
      ++ev.bad_fields;
      *bad = true;
    }
    return scan::ok;
  }
  ++ev.bad_fields;
  *bad = true;
  return detail::skip_value_slow(q, ctx, nullptr);
}

[[gnu::noinline]] scan read_int_slow(const char*& q, scan_ctx& ctx, int64_t* out, bool* has, event_view& ev) {
  if (*q == '-' || (*q >= '0' && *q <= '9')) {
    std::string_view t;
    SCAN_TRY(detail::skip_number(q, ctx, &t));
    if (detail::number_to_int(t, out)) *has = true;
    else ++ev.bad_fields;
    return scan::ok;
  }
  ++ev.bad_fields;
  return detail::skip_value_slow(q, ctx, nullptr);
}

[[gnu::always_inline]] inline scan read_time(const char*& q, scan_ctx& ctx, double* us, int64_t* ns, bool* has,
                                           std::string_view* text, bool* bad, event_view& ev) {
  if (fast_micros(q, ctx.end, ns, text)) {  // exact, |ns| < 1e18 < 2^63; below 2^53 one division rounds correctly
    *has = true;
    constexpr int64_t k_2p53 = int64_t{1} << 53;
    *us = (*ns < k_2p53 && *ns > -k_2p53) ? static_cast<double>(*ns) / 1000.0 : detail::number_to_double(*text);
    return scan::ok;
  }
  return read_time_slow(q, ctx, us, ns, has, text, bad, ev);
}

[[gnu::always_inline]] inline scan read_int(const char*& q, scan_ctx& ctx, int64_t* out, bool* has, event_view& ev) {
  if (fast_int(q, ctx.end, out)) {
    *has = true;
    return scan::ok;
  }
  return read_int_slow(q, ctx, out, has, ev);
}

/// pid / tid: an integer or a string.
scan read_id(const char*& q, scan_ctx& ctx, int64_t* num, std::string_view* str, bool* is_str, bool* has,
             std::string* s, event_view& ev) {
  if (*q == '"') {
    SCAN_TRY(detail::read_string(q, ctx, str, s));
    *is_str = true;
    *has = true;
    return scan::ok;
  }
  return read_int(q, ctx, num, has, ev);
}

scan read_raw(const char*& q, scan_ctx& ctx, std::string_view* raw) { return detail::skip_value_slow(q, ctx, raw); }

/// The value of the args key k at q (a value's first byte).
scan parse_arg_value(detail::arg_key k, const char*& q, scan_ctx& ctx, event_view& ev) {
  using detail::arg_key;
  switch (k) {
    case arg_key::stream: return read_int(q, ctx, &ev.stream, &ev.has_stream, ev);
    case arg_key::device: return read_int(q, ctx, &ev.device, &ev.has_device, ev);
    case arg_key::grid: return read_raw(q, ctx, &ev.grid);
    case arg_key::block: return read_raw(q, ctx, &ev.block);
    case arg_key::dtype: return read_raw(q, ctx, &ev.dtype);
    case arg_key::input_dims: return read_raw(q, ctx, &ev.input_dims);
    case arg_key::input_type: return read_raw(q, ctx, &ev.input_type);
    case arg_key::group_size: return read_raw(q, ctx, &ev.group_size);
    case arg_key::external_id: return read_int(q, ctx, &ev.external_id, &ev.has_external_id, ev);
    case arg_key::correlation: return read_int(q, ctx, &ev.correlation, &ev.has_correlation, ev);
    case arg_key::input_strides: return read_raw(q, ctx, &ev.input_strides);
    case arg_key::in_msg_nelems: return read_raw(q, ctx, &ev.in_msg_nelems);
    case arg_key::out_msg_nelems: return read_raw(q, ctx, &ev.out_msg_nelems);
    case arg_key::concrete_inputs: return read_raw(q, ctx, &ev.concrete_inputs);
    case arg_key::collective_name: return read_raw(q, ctx, &ev.collective_name);
    case arg_key::sequence_number: return read_int(q, ctx, &ev.sequence_number, &ev.has_sequence_number, ev);
    case arg_key::pg_name: return read_raw(q, ctx, &ev.pg_name);
    case arg_key::other:
    case arg_key::count_: break;
  }
  return detail::skip_value(q, ctx);
}

/// q at an object key ('"' checked): the key's enum, q at its value (whitespace skipped). Keys in
/// Kineto's layout are recognised from their bytes; any other layout is read and decoded.
template <typename Key, Key (*at)(const char*&), Key (*of)(std::string_view)>
[[gnu::always_inline]] inline scan read_key(const char*& q, scan_ctx& ctx, std::string* scratch, Key* k) {
  if (static_cast<size_t>(ctx.end - q) >= detail::k_key_fast_bytes) {
    *k = at(q);
    if (*k != Key::other) return scan::ok;
  }
  std::string_view key;
  SCAN_TRY(detail::read_string(q, ctx, &key, scratch));
  if (!detail::sep_fast(q, ctx.end, ':')) {
    SCAN_TRY(next(q, ctx));
    if (*q != ':') return ctx.fail(q, "':' expected");
    ++q;
    SCAN_TRY(next(q, ctx));
  }
  *k = of(key);
  return scan::ok;
}

scan parse_args(const char*& q, scan_ctx& ctx, event_view& ev, scratch& s) {
  if (*q != '{') {
    ++ev.bad_fields;
    return detail::skip_value_slow(q, ctx, nullptr);
  }
  ++q;
  SCAN_TRY(next(q, ctx));
  if (*q == '}') {
    ++q;
    return scan::ok;
  }
  for (;;) {
    if (*q != '"') return ctx.fail(q, "object key expected");
    detail::arg_key key;
    SCAN_TRY((read_key<detail::arg_key, detail::arg_key_at, detail::arg_key_of>(q, ctx, &s.key, &key)));
    SCAN_TRY(parse_arg_value(key, q, ctx, ev));
    if (detail::sep_fast(q, ctx.end, ',')) continue;
    SCAN_TRY(next(q, ctx));
    if (*q == ',') {
      ++q;
      SCAN_TRY(next(q, ctx));
      continue;
    }
    if (*q == '}') {
      ++q;
      return scan::ok;
    }
    return ctx.fail(q, "',' or '}' expected");
  }
}

/// The value of the event key k at q (a value's first byte).
scan parse_event_value(detail::event_key k, const char*& q, scan_ctx& ctx, event_view& ev, scratch& s) {
  using detail::event_key;
  switch (k) {
    case event_key::ph: return read_str(q, ctx, &ev.ph, &s.ph, nullptr, ev);
    case event_key::ts: return read_time(q, ctx, &ev.ts, &ev.ts_ns, &ev.has_ts, &ev.ts_text, &ev.bad_ts, ev);
    case event_key::id:
      if (*q == '"') return detail::skip_value(q, ctx);  // string flow ids are not linkable
      return read_int(q, ctx, &ev.id, &ev.has_id, ev);
    case event_key::bp: return read_str(q, ctx, &ev.bp, &s.bp, nullptr, ev);
    case event_key::cat: return read_str(q, ctx, &ev.cat, &s.cat, &ev.has_cat, ev);
    case event_key::dur: return read_time(q, ctx, &ev.dur, &ev.dur_ns, &ev.has_dur, &ev.dur_text, &ev.bad_dur, ev);
    case event_key::pid: return read_id(q, ctx, &ev.pid, &ev.pid_str, &ev.pid_is_str, &ev.has_pid, &s.pid, ev);
    case event_key::tid: return read_id(q, ctx, &ev.tid, &ev.tid_str, &ev.tid_is_str, &ev.has_tid, &s.tid, ev);
    case event_key::name: return read_str(q, ctx, &ev.name, &s.name, &ev.has_name, ev);
    case event_key::args: return parse_args(q, ctx, ev, s);
    case event_key::other:
    case event_key::count_: break;
  }
  return detail::skip_value(q, ctx);
}

static_assert(std::is_trivially_copyable_v<event_view>);

/// ev = event_view{} (every member's blank value is all-zero bytes: views, numbers, flags) with
/// 16-byte stores: GCC turns the plain assignment into `rep stos`, whose start-up cost is a
/// measurable share of a ~330-byte event.
[[gnu::always_inline]] inline void clear_event(event_view& ev) {
#if defined(__SSE2__)
  static_assert(sizeof(event_view) >= 16);
  const __m128i zero = _mm_setzero_si128();
  char* b = reinterpret_cast<char*>(&ev);
  for (size_t i = 0; i + 16 <= sizeof(event_view); i += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(b + i), zero);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b + sizeof(event_view) - 16), zero);  // the tail (overlapping)
#else
  ev = event_view{};
#endif
}

/// p at '{'. On ok, `ev` describes the event and p is past its '}'.
scan parse_event(const char*& p, scan_ctx& ctx, event_view& ev, scratch& s) {
  const char* q = p + 1;
  uint64_t index = ev.index;
  clear_event(ev);
  ev.index = index;
  SCAN_TRY(next(q, ctx));
  if (*q != '}') {
    for (;;) {
      if (*q != '"') return ctx.fail(q, "object key expected");
      detail::event_key key;
      SCAN_TRY((read_key<detail::event_key, detail::event_key_at, detail::event_key_of>(q, ctx, &s.key, &key)));
      SCAN_TRY(parse_event_value(key, q, ctx, ev, s));
      if (detail::sep_fast(q, ctx.end, ',')) continue;
      SCAN_TRY(next(q, ctx));
      if (*q == ',') {
        ++q;
        SCAN_TRY(next(q, ctx));
        continue;
      }
      if (*q == '}') break;
      return ctx.fail(q, "',' or '}' expected");
    }
  }
  ++q;
  ev.raw = std::string_view(p, static_cast<size_t>(q - p));
  p = q;
  return scan::ok;
}

/// The input window over a byte source.
class window {
 public:
  window(detail::byte_source* src, size_t initial, size_t max_bytes)
      : m_src(src), m_buf(initial), m_max(max_bytes) {}

  const char* begin() const { return m_buf.data(); }
  const char* end() const { return m_buf.data() + m_size; }
  bool eof() const { return m_eof; }
  /// Stream offset of a pointer into the window.
  uint64_t offset(const char* p) const { return m_base + static_cast<uint64_t>(p - m_buf.data()); }

  /// Drops everything before `keep`, then reads more. `keep` is updated to the new position.
  status refill(const char*& keep) {
    size_t off = static_cast<size_t>(keep - m_buf.data());
    if (off > 0) {
      std::memmove(m_buf.data(), m_buf.data() + off, m_size - off);
      m_size -= off;
      m_base += off;
    }
    if (m_size == m_buf.size()) {
      if (m_buf.size() >= m_max) return error(status_code::parse_error, "one element exceeds %zu bytes", m_max);
      m_buf.resize(std::min(m_max, m_buf.size() * 2));
    }
    MAGPIE_ASSIGN_OR_RETURN(size_t got, m_src->read(m_buf.data() + m_size, m_buf.size() - m_size));
    if (got == 0) m_eof = true;
    m_size += got;
    keep = m_buf.data();
    return ok_status();
  }

 private:
  detail::byte_source* m_src;
  std::vector<char> m_buf;
  size_t m_size = 0;
  size_t m_max;
  uint64_t m_base = 0;
  bool m_eof = false;
};

enum class stage { root, obj_key, obj_value, obj_after, events_start, events_elem, events_after, tail, done };

/// The document state machine. Each step starts at `p`; scan::more leaves p at the step's
/// start so the caller can refill and repeat it.
class driver {
 public:
  driver(event_sink& sink, read_stats& st) : m_sink(sink), m_st(st) {}

  scan step(const char*& p, scan_ctx& ctx) {
    switch (m_stage) {
      case stage::root: return root(p, ctx);
      case stage::obj_key: return obj_key(p, ctx);
      case stage::obj_value: return obj_value(p, ctx);
      case stage::obj_after: return obj_after(p, ctx);
      case stage::events_start: return events_start(p, ctx);
      case stage::events_elem: return events(p, ctx);
      case stage::events_after: return events(p, ctx);
      case stage::tail: return tail(p, ctx);
      case stage::done: return scan::ok;
    }
    return scan::ok;
  }
  bool done() const { return m_stage == stage::done; }
  bool in_events() const { return m_stage == stage::events_elem || m_stage == stage::events_after; }

 private:
  scan root(const char*& p, scan_ctx& ctx) {
    const char* q = p;
    SCAN_TRY(next(q, ctx));
    if (*q == '{') {
      m_stage = stage::obj_key;
      m_first = true;
      m_sink.on_root_begin(false);
    } else if (*q == '[') {
      m_sink.on_root_begin(true);
      m_st.root_is_list = true;
      m_st.has_trace_events = true;
      m_stage = stage::events_start;
      m_events_in_list = true;
      m_sink.on_trace_events_begin();
    } else {
      return ctx.fail(q, "root is neither an object nor a list");
    }
    p = q + 1;
    return scan::ok;
  }
  scan obj_key(const char*& p, scan_ctx& ctx) {
    const char* q = p;
    SCAN_TRY(next(q, ctx));
    if (m_first && *q == '}') {
      p = q + 1;
      m_stage = stage::tail;
      return scan::ok;
    }
    if (*q != '"') return ctx.fail(q, "object key expected");
    std::string_view key;
    SCAN_TRY(detail::read_string(q, ctx, &key, &m_s.key));
    SCAN_TRY(next(q, ctx));
    if (*q != ':') return ctx.fail(q, "':' expected");
    m_key.assign(key);
    p = q + 1;
    m_first = false;
    m_stage = stage::obj_value;
    return scan::ok;
  }
  scan obj_value(const char*& p, scan_ctx& ctx) {
    const char* q = p;
    SCAN_TRY(next(q, ctx));
    if (m_key == "traceEvents" && *q == '[') {
      m_st.has_trace_events = true;
      p = q + 1;
      m_stage = stage::events_start;
      m_sink.on_trace_events_begin();
      return scan::ok;
    }
    std::string_view raw;
    SCAN_TRY(detail::skip_value_slow(q, ctx, &raw));
    if (m_key == "traceEvents") {
      if (m_st.error.empty()) m_st.error = "traceEvents is not a list";
      m_st.complete = false;
    } else {
      m_sink.on_top_level(m_key, raw);
    }
    p = q;
    m_stage = stage::obj_after;
    return scan::ok;
  }
  scan obj_after(const char*& p, scan_ctx& ctx) {
    const char* q = p;
    SCAN_TRY(next(q, ctx));
    if (*q == ',') m_stage = stage::obj_key;
    else if (*q == '}') m_stage = stage::tail;
    else return ctx.fail(q, "',' or '}' expected");
    p = q + 1;
    return scan::ok;
  }
  scan events_start(const char*& p, scan_ctx& ctx) {
    const char* q = p;
    SCAN_TRY(next(q, ctx));
    if (*q == ']') {
      p = q + 1;
      m_stage = m_events_in_list ? stage::tail : stage::obj_after;
      m_sink.on_trace_events_end();
      return scan::ok;
    }
    m_stage = stage::events_elem;
    p = q;
    return scan::ok;
  }
  /// The hot loop: as many elements as the window holds.
  scan events(const char*& p, scan_ctx& ctx) {
    for (;;) {
      const char* q = p;
      if (m_stage == stage::events_after) {
        SCAN_TRY(next(q, ctx));
        if (*q == ']') {
          p = q + 1;
          m_stage = m_events_in_list ? stage::tail : stage::obj_after;
          m_sink.on_trace_events_end();
          return scan::ok;
        }
        if (*q != ',') return ctx.fail(q, "',' or ']' expected between events");
        ++q;
        p = q;
        m_stage = stage::events_elem;
      }
      SCAN_TRY(next(q, ctx));
      if (*q == '{') {
        SCAN_TRY(parse_event(q, ctx, m_ev, m_s));
        ++m_st.events;
        if (m_ev.bad_fields) count_bad_fields();
        if (m_ev.has_dur && m_ev.dur_ns < 0) note(m_st.events_negative_dur, m_st.first_negative_dur);
        m_sink.on_event(m_ev);
      } else {
        SCAN_TRY(detail::skip_value_slow(q, ctx, nullptr));
        note(m_st.non_object_elements, m_st.first_non_object);
      }
      ++m_ev.index;
      p = q;
      m_stage = stage::events_after;
    }
  }
  /// Counts the current element in `n`, remembering its index when it is the first.
  void note(uint64_t& n, uint64_t& first) {
    if (n++ == 0) first = m_ev.index;
  }
  void count_bad_fields() {
    ++m_st.events_with_bad_fields;
    if (m_ev.bad_ts) note(m_st.events_bad_ts, m_st.first_bad_ts);
    if (m_ev.bad_dur) note(m_st.events_bad_dur, m_st.first_bad_dur);
    if (m_ev.bad_fields > static_cast<uint32_t>(m_ev.bad_ts) + m_ev.bad_dur) note(m_st.events_bad_other, m_st.first_bad_other);
  }
  scan tail(const char*& p, scan_ctx& ctx) {
    const char* q = p;
    while (q < ctx.end && is_ws(*q)) ++q;
    if (q == ctx.end) {
      p = q;
      if (!ctx.final) return scan::more;
      m_stage = stage::done;
      return scan::ok;
    }
    p = q;  // json_bytes ends at the stray byte, however the whitespace before it was windowed
    return ctx.fail(q, "unexpected data after the JSON document");
  }

  event_sink& m_sink;
  read_stats& m_st;
  stage m_stage = stage::root;
  bool m_first = true, m_events_in_list = false;
  std::string m_key;
  scratch m_s;
  event_view m_ev;
};

void run(detail::byte_source& src, event_sink& sink, const read_options& opts, read_stats& st,
         progress_bar* bar) {
  double t0 = monotonic_seconds();
  window win(&src, opts.window_bytes, opts.max_event_bytes);
  driver drv(sink, st);
  scan_ctx ctx;
  const char* p = win.begin();
  ctx.end = win.end();
  bool need_data = true;
  while (!drv.done()) {
    if (need_data) {
      status s = win.refill(p);
      if (!s.ok()) {
        st.complete = false;
        st.error = s.message();
        st.error_offset = win.offset(p);
        break;
      }
      ctx.end = win.end();
      ctx.final = win.eof();
      if (bar) bar->set(src.consumed());
      need_data = false;
    }
    scan r = drv.step(p, ctx);
    if (r == scan::more) {
      need_data = true;
      continue;
    }
    if (r == scan::bad) {
      st.complete = false;
      std::string why = src.data_error();
      st.error_offset = win.offset(ctx.err_at ? ctx.err_at : p);
      if (why.empty()) why = ctx.err_msg ? ctx.err_msg : "invalid JSON";
      st.error = strprintf("%s at byte %llu", why.c_str(), static_cast<unsigned long long>(st.error_offset));
      break;
    }
  }
  if (st.complete && !src.data_error().empty()) {  // e.g. garbage after a complete document
    st.complete = false;
    st.error = src.data_error();
  }
  st.json_bytes = win.offset(p);
  st.seconds = monotonic_seconds() - t0;
}

bool looks_gzip(const unsigned char* b, size_t n) { return n >= 2 && b[0] == 0x1f && b[1] == 0x8b; }

}  // namespace

status_or<read_stats> read_trace(const fs::path& path, event_sink& sink, const read_options& opts) {
  read_stats st;
  st.path = path.string();
  unsigned char magic[2] = {0, 0};
  ssize_t got = 0;
  std::error_code dir_ec;
  if (fs::is_directory(path, dir_ec)) {
    return io_error("%s is a directory, not a trace file", path.c_str());
  }
  {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return not_found("%s: cannot open trace: %s", path.c_str(), std::strerror(errno));
    got = ::pread(fd, magic, 2, 0);
    ::close(fd);
  }
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  st.file_bytes = ec ? 0 : size;
  st.gzip = looks_gzip(magic, got > 0 ? static_cast<size_t>(got) : 0);
  MAGPIE_ASSIGN_OR_RETURN(std::unique_ptr<detail::byte_source> src, detail::open_file_source(path));
  if (st.gzip) {
    src = detail::inflate_source(std::move(src));
    if (opts.threaded_inflate) src = detail::prefetch_source(std::move(src));
  }
  std::unique_ptr<progress_bar> bar;
  if (opts.show_progress && progress_bar::drawing_enabled() && st.file_bytes > (64u << 20))
    bar = std::make_unique<progress_bar>("reading " + path.filename().string(), st.file_bytes);
  run(*src, sink, opts, st, bar.get());
  if (bar) bar->finish();
  return st;
}

read_stats read_trace_bytes(std::string_view bytes, event_sink& sink, const read_options& opts) {
  read_stats st;
  st.path = "<memory>";
  st.file_bytes = bytes.size();
  st.gzip = looks_gzip(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  std::unique_ptr<detail::byte_source> src = detail::memory_source(bytes);
  if (st.gzip) src = detail::inflate_source(std::move(src));
  run(*src, sink, opts, st, nullptr);
  return st;
}

}  // namespace magpie::trace
