// Spelling tables of enums ({value, "word"} pairs): the one place a state word is written is the
// table of its codec; these look-ups turn values into words and back.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace magpie {

template <typename E, size_t N>
const char* enum_name(const std::pair<E, const char*> (&table)[N], E value, const char* fallback) {
  for (const auto& entry : table)
    if (entry.first == value) return entry.second;
  return fallback;
}

template <typename E, size_t N>
std::optional<E> enum_parse(const std::pair<E, const char*> (&table)[N], std::string_view word) {
  for (const auto& entry : table)
    if (word == entry.second) return entry.first;
  return std::nullopt;
}

/// Every word of the table, in table order.
template <typename E, size_t N>
std::vector<std::string> enum_words(const std::pair<E, const char*> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.second);
  return out;
}

}  // namespace magpie
