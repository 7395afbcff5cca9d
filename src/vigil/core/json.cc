#include "vigil/core/json.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace vigil {
namespace {

bool StartsWithAt(std::string_view text, size_t i, std::string_view word) {
  return text.substr(i, word.size()) == word;
}

}  // namespace

std::string PythonNonFiniteAsNull(std::string_view text) {
  std::string out;
  bool in_string = false;
  size_t copied = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != 'N' && c != 'I' && c != '-') continue;  // cheap test before comparing words
    size_t len = 0;
    if (StartsWithAt(text, i, "NaN")) len = 3;
    if (StartsWithAt(text, i, "Infinity")) len = 8;
    if (StartsWithAt(text, i, "-Infinity")) len = 9;
    if (len == 0) continue;
    out.append(text.substr(copied, i - copied));
    out.append("null");
    i += len - 1;
    copied = i + 1;
  }
  if (copied == 0) return {};
  out.append(text.substr(copied));
  return out;
}

Result<Json> ParseJson(std::string_view text, std::string_view source, int first_line) {
  const std::string normalized = PythonNonFiniteAsNull(text);
  const std::string_view input = normalized.empty() ? text : std::string_view(normalized);
  try {
    return Json::parse(input);
  } catch (const Json::parse_error& e) {
    // Locate the byte where parsing stopped; nlohmann counts from 1.
    const size_t end = std::min(e.byte == 0 ? 0 : e.byte - 1, input.size());
    int line = first_line;
    size_t line_start = 0;
    for (size_t i = 0; i < end; ++i) {
      if (input[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    std::string reason = e.what();
    const size_t colon = reason.find(": ");
    if (colon != std::string::npos) reason = reason.substr(colon + 2);
    return Status::InvalidArgument(
        fmt::format("{}:{}:{}: {}", source, line, end - line_start + 1, reason));
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source, first_line, e.what()));
  }
}

std::string DumpJson(const Json& json, int indent) {
  return json.dump(indent, ' ', false, Json::error_handler_t::replace);
}

void AppendJsonString(std::string& out, std::string_view text, bool ensure_ascii) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
  if (plain) {
    out += '"';
    out += text;
    out += '"';
  } else {
    out += Json(std::string(text)).dump(-1, ' ', ensure_ascii, Json::error_handler_t::replace);
  }
}

}  // namespace vigil
