#include "vigil/server/upload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_set>

#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/document.h"

namespace vigil::server {

Status CheckNodeName(std::string_view node) {
  if (node.empty()) return Status::InvalidArgument("node name is empty");
  if (node.size() > 253) return Status::InvalidArgument("node name is longer than 253 characters");
  for (const char c : node) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '/') {
      return Status::InvalidArgument(
          fmt::format("node name {} has a control character or '/'", Quote(node)));
    }
  }
  return Status::Ok();
}

std::vector<std::string> BenchmarksOfRow(const FleetRow& row) {
  std::vector<std::string> out;
  for (const auto& [key, value] : row.values) {
    std::string b = BenchmarkOfKey(key);
    if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(std::move(b));
  }
  return out;
}

namespace {

Result<ParsedUpload> FromDocument(const NodeResults& doc, std::string_view body,
                                  std::string_view source) {
  const Status name = CheckNodeName(doc.node);
  if (!name.ok()) return name.WithContext(fmt::format("{}: node", source));
  ParsedUpload u;
  u.row = FleetRowOf(doc);
  // Missing figures (NaN) are absent from the row, as a summary line reads them; a key twice
  // would make the stored line unreadable.
  std::erase_if(u.row.values, [](const auto& kv) { return std::isnan(kv.second); });
  std::unordered_set<std::string_view> keys;
  for (const auto& [key, value] : u.row.values) {
    if (!keys.insert(key).second) {
      return Status::InvalidArgument(
          fmt::format("{}: metric {} appears twice", source, Quote(key)));
    }
  }
  u.benchmarks = BenchmarksRun(doc);
  u.start_time = doc.start_time;
  u.suite = doc.suite;
  u.document = std::string(body);
  return u;
}

Result<std::vector<ParsedUpload>> FromSummary(std::string_view body, std::string_view source) {
  // One thread: the server already runs one request per thread.
  VIGIL_ASSIGN_OR_RETURN(FleetTable table, ParseFleetTable(body, source, 1));
  std::vector<ParsedUpload> out;
  for (size_t i = 0; i < table.node_count(); ++i) {
    const Status name = CheckNodeName(table.node(i));
    if (!name.ok()) return name.WithContext(fmt::format("{}:{}: node", source, table.line(i)));
    ParsedUpload u;
    u.row = table.Row(i);
    u.benchmarks = BenchmarksOfRow(u.row);
    out.push_back(std::move(u));
  }
  if (out.empty()) return Status::InvalidArgument(fmt::format("{}: no node in the upload", source));
  return out;
}

}  // namespace

Result<std::vector<ParsedUpload>> ParseUpload(std::string_view body, std::string_view source) {
  const size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return Status::InvalidArgument(fmt::format("{}: empty upload", source));
  }
  // A document is one object, usually pretty-printed over many lines; summary lines are one
  // object each. Only a whole body that parses as one object can be a document.
  if (body[first] == '{') {
    VIGIL_ASSIGN_OR_RETURN(std::optional<NodeResults> doc, ParseIfResultsDocument(body, source));
    if (doc) {
      VIGIL_ASSIGN_OR_RETURN(ParsedUpload u, FromDocument(*doc, body, source));
      std::vector<ParsedUpload> out;
      out.push_back(std::move(u));
      return out;
    }
  }
  Result<std::vector<ParsedUpload>> rows = FromSummary(body, source);
  if (rows.ok() || body[first] != '{') return rows;
  // A body on one line, or whose first line opens an object it does not close (a pretty-printed
  // document), is one JSON text: when it is broken, its parser's error says where.
  const size_t eol = std::min(body.find('\n', first), body.size());
  const bool one_text =
      eol >= body.find_last_not_of(" \t\r\n") || Trim(body.substr(first, eol - first)) == "{";
  if (one_text) {
    Result<Json> json = ParseJson(body, source);
    if (!json.ok()) return json.status();
  }
  return rows;
}
}  // namespace vigil::server
