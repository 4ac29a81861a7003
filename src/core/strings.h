// Small string utilities (printf-style formatting, splitting, trimming).
#pragma once

#include <cstdarg>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace magpie {

std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string vstrprintf(const char* fmt, va_list ap);

/// Splits on runs of ASCII whitespace; no quoting (upstream Magpie's command-string grammar).
std::vector<std::string> split_whitespace(std::string_view s);
/// Splits on every occurrence of `sep` (empty fields kept).
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string_view trim(std::string_view s);
std::string to_lower(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
bool contains(std::string_view s, std::string_view needle);
/// Replaces every occurrence of `from` by `to`.
std::string replace_all(std::string s, std::string_view from, std::string_view to);
/// Keeps [A-Za-z0-9_-], maps every other character to '_'.
std::string sanitize_label(std::string_view s);

/// Strict number parsing: the whole string must be consumed.
std::optional<double> parse_double(std::string_view s);
std::optional<int64_t> parse_int(std::string_view s);

/// Quotes an argv element for display only (never executed through a shell).
std::string shell_quote(std::string_view s);
std::string argv_to_display(const std::vector<std::string>& argv);

/// Formats a duration in seconds with a unit that keeps 3-4 significant digits.
std::string format_duration_ns(double ns);

/// Levenshtein distance (insertions, deletions, substitutions; bytes, not code points).
size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate nearest to `word` for a "did you mean" hint: at most max(1, size/3) edits
/// away (case-insensitive), ties to the first; empty when none is that close.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);
/// " (did you mean 'X'?)" for closest_match's answer, or "" when there is none.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace magpie
