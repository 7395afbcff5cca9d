// Node events: health-check failures, XIDs, reboots, from any monitoring system, as CSV
// `timestamp,node,kind[,detail]` with a header line. Used to blame failed jobs on the
// infrastructure and as evidence against lemon nodes. Format: docs/formats.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/core/time_zone.h"

namespace vigil::reliability {

struct NodeEvent {
  int64_t time = 0;    // Unix seconds
  std::string node;    // as Slurm names it
  std::string kind;    // e.g. "xid", "health_check", "ecc"
  std::string detail;  // free text (may hold commas); empty when absent
};

struct NodeEventLog {
  std::vector<NodeEvent> events;  // in file order
  int64_t skipped_lines = 0;      // broken lines skipped when lenient
  std::string first_skip;         // why the first of those was skipped
};

// Parses the CSV. The timestamp is Unix seconds or ISO 8601 ("2026-11-22T09:30:00", UTC); node
// and kind must not be empty; everything after the third comma is the detail. Errors are
// InvalidArgument "<source>:<line>: field <name>: <what>"; with `lenient` broken lines are
// skipped and counted instead.
// ISO 8601 times without a trailing Z are read in `zone` (the cluster's, as sacct's).
Result<NodeEventLog> ParseNodeEvents(std::string_view text, std::string_view source, bool lenient,
                                     const TimeZone& zone = TimeZone());

// ReadFile + ParseNodeEvents.
Result<NodeEventLog> ReadNodeEvents(const std::string& path, bool lenient,
                                    const TimeZone& zone = TimeZone());

}  // namespace vigil::reliability
