#include "vigil/reliability/fleet_report.h"

#include <vector>

#include "vigil/core/file.h"
#include "vigil/reliability/node_events.h"
#include "vigil/reliability/sacct.h"

namespace vigil::reliability {

Result<FleetReport> AnalyzeFleetFiles(const FleetFiles& files, const FleetStatsOptions& options) {
  VIGIL_RETURN_IF_ERROR(Validate(options));
  std::vector<std::string> truth;
  if (!files.truth.empty()) {
    VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(files.truth));
    VIGIL_ASSIGN_OR_RETURN(truth, ParseLemonTruth(text, files.truth));
  }
  VIGIL_ASSIGN_OR_RETURN(
      const SacctLog log,
      ReadSacct(files.sacct, {.lenient = files.lenient, .time_zone = files.time_zone}));
  NodeEventLog events;
  if (!files.events.empty()) {
    VIGIL_ASSIGN_OR_RETURN(events, ReadNodeEvents(files.events, files.lenient, files.time_zone));
  }
  FleetReport report;
  VIGIL_ASSIGN_OR_RETURN(report.stats, ComputeFleetStats(log, events.events, options));
  report.sacct_skipped = {log.skipped_lines, log.first_skip};
  report.events_skipped = {events.skipped_lines, events.first_skip};
  if (!files.truth.empty()) {
    report.score = ScoreLemons(report.stats.lemons, truth);
    report.planted = truth.size();
  }
  return report;
}

}  // namespace vigil::reliability
