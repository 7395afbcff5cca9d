// The body of POST /api/v1/incidents: incidents (a job a node failed or slowed) as one JSON
// object, a JSON array of them, or JSON Lines, each with the fields of select's history incident
// record (node, time, kind, cost_node_hours) and optionally the job and a note. The format is in
// docs/formats.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/store/store.h"

namespace vigil::server {

// How far in the future an incident's time may be (clocks of reporters and server differ); the
// fleet's history leaves out any record further ahead than this.
inline constexpr double kIncidentSkewS = 300;

// One incident of a body, with where it was ("incidents:3", "incidents: incident 2") for the
// errors found after parsing (a node that never uploaded).
struct ParsedIncident {
  std::string where;
  store::StoredIncident incident;
};

// The incidents of `body`, `received` not yet set. InvalidArgument "<source>:<line>: <field>:
// <reason>" (or "<source>: incident <i>: ..." in an array) for a malformed line, an unknown,
// missing or mistyped field, a bad node name, a time that is neither Unix seconds nor ISO 8601,
// a negative cost; "<source>: no incident" for a body without any.
Result<std::vector<ParsedIncident>> ParseIncidents(std::string_view body, std::string_view source);

}  // namespace vigil::server
