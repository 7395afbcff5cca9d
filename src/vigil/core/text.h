// Small text helpers for messages about outside data.
#pragma once

#include <functional>
#include <string>
#include <string_view>

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

// Lets a map keyed by std::string be searched with a string_view, without building a string per
// lookup: std::unordered_map<std::string, T, StringHash, std::equal_to<>>.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace vigil
