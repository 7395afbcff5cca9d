// Small text helpers for messages about outside data.
#pragma once

#include <string>
#include <string_view>

namespace vigil {

// `s` in double quotes, safe to print whatever it holds: quotes and backslashes escaped, control
// characters and bytes outside printable ASCII written as \xNN. For error messages that quote
// input (fmt's own "{:?}" asserts on invalid UTF-8).
std::string Quote(std::string_view s);

// `s` without leading and trailing spaces, tabs, carriage returns and newlines.
std::string_view Trim(std::string_view s);

}  // namespace vigil
