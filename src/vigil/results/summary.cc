#include "vigil/results/summary.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/lines.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Integral doubles below this magnitude are written without a fraction ("3", not "3.0").
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

Result<FleetRow> ParseRow(std::string_view line, std::string_view source, int line_no) {
  VIGIL_ASSIGN_OR_RETURN(Json obj, ParseJson(line, source, line_no));
  const auto where = [&](std::string_view field) {
    return fmt::format("{}:{}: field {}", source, line_no, Quote(field));
  };
  if (!obj.is_object()) {
    return Status::InvalidArgument(fmt::format("{}:{}: expected a JSON object", source, line_no));
  }
  FleetRow row;
  bool has_node = false;
  row.values.reserve(obj.size());
  for (const auto& [key, value] : obj.items()) {
    if (key == "node" || key == "index") {
      if (!value.is_string()) {
        return Status::InvalidArgument(fmt::format("{}: expected a string", where(key)));
      }
      if (has_node) {
        return Status::InvalidArgument(
            fmt::format("{}:{}: both \"node\" and \"index\" name the node", source, line_no));
      }
      row.node = value.get<std::string>();
      has_node = true;
      continue;
    }
    Result<MetricKey> parsed = MetricKey::Parse(key);
    if (!parsed.ok()) {
      return Status::InvalidArgument(fmt::format("{}: {}", where(key), parsed.status().message()));
    }
    if (!value.is_number() && !value.is_null()) {
      return Status::InvalidArgument(fmt::format("{}: expected a number or null", where(key)));
    }
    row.values.emplace_back(key, value.is_null() ? kNaN : value.get<double>());
  }
  if (!has_node) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: no \"node\" field naming the node", source, line_no));
  }
  return row;
}

void AppendNumber(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
  } else if (v == std::trunc(v) && std::fabs(v) < kMaxExactInteger) {
    fmt::format_to(std::back_inserter(out), "{}", static_cast<int64_t>(v));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", v);  // shortest exact round trip
  }
}

}  // namespace

Result<std::vector<FleetRow>> ParseFleetSummary(std::string_view text, std::string_view source) {
  std::vector<FleetRow> rows;
  LineReader lines(text);
  std::string_view line;
  while (lines.Next(line)) {
    if (Trim(line).empty()) continue;  // blank
    VIGIL_ASSIGN_OR_RETURN(FleetRow row, ParseRow(line, source, static_cast<int>(lines.line_no())));
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<FleetRow>> ReadFleetSummary(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseFleetSummary(text, path);
}

std::string FormatFleetRow(const FleetRow& row) {
  std::string out = "{\"node\": ";
  out += DumpJson(Json(row.node));
  for (const auto& [key, value] : row.values) {
    out += ", ";
    out += DumpJson(Json(key));
    out += ": ";
    AppendNumber(out, value);
  }
  out += "}\n";
  return out;
}

Status WriteFleetSummary(const std::string& path, const std::vector<FleetRow>& rows) {
  std::string text;
  for (const FleetRow& row : rows) text += FormatFleetRow(row);
  return WriteFileAtomic(path, text);
}

FleetRow FleetRowOf(const NodeResults& doc) {
  FleetRow row;
  row.node = doc.node;
  for (const BenchmarkRecord& r : doc.benchmarks) {
    if (r.status == BenchStatus::kSkipped) continue;
    for (const Metric& m : r.metrics) row.values.emplace_back(m.key.ToString(), m.value);
    row.values.emplace_back(r.name + "/return_code", static_cast<double>(r.return_code));
  }
  return row;
}

}  // namespace vigil
