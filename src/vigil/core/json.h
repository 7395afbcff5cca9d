// JSON parsing with error messages that name the source, line and column.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "vigil/core/status.h"

namespace vigil {

// Objects keep their keys in file order, so that what Vigil reads and writes back is unchanged.
using Json = nlohmann::ordered_json;

// Parses one JSON text. `source` names it in errors; `first_line` is the line number of the text's
// first line within that source (for one line of a JSONL file). On malformed input returns
// InvalidArgument "<source>:<line>:<column>: <reason>".
//
// Python's json module writes non-finite floats as the bare words NaN, Infinity and -Infinity
// (SuperBench's files contain them); outside strings they are read as null, which Vigil's readers
// take as a missing value.
Result<Json> ParseJson(std::string_view text, std::string_view source, int first_line = 1);

// Serialises `json` (indent < 0: one line). Never throws: invalid UTF-8 in a string, which can
// only come from the command line or the system since ParseJson rejects it, becomes U+FFFD.
// Python's json module writes non-finite floats as the bare words NaN, Infinity and -Infinity.
// Returns `text` with each of them outside strings replaced by null, or an empty string when it has
// none (the common case), for readers other than ParseJson.
std::string PythonNonFiniteAsNull(std::string_view text);

std::string DumpJson(const Json& json, int indent = -1);

// Appends `text` as a JSON string literal, byte for byte as DumpJson(Json(text)) writes it; with
// `ensure_ascii`, everything outside ASCII is escaped as \uXXXX, as Python's json.dumps writes it.
// Plain ASCII text, the common case, is copied without building a Json value.
void AppendJsonString(std::string& out, std::string_view text, bool ensure_ascii = false);

}  // namespace vigil
