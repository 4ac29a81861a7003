// The keys of a trace event, and of its "args", that the reader keeps (internal to src/trace).
//
// Two recognisers map a key to its enum: event_key_of / arg_key_of by the decoded key text (any
// layout, escapes decoded), and event_key_at / arg_key_at by the raw bytes `"key": ` followed by
// a value's first byte, the layout Kineto and Python's json write (no key decoding, no separator
// scan). Whatever the fast one does not recognise goes to the general path, so both must agree on
// every key: tests/unit/trace/event_keys_test.cpp checks each name both ways.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace magpie::trace::detail {

enum class event_key : uint8_t { other, ph, ts, id, bp, cat, dur, pid, tid, name, args, count_ };
enum class arg_key : uint8_t {
  other, stream, device, grid, block, dtype, input_dims, input_type, group_size, external_id, correlation,
  input_strides, in_msg_nelems, out_msg_nelems, concrete_inputs, collective_name, sequence_number, pg_name, count_
};

/// The key text of each enum value (index = the enum's value; "" for other).
inline constexpr std::string_view k_event_key_names[] = {"", "ph", "ts", "id", "bp", "cat", "dur", "pid", "tid", "name", "args"};
inline constexpr std::string_view k_arg_key_names[] = {
    "", "stream", "device", "grid", "block", "dtype", "Input Dims", "Input type", "Group size", "External id",
    "correlation", "Input Strides", "In msg nelems", "Out msg nelems", "Concrete Inputs", "Collective name",
    "Sequence number", "Process Group Name"};
static_assert(std::size(k_event_key_names) == static_cast<size_t>(event_key::count_));
static_assert(std::size(k_arg_key_names) == static_cast<size_t>(arg_key::count_));

/// Bytes the fast recognisers may read at q (the longest `"key": ` plus the value's first byte).
constexpr size_t k_key_fast_bytes = 32;

namespace keys {

[[gnu::always_inline]] inline uint64_t load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
/// The little-endian word of the first n (<= 8) bytes of s, zero-padded (folded at compile time).
[[gnu::always_inline]] constexpr uint64_t word_of(const char* s, size_t n) {
  uint64_t w = 0;
  for (size_t i = 0; i < n; ++i) w |= static_cast<uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
  return w;
}
/// A key literal as a template argument, so its words are compile-time constants.
template <size_t N>
struct lit {
  char s[N];
  constexpr lit(const char (&x)[N]) {  // NOLINT: implicit, for text_is<"ph">
    for (size_t i = 0; i < N; ++i) s[i] = x[i];
  }
  static constexpr size_t size = N - 1;
};
/// The bytes `"key": ` of a key literal.
template <lit L>
struct pattern {
  static constexpr size_t len = L.size + 4;
  static constexpr auto bytes = [] {
    struct b { char c[len]; } out{};
    out.c[0] = '"';
    for (size_t i = 0; i < L.size; ++i) out.c[i + 1] = L.s[i];
    out.c[L.size + 1] = '"';
    out.c[L.size + 2] = ':';
    out.c[L.size + 3] = ' ';
    return out;
  }();
  static constexpr uint64_t word(size_t at, size_t n) { return word_of(bytes.c + at, n); }
};

/// k (a decoded key) equals L: keys of 8-24 bytes compared as 8-byte words.
template <lit L>
[[gnu::always_inline]] inline bool text_is(std::string_view k) {
  constexpr size_t n = L.size;
  if (k.size() != n) return false;
  if constexpr (n < 8) {
    return std::memcmp(k.data(), L.s, n) == 0;
  } else {
    constexpr uint64_t head = word_of(L.s, 8), tail = word_of(L.s + n - 8, 8);
    const char* d = k.data();
    bool eq = load8(d) == head && load8(d + n - 8) == tail;
    if constexpr (n > 16) eq = eq && load8(d + 8) == word_of(L.s + 8, 8);
    return eq;
  }
}
/// q holds `"L": ` and then a byte above ' ' (reads len + 1 <= k_key_fast_bytes bytes at q).
template <lit L>
[[gnu::always_inline]] inline bool raw_is(const char* q) {
  using p = pattern<L>;
  constexpr size_t len = p::len;
  static_assert(len + 1 <= k_key_fast_bytes);
  bool eq;
  if constexpr (len <= 8) {
    constexpr uint64_t mask = len == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * len)) - 1;
    constexpr uint64_t want = p::word(0, len);
    eq = (load8(q) & mask) == want;
  } else {
    constexpr uint64_t head = p::word(0, 8), tail = p::word(len - 8, 8);
    eq = load8(q) == head && load8(q + len - 8) == tail;
    if constexpr (len > 16) {
      constexpr uint64_t mid = p::word(8, 8);
      eq = eq && load8(q + 8) == mid;
    }
  }
  return eq && static_cast<unsigned char>(q[len]) > ' ';
}

}  // namespace keys

#define MAGPIE_KEY_TEXT(text, k) \
  if (keys::text_is<text>(key)) return k
#define MAGPIE_KEY_RAW(text, k)                    \
  if (keys::raw_is<text>(q)) {                     \
    q += keys::pattern<text>::len;                 \
    return k;                                      \
  }

