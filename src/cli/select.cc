#include "cli/select.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// The plan as a table; with `submitted`, a JOB column (its id, "dry run", or "failed").
void PrintPlan(const select::History& history, const select::Selection& s,
               const std::vector<agent::Submission>* submitted) {
  fmt::print("{} nodes; risk model: {}; {} nodes whose validation pays, {} planned\n\n",
             history.nodes.size(), s.plan.model, s.plan.candidates, s.plan.validations.size());
  std::vector<std::string> columns = {"NODE",       "BENCHMARKS", "P_INCIDENT", "PENALTY_NH",
                                      "AVERTED_NH", "COST_NH",    "WHY"};
  if (submitted != nullptr) columns.insert(columns.begin() + 1, "JOB");
  Table table(columns);
  for (size_t i = 0; i < s.plan.validations.size(); ++i) {
    const select::PlannedValidation& v = s.plan.validations[i];
    std::vector<std::string> row = {
        history.nodes[static_cast<size_t>(v.node)].name,
        fmt::format("{}", fmt::join(select::PlannedBenchmarks(s, v), ",")),
        FormatFigure(v.probability),
        FormatFigure(v.expected_penalty),
        FormatFigure(v.subset.averted),
        FormatFigure(v.subset.seconds / 3600),
        v.why};
    if (submitted != nullptr) {
      const agent::Submission& job = (*submitted)[i];
      row.insert(row.begin() + 1, !job.status.ok()     ? "failed"
                                  : job.job_id.empty() ? "dry run"
                                                       : job.job_id);
    }
    table.Add(row);
  }
  fmt::print("{}", table.ToString());
}

CommandResult SubmitSelection(const select::History& history, const select::SelectOptions& options,
                              const SelectCommandOptions& o) {
  agent::SubmitOptions submit = o.submit_options;
  submit.report_url = o.url;
  submit.token_file = o.token_file;
  submit.tls = o.tls;
  const std::unique_ptr<cluster::CommandRunner> runner = cluster::MakeProcessRunner();
  VIGIL_ASSIGN_OR_RETURN(const agent::SubmitOutcome out,
                         agent::SelectAndSubmit(history, options, submit, *runner));
  if (o.json) {
    fmt::print("{}\n", DumpJson(agent::SubmitOutcomeToJson(out, history), 2));
  } else {
    const agent::SlurmView& v = out.view;
    fmt::print("Slurm: {} idle, {} busy, {} unavailable, {} validating, {} not in Slurm\n", v.idle,
               v.busy, v.unavailable, v.validating, v.unknown);
    PrintPlan(history, out.selection, &out.submissions);
    if (submit.dry_run) {
      for (const agent::Submission& job : out.submissions) {
        fmt::print("{}\n", cluster::ShellCommandText(job.sbatch));
      }
    }
  }
  VIGIL_RETURN_IF_ERROR(out.Failed());
  return ExitCode::kHealthy;
}

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
  CLI::Option* submit = c->add_flag(
      "--submit", o.submit,
      "Plan with Slurm's view of the nodes (idle first; down, drained or already validating: "
      "not planned) and submit one whole-node job per validation (docs/select.md)");
  c->add_flag("--dry-run", o.submit_options.dry_run,
              "--submit: print the sbatch commands, submit nothing")
      ->needs(submit);
  c->add_option("--submit-command", o.submit_options.command,
                "--submit: the job's shell command line; {node} and {benchmarks} are replaced by "
                "quoted words (default: this vigil's `run --bench {benchmarks}`, reporting to "
                "--url)")
      ->needs(submit);
  c->add_option("--partition", o.submit_options.partition, "--submit: sbatch's --partition")
      ->needs(submit);
  c->add_option("--account", o.submit_options.account, "--submit: sbatch's --account")
      ->needs(submit);
  c->add_option("--job-output", o.submit_options.output, "--submit: sbatch's --output pattern")
      ->needs(submit);
  c->add_option("--time-factor", o.submit_options.time_factor,
                "--submit: a job's time limit in multiples of its benchmarks' expected time "
                "(at least 10 min)")
      ->capture_default_str()
      ->needs(submit);
  c->add_option("--slurm-conf", o.submit_options.slurm.conf,
                "--submit: the slurm.conf Slurm's commands read (default: theirs, or $SLURM_CONF)")
      ->needs(submit);
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
  if (o.submit) return SubmitSelection(history, options, o);
  VIGIL_ASSIGN_OR_RETURN(const select::Selection s, select::SelectFromHistory(history, options));
  if (o.json) {
    fmt::print("{}\n", DumpJson(select::SelectionToJson(s, history), 2));
    return ExitCode::kHealthy;
  }
  PrintPlan(history, s, nullptr);
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
