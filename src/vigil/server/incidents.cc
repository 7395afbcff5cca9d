#include "vigil/server/incidents.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "vigil/core/clock.h"
#include "vigil/core/json.h"
#include "vigil/core/lines.h"
#include "vigil/core/text.h"
#include "vigil/server/upload.h"

namespace vigil::server {
namespace {

constexpr double kEarliestIncidentS = 946684800;  // 2000-01-01T00:00:00Z

constexpr std::array<std::string_view, 6> kFields = {"node", "time", "kind", "cost_node_hours",
                                                     "job",  "note"};

// Reads one incident object; `where` ("incidents:3" or "incidents: incident 2") starts each
// error, followed by the field.
class IncidentReader {
 public:
  IncidentReader(const Json& json, std::string where) : json_(json), where_(std::move(where)) {}

  Result<store::StoredIncident> Read() const {
    if (!json_.is_object()) return Error("incident", "expected a JSON object");
    for (const auto& [key, value] : json_.items()) {
      if (std::find(kFields.begin(), kFields.end(), key) == kFields.end()) {
        return Error(key, "unknown field");
      }
    }
    store::StoredIncident out;
    VIGIL_ASSIGN_OR_RETURN(out.node, String("node", true));
    if (Status name = CheckNodeName(out.node); !name.ok()) return Error("node", name.message());
    VIGIL_ASSIGN_OR_RETURN(out.time, Time());
    VIGIL_ASSIGN_OR_RETURN(out.kind, String("kind", true));
    VIGIL_ASSIGN_OR_RETURN(out.cost_node_hours, Cost());
    VIGIL_ASSIGN_OR_RETURN(out.job, String("job", false));
    VIGIL_ASSIGN_OR_RETURN(out.note, String("note", false));
    return out;
  }

 private:
  Status Error(std::string_view field, std::string_view reason) const {
    return Status::InvalidArgument(fmt::format("{}: {}: {}", where_, field, reason));
  }

  // A non-empty string when `required`; an optional one is "" when absent.
  Result<std::string> String(std::string_view field, bool required) const {
    auto it = json_.find(field);
    if (it == json_.end()) {
      if (required) return Error(field, "missing");
      return std::string();
    }
    if (!it->is_string()) return Error(field, "expected a string");
    if (required && it->get_ref<const std::string&>().empty()) return Error(field, "is empty");
    return it->get<std::string>();
  }

  // Unix seconds, or an ISO 8601 UTC time as the results documents write it; not before 2000
  // (a zero or a year 1 is a reporter's bug, and would stretch the history over decades).
  Result<double> Time() const {
    auto it = json_.find("time");
    if (it == json_.end()) return Error("time", "missing");
    double t = 0;
    if (it->is_string()) {
      const std::optional<int64_t> s = ParseIsoSeconds(it->get_ref<const std::string&>());
      if (!s) return Error("time", "expected ISO 8601 (2026-11-22T09:30:00Z) or Unix seconds");
      t = static_cast<double>(*s);
    } else if (it->is_number()) {
      t = it->get<double>();
    } else {
      return Error("time", "expected Unix seconds or an ISO 8601 string");
    }
    if (!std::isfinite(t) || t < kEarliestIncidentS) {
      return Error("time", fmt::format("expected a time in 2000 or later, got {}", t));
    }
    return t;
  }

  Result<double> Cost() const {
    auto it = json_.find("cost_node_hours");
    if (it == json_.end()) return Error("cost_node_hours", "missing");
    if (!it->is_number()) return Error("cost_node_hours", "expected a number");
    const double c = it->get<double>();
    if (!std::isfinite(c) || c < 0) {
      return Error("cost_node_hours", fmt::format("expected a finite number >= 0, got {}", c));
    }
    return c;
  }

  const Json& json_;
  std::string where_;
};

}  // namespace

Result<std::vector<ParsedIncident>> ParseIncidents(std::string_view body, std::string_view source) {
  std::vector<ParsedIncident> out;
  const auto read = [&](const Json& json, std::string where) -> Status {
    VIGIL_ASSIGN_OR_RETURN(store::StoredIncident incident, IncidentReader(json, where).Read());
    out.push_back(ParsedIncident{std::move(where), std::move(incident)});
    return Status::Ok();
  };
  const size_t first = body.find_first_not_of(" \t\r\n");
  // The line an object begins on (a pretty-printed one spans several).
  const auto first_line = [&](size_t at) {
    return 1 + std::count(body.begin(), body.begin() + static_cast<ptrdiff_t>(at), '\n');
  };
  if (first != std::string_view::npos && body[first] == '[') {
    VIGIL_ASSIGN_OR_RETURN(const Json array, ParseJson(body, source));
    for (size_t i = 0; i < array.size(); ++i) {
      VIGIL_RETURN_IF_ERROR(read(array[i], fmt::format("{}: incident {}", source, i + 1)));
    }
  } else if (Result<Json> whole = ParseJson(body, source); whole.ok() && whole->is_object()) {
    // One object, pretty-printed or not.
    VIGIL_RETURN_IF_ERROR(read(*whole, fmt::format("{}:{}", source, first_line(first))));
  } else {
    LineReader lines(body);
    std::string_view line;
    while (lines.Next(line)) {
      if (Trim(line).empty()) continue;
      const int line_no = static_cast<int>(lines.line_no());
      VIGIL_ASSIGN_OR_RETURN(const Json j, ParseJson(line, source, line_no));
      VIGIL_RETURN_IF_ERROR(read(j, fmt::format("{}:{}", source, line_no)));
    }
  }
  if (out.empty()) return Status::InvalidArgument(fmt::format("{}: no incident", source));
  return out;
}

}  // namespace vigil::server
