#include "vigil/reliability/fleet_report.h"

#include <utility>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/reliability/node_events.h"
#include "vigil/reliability/sacct.h"

namespace vigil::reliability {
namespace {

Json LemonJson(const LemonNode& l) {
  Json events = Json::object();
  for (const auto& [kind, n] : l.events_by_kind) events[kind] = n;
  return Json{{"node", l.node},
              {"jobs", l.jobs},
              {"failed_jobs", l.failed_jobs},
              {"event_failures", l.event_failures},
              {"expected_event_failures", l.expected_event_failures},
              {"single_node_failures", l.single_failures},
              {"expected_single_node_failures", l.expected_single_failures},
              {"p_value", l.p_value},
              {"q_value", l.q_value},
              {"events", std::move(events)}};
}

Json StatsJson(const FleetStats& s) {
  Json states = Json::array();
  for (const auto& st : s.states) {
    states.push_back(Json{{"state", JobStateName(st.state)},
                          {"jobs", st.jobs},
                          {"gpu_hours", st.gpu_hours},
                          {"node_hours", st.node_hours}});
  }
  Json projections = Json::array();
  for (const auto& p : s.projections) {
    projections.push_back(Json{{"gpus", p.gpus},
                               {"nodes", p.nodes},
                               {"mttf_s", p.mttf_s},
                               {"lower_s", p.lower_s},
                               {"upper_s", p.upper_s}});
  }
  Json sizes = Json::array();
  for (const auto& c : s.size_classes) {
    sizes.push_back(Json{{"min_nodes", c.min_nodes},
                         {"max_nodes", c.max_nodes},
                         {"jobs", c.jobs},
                         {"infra_failures", c.infra_failures},
                         {"job_hours", c.job_hours},
                         {"observed_mttf_s", c.observed_mttf_s},
                         {"projected_mttf_s", c.projected_mttf_s},
                         {"failures_per_1000_node_days", c.rate.per_1000_node_days},
                         {"failures_per_1000_node_days_lower", c.rate.lower},
                         {"failures_per_1000_node_days_upper", c.rate.upper},
                         {"node_days", c.rate.node_days}});
  }
  Json lemons = Json::array();
  for (const auto& l : s.lemons) lemons.push_back(LemonJson(l));
  return Json{{"jobs_finished", s.jobs_finished},
              {"jobs_unfinished", s.jobs_unfinished},
              {"nodes", s.nodes},
              {"gpus_per_node", s.gpus_per_node},
              {"gpu_hours", s.gpu_hours},
              {"states", std::move(states)},
              {"infra_failures", Json{{"total", s.infra_failures},
                                      {"by_state", s.infra_by_state},
                                      {"by_event", s.infra_by_event}}},
              {"events_unmatched", s.events_unmatched},
              {"failure_rate", Json{{"per_1000_node_days", s.rate.per_1000_node_days},
                                    {"lower", s.rate.lower},
                                    {"upper", s.rate.upper},
                                    {"failures", s.rate.failures},
                                    {"node_days", s.rate.node_days}}},
              {"mttf_projection", std::move(projections)},
              {"by_job_size", std::move(sizes)},
              {"lemons", std::move(lemons)}};
}

}  // namespace

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

Json FleetReportJson(const FleetReport& report) {
  Json out = StatsJson(report.stats);
  if (const auto& score = report.score) {
    out["score"] = Json{{"true_positives", score->true_positives},
                        {"false_positives", score->false_positives},
                        {"false_negatives", score->false_negatives},
                        {"precision", score->precision},
                        {"recall", score->recall}};
  }
  return out;
}

}  // namespace vigil::reliability
