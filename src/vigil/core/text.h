// Small text helpers for messages about outside data.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// `s` in double quotes, safe to print whatever it holds: quotes and backslashes escaped, control
// characters and bytes outside printable ASCII written as \xNN. For error messages that quote
// input (fmt's own "{:?}" asserts on invalid UTF-8).
std::string Quote(std::string_view s);

// `text` made safe for HTML: & < > escaped, and with `quotes` also " and ', for attribute values.
// (SuperBench's report escapes only & < >, and Vigil's copy of it stays byte-identical.)
std::string HtmlEscape(std::string_view text, bool quotes = true);

// `s` without leading and trailing spaces, tabs, carriage returns and newlines.
std::string_view Trim(std::string_view s);

// Whether `s` is non-empty and each of its characters an ASCII letter, a digit or one of
// `punctuation`: a name that is safe to pass on (to a shell, to Slurm) as it is.
bool IsPlainWord(std::string_view s, std::string_view punctuation);

// Calls fn(index, field) for each `separator`-separated field of `text`, empty ones included
// ("" is one empty field, "a," two), untrimmed; returns how many. For hot loops (a CSV line)
// that should not build a vector per call.
template <typename Fn>
size_t ForEachField(std::string_view text, char separator, Fn&& fn) {
  size_t n = 0;
  for (size_t start = 0;; ++n) {
    const size_t end = text.find(separator, start);
    fn(n, text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return n + 1;
    start = end + 1;
  }
}

// The fields of ForEachField, as views into `text`.
std::vector<std::string_view> Split(std::string_view text, char separator);

// The words of a line separated by runs of spaces, tabs and carriage returns (a host file, a
// tool's padded table), as views into `line`; none for a blank line.
std::vector<std::string_view> Words(std::string_view line);

// Lets a map keyed by std::string be searched with a string_view, without building a string per
// lookup: std::unordered_map<std::string, T, StringHash, std::equal_to<>>.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace vigil
