// Small helpers shared by the trace analyses: string interning, Python-compatible formatting
// (upstream Magpie's CSVs and console lines are produced by Python f-strings / repr) and conversions of
// raw JSON argument text (Input Dims, Concrete Inputs) captured by the reader.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace magpie::trace {

/// Maps strings to dense ids 0, 1, 2 … in first-seen order; lookups take string_view.
class interner {
 public:
  uint32_t intern(std::string_view s);
  /// Id of `s` if already interned.
  std::optional<uint32_t> find(std::string_view s) const;
  const std::string& str(uint32_t id) const { return m_strings[id]; }
  size_t size() const { return m_strings.size(); }

 private:
  /// 8 bytes at a time (names and argument texts are long; std::hash goes byte-wise).
  struct hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const;
  };
  std::deque<std::string> m_strings;  // stable addresses: the map keys view into them
  std::unordered_map<std::string_view, uint32_t, hash, std::equal_to<>> m_ids;
};

/// Python's repr(float) / str(float): shortest round-trip digits, fixed notation for decimal
/// exponents in [-4, 16), else "d.ddde+XX"; integral values keep ".0"; "inf", "nan".
std::string python_float_repr(double v);
/// Python f"{v:.Nf}" (identical to printf "%.*f": both round the exact binary value).
std::string py_fixed(double v, int decimals);

/// Python's str() of a JSON value given as validated raw JSON text: lists "[1, 2]", strings
/// 'a' (Python quoting), true/false/null → True/False/None, integers as written, other numbers
/// through float repr. Objects become dict reprs {'k': v}.
std::string python_repr_json(std::string_view raw);

/// Top-level elements of a JSON array given as raw text (each element's raw text); empty when
/// `raw` is not an array.
std::vector<std::string_view> json_array_elements(std::string_view raw);
/// The decoded value of a JSON string literal (raw text including quotes); nullopt otherwise.
std::optional<std::string> json_string_value(std::string_view raw);
/// Integer elements of a flat JSON array ("[8192, 1024]"); nullopt when any element is not an
/// integer or `raw` is not an array.
std::optional<std::vector<int64_t>> json_int_list(std::string_view raw);

/// Upstream Magpie's gap-analysis shape string: [[5, 2880], [2880, 201088], []] → "[5,2880]x[2880,201088]"
/// (non-list and empty elements skipped; nested lists printed with Python's str()).
std::string format_gap_shape(std::string_view input_dims_raw);

/// ASCII lower-case.
std::string lower_ascii(std::string_view s);
/// Number of Unicode code points in UTF-8 text (invalid bytes count one each).
size_t utf8_length(std::string_view s);
/// The first `n` code points of UTF-8 text.
std::string utf8_prefix(std::string_view s, size_t n);
/// Python f"{s:<width}" / f"{s:{width}s}": pads with spaces to `width` code points.
std::string py_pad_right(std::string_view s, size_t width);
std::string py_pad_left(std::string_view s, size_t width);

}  // namespace magpie::trace
