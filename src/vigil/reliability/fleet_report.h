// `vigil fleet stats`: a Slurm accounting log and node events read from files, the fleet's
// failure statistics, and their lemon nodes scored against the ones a simulation planted
// (docs/reliability.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/core/time_zone.h"
#include "vigil/reliability/fleet_stats.h"

namespace vigil::reliability {

struct FleetFiles {
  std::string sacct;     // `sacct -X --parsable2` output (ReadSacct)
  std::string events;    // node events CSV (ReadNodeEvents); "": none
  std::string truth;     // planted lemons CSV (ParseLemonTruth); "": no score
  bool lenient = false;  // skip and count broken lines of the log and the events
  TimeZone time_zone{};  // the zone of the log's and the events' local times (SacctOptions)
};

// Lines a lenient read skipped in one file.
struct SkippedLines {
  int64_t count = 0;
  std::string first;  // why the first was skipped
};

struct FleetReport {
  FleetStats stats;
  SkippedLines sacct_skipped;
  SkippedLines events_skipped;
  std::optional<LemonScore> score;  // with a truth file
  size_t planted = 0;               // lemons in the truth file
};

// Checks the options (Validate), reads the truth, the log and the events, and computes the
// statistics (ComputeFleetStats). Errors: Validate's; NotFound or IoError for a file that cannot
// be read; InvalidArgument "<file>:<line>: ..." for a malformed line (unless lenient).
Result<FleetReport> AnalyzeFleetFiles(const FleetFiles& files, const FleetStatsOptions& options);

// `vigil fleet stats --json`: the statistics (jobs by state, infrastructure failures, the failure
// rate and its interval, MTTF projected by size, rates by job size, the lemons) and, with a truth
// file, the lemons' score (docs/reliability.md lists the fields).
Json FleetReportJson(const FleetReport& report);

}  // namespace vigil::reliability
