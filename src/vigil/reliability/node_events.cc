#include "vigil/reliability/node_events.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "vigil/core/bounds.h"
#include "vigil/core/clock.h"
#include "vigil/core/file.h"
#include "vigil/core/lines.h"
#include "vigil/core/text.h"

namespace vigil::reliability {
namespace {

// ISO 8601 (in `zone` unless it ends in Z) or Unix seconds, within kUnixTimeBounds (years 1970
// to 2200).
std::optional<int64_t> ParseTimestamp(std::string_view s, const TimeZone& zone) {
  if (std::optional<int64_t> iso = ParseZonedIsoSeconds(s, zone)) {
    if (!kUnixTimeBounds.Contains(static_cast<double>(*iso))) return std::nullopt;
    return iso;
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() ||
      !kUnixTimeBounds.Contains(v)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(std::floor(v));
}

Result<NodeEvent> ParseLine(std::string_view line, std::string_view source, int64_t line_no,
                            const TimeZone& zone) {
  const auto error = [&](std::string_view field, std::string_view what) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: field {}: {}", source, line_no, field, what));
  };
  const size_t c1 = line.find(',');
  const size_t c2 = c1 == std::string_view::npos ? c1 : line.find(',', c1 + 1);
  if (c2 == std::string_view::npos) {
    return Status::InvalidArgument(fmt::format(
        "{}:{}: expected timestamp,node,kind[,detail], got {}", source, line_no, Quote(line)));
  }
  const size_t c3 = line.find(',', c2 + 1);
  NodeEvent e;
  const std::string_view ts = Trim(line.substr(0, c1));
  const std::optional<int64_t> t = ParseTimestamp(ts, zone);
  if (!t) {
    return error("timestamp", fmt::format("bad time {} (ISO 8601 or Unix seconds, years 1970 to "
                                          "2200)",
                                          Quote(ts)));
  }
  e.time = *t;
  e.node = std::string(Trim(line.substr(c1 + 1, c2 - c1 - 1)));
  if (e.node.empty()) return error("node", "empty");
  const std::string_view kind =
      Trim(line.substr(c2 + 1, c3 == std::string_view::npos ? c3 : c3 - c2 - 1));
  if (kind.empty()) return error("kind", "empty");
  e.kind = std::string(kind);
  if (c3 != std::string_view::npos) e.detail = std::string(Trim(line.substr(c3 + 1)));
  return e;
}

}  // namespace

Result<NodeEventLog> ParseNodeEvents(std::string_view text, std::string_view source, bool lenient,
                                     const TimeZone& zone) {
  NodeEventLog log;
  bool have_header = false;
  LineReader lines(text);
  std::string_view raw;
  while (lines.Next(raw)) {
    const std::string_view line = Trim(raw);
    const int64_t line_no = lines.line_no();
    if (line.empty()) continue;
    if (!have_header) {
      if (!line.starts_with("timestamp,node,kind")) {
        return Status::InvalidArgument(
            fmt::format("{}:{}: expected the header timestamp,node,kind[,detail], got {}", source,
                        line_no, Quote(line)));
      }
      have_header = true;
      continue;
    }
    Result<NodeEvent> e = ParseLine(line, source, line_no, zone);
    if (e.ok()) {
      log.events.push_back(std::move(e).value());
    } else if (!lenient) {
      return e.status();
    } else if (log.skipped_lines++ == 0) {
      log.first_skip = e.status().message();
    }
  }
  if (!have_header) {
    return Status::InvalidArgument(
        fmt::format("{}: empty: expected the header timestamp,node,kind[,detail]", source));
  }
  return log;
}

Result<NodeEventLog> ReadNodeEvents(const std::string& path, bool lenient, const TimeZone& zone) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return ParseNodeEvents(text, path, lenient, zone);
}

}  // namespace vigil::reliability
