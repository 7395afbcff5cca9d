#include "cli/select.h"

#include <fmt/format.h>

#include "vigil/core/duration.h"
#include "vigil/core/figure.h"
#include "vigil/core/json.h"
#include "vigil/core/text_table.h"
#include "vigil/select/selector.h"
#include "vigil/server/client.h"

namespace vigil::cli {
namespace {

const Bounds kHorizonBounds{60, 365 * 86400.0, false, false, true};
const Bounds kMaxTimeBounds{0, 7 * 86400.0, false, false, true};

}  // namespace

CLI::App* SetupSelect(CLI::App& app, SelectCommandOptions& o) {
  CLI::App* c = app.add_subcommand(
      "select", "Plan validations from the fleet's history: which nodes, which benchmarks, why");
  CLI::Option* history = c->add_option("--history", o.history,
                                       "The fleet's history: a file or a directory of *.jsonl");
  CLI::Option* url = c->add_option(
      "--url", o.url,
      "Or plan from the history a fleet service (vigil serve) keeps, http://host:port");
  history->excludes(url);
  url->excludes(history);
  c->add_option("--token-file", o.token_file, "--url: file holding the bearer token")
      ->check(CLI::ExistingFile);
  AddTlsClientFlags(*c, "--url", o.tls);
  c->add_option("--horizon", o.horizon, "Interval the expected penalty is counted over")
      ->capture_default_str();
  c->add_option("--budget", o.budget, "Validation node-hours the plan may spend (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--max-time", o.max_time, "One node's validation at most this long (0: no limit)")
      ->capture_default_str();
  c->add_option("--max-share", o.max_share, "At most this share of the fleet validating at once")
      ->capture_default_str();
  c->add_option("--cost-weight", o.cost_weight,
                "Price of a validation node-hour in incident node-hours")
      ->capture_default_str();
  c->add_flag("--json", o.json, "Print JSON");
  return c;
}

CommandResult RunSelect(const SelectCommandOptions& o) {
  select::SelectOptions options;
  VIGIL_ASSIGN_OR_RETURN(options.horizon_s,
                         ParseDurationFlag("--horizon", o.horizon, kHorizonBounds));
  VIGIL_ASSIGN_OR_RETURN(options.max_benchmark_s,
                         ParseDurationFlag("--max-time", o.max_time, kMaxTimeBounds));
  options.budget_node_hours = o.budget;
  options.max_share = o.max_share;
  options.cost_weight = o.cost_weight;
  VIGIL_RETURN_IF_ERROR(select::Validate(options));
  if (o.history.empty() == o.url.empty()) {
    return Status::InvalidArgument("select: give --history FILE|DIR or --url URL");
  }
  VIGIL_ASSIGN_OR_RETURN(const select::History history,
                         o.url.empty() ? select::ReadHistoryPath(o.history)
                                       : server::FetchFleetHistory(o.url, o.token_file, o.tls));
  VIGIL_ASSIGN_OR_RETURN(const select::Selection s, select::SelectFromHistory(history, options));
  if (o.json) {
    fmt::print("{}\n", DumpJson(select::SelectionToJson(s, history), 2));
    return ExitCode::kHealthy;
  }
  fmt::print("{} nodes; risk model: {}; {} nodes whose validation pays, {} planned\n\n",
             history.nodes.size(), s.plan.model, s.plan.candidates, s.plan.validations.size());
  Table table({"NODE", "BENCHMARKS", "P_INCIDENT", "PENALTY_NH", "AVERTED_NH", "COST_NH", "WHY"});
  for (const select::PlannedValidation& v : s.plan.validations) {
    table.Add({history.nodes[static_cast<size_t>(v.node)].name, Benchmarks(s, v),
               FormatFigure(v.probability), FormatFigure(v.expected_penalty),
               FormatFigure(v.subset.averted), FormatFigure(v.subset.seconds / 3600), v.why});
  }
  fmt::print("{}", table.ToString());
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