inline event_key event_key_of(std::string_view key) {
  using k = event_key;
  switch (key.size()) {
    case 2:
      MAGPIE_KEY_TEXT("ph", k::ph);
      MAGPIE_KEY_TEXT("ts", k::ts);
      MAGPIE_KEY_TEXT("id", k::id);
      MAGPIE_KEY_TEXT("bp", k::bp);
      break;
    case 3:
      MAGPIE_KEY_TEXT("cat", k::cat);
      MAGPIE_KEY_TEXT("dur", k::dur);
      MAGPIE_KEY_TEXT("pid", k::pid);
      MAGPIE_KEY_TEXT("tid", k::tid);
      break;
    case 4:
      MAGPIE_KEY_TEXT("name", k::name);
      MAGPIE_KEY_TEXT("args", k::args);
      break;
    default: break;
  }
  return k::other;
}

/// q at '"' with k_key_fast_bytes readable. A recognised key advances q to its value.
[[gnu::always_inline]] inline event_key event_key_at(const char*& q) {
  using k = event_key;
  switch (q[1]) {
    case 'p':
      MAGPIE_KEY_RAW("ph", k::ph);
      MAGPIE_KEY_RAW("pid", k::pid);
      break;
    case 't':
      MAGPIE_KEY_RAW("ts", k::ts);
      MAGPIE_KEY_RAW("tid", k::tid);
      break;
    case 'c': MAGPIE_KEY_RAW("cat", k::cat); break;
    case 'n': MAGPIE_KEY_RAW("name", k::name); break;
    case 'd': MAGPIE_KEY_RAW("dur", k::dur); break;
    case 'a': MAGPIE_KEY_RAW("args", k::args); break;
    case 'i': MAGPIE_KEY_RAW("id", k::id); break;
    case 'b': MAGPIE_KEY_RAW("bp", k::bp); break;
    default: break;
  }
  return k::other;
}

inline arg_key arg_key_of(std::string_view key) {
  using k = arg_key;
  switch (key.size()) {
    case 4: MAGPIE_KEY_TEXT("grid", k::grid); break;
    case 5:
      MAGPIE_KEY_TEXT("block", k::block);
      MAGPIE_KEY_TEXT("dtype", k::dtype);
      break;
    case 6:
      MAGPIE_KEY_TEXT("stream", k::stream);
      MAGPIE_KEY_TEXT("device", k::device);
      break;
    case 10:
      MAGPIE_KEY_TEXT("Input Dims", k::input_dims);
      MAGPIE_KEY_TEXT("Input type", k::input_type);
      MAGPIE_KEY_TEXT("Group size", k::group_size);
      break;
    case 11:
      MAGPIE_KEY_TEXT("External id", k::external_id);
      MAGPIE_KEY_TEXT("correlation", k::correlation);
      break;
    case 13:
      MAGPIE_KEY_TEXT("Input Strides", k::input_strides);
      MAGPIE_KEY_TEXT("In msg nelems", k::in_msg_nelems);
      break;
    case 14: MAGPIE_KEY_TEXT("Out msg nelems", k::out_msg_nelems); break;
    case 15:
      MAGPIE_KEY_TEXT("Concrete Inputs", k::concrete_inputs);
      MAGPIE_KEY_TEXT("Collective name", k::collective_name);
      MAGPIE_KEY_TEXT("Sequence number", k::sequence_number);
      break;
    case 18: MAGPIE_KEY_TEXT("Process Group Name", k::pg_name); break;
    default: break;
  }
  return k::other;
}

/// arg_key_of on the raw bytes at q (as event_key_at).
[[gnu::always_inline]] inline arg_key arg_key_at(const char*& q) {
  using k = arg_key;
  switch (q[1]) {
    case 'I':
      MAGPIE_KEY_RAW("Input Dims", k::input_dims);
      MAGPIE_KEY_RAW("Input type", k::input_type);
      MAGPIE_KEY_RAW("Input Strides", k::input_strides);
      MAGPIE_KEY_RAW("In msg nelems", k::in_msg_nelems);
      break;
    case 'E': MAGPIE_KEY_RAW("External id", k::external_id); break;
    case 'C':
      MAGPIE_KEY_RAW("Concrete Inputs", k::concrete_inputs);
      MAGPIE_KEY_RAW("Collective name", k::collective_name);
      break;
    case 'c': MAGPIE_KEY_RAW("correlation", k::correlation); break;
    case 's': MAGPIE_KEY_RAW("stream", k::stream); break;
    case 'd':
      MAGPIE_KEY_RAW("device", k::device);
      MAGPIE_KEY_RAW("dtype", k::dtype);
      break;
    case 'g': MAGPIE_KEY_RAW("grid", k::grid); break;
    case 'b': MAGPIE_KEY_RAW("block", k::block); break;
    case 'G': MAGPIE_KEY_RAW("Group size", k::group_size); break;
    case 'O': MAGPIE_KEY_RAW("Out msg nelems", k::out_msg_nelems); break;
    case 'S': MAGPIE_KEY_RAW("Sequence number", k::sequence_number); break;
    case 'P': MAGPIE_KEY_RAW("Process Group Name", k::pg_name); break;
    default: break;
  }
  return k::other;
}

#undef MAGPIE_KEY_TEXT
#undef MAGPIE_KEY_RAW

}  // namespace magpie::trace::detail
