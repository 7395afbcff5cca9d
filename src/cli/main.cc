// vigil: reliability for large AI training clusters. main only wires the subcommands together;
// each lives in a file of its own with its options, its Setup and its Run.
#include <fmt/format.h>
#include <signal.h>

#include <CLI/CLI.hpp>

#include "cli/bench_list.h"
#include "cli/common.h"
#include "cli/detect.h"
#include "cli/diagnose.h"
#include "cli/fleet_stats.h"
#include "cli/model.h"
#include "cli/run.h"
#include "cli/serve.h"
#include "cli/simulate.h"
#include "cli/validate.h"
#include "cli/version.h"
#include "vigil/core/log.h"

int main(int argc, char** argv) {
  using namespace vigil::cli;
  // A peer that closes its end makes writes fail with EPIPE instead of killing vigil: TLS
  // clients write through OpenSSL, which does not ask the kernel to spare the signal.
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{
      "Vigil: validate GPU nodes, detect faulty machines in running jobs, and model the "
      "cost of failures.\nExit codes: 0 healthy, 1 defect found, 2 bad usage or input, "
      "3 could not run."};
  app.name("vigil");
  app.require_subcommand(1);
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More detail on stderr (-vv for trace)");
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors on stderr");

  RunOptions run;
  BenchListOptions bench_list;
  VersionOptions version;
  CLI::App* run_cmd = SetupRun(app, run);
  CLI::App* bench_cmd = app.add_subcommand("bench", "Inspect the benchmark suite");
  bench_cmd->require_subcommand(1);
  CLI::App* bench_list_cmd = SetupBenchList(*bench_cmd, bench_list);
  CLI::App* version_cmd = SetupVersion(app, version);
  ModelMttfOptions model_mttf;
  ModelEttrOptions model_ettr;
  ModelCheckpointOptions model_checkpoint;
  const ModelCommands model_cmds = SetupModel(app, model_mttf, model_ettr, model_checkpoint);
  SimulateJobOptions simulate_job;
  SimulateClusterOptions simulate_cluster;
  const SimulateCommands simulate_cmds = SetupSimulate(app, simulate_job, simulate_cluster);
  CLI::App* fleet_cmd = app.add_subcommand("fleet", "Fleet-wide analytics");
  fleet_cmd->require_subcommand(1);
  FleetStatsCliOptions fleet_stats;
  CLI::App* fleet_stats_cmd = SetupFleetStats(*fleet_cmd, fleet_stats);
  DiagnoseCliOptions diagnose;
  CLI::App* diagnose_cmd = SetupDiagnose(app, diagnose);
  BaselineCliOptions baseline;
  CLI::App* baseline_cmd = SetupBaseline(app, baseline);
  LearnCliOptions learn;
  CLI::App* learn_cmd = SetupLearn(app, learn);
  ValidateCliOptions validate;
  CLI::App* validate_cmd = SetupValidate(app, validate);
  SimulateFleetOptions simulate_fleet;
  CLI::App* simulate_fleet_cmd = SetupSimulateFleet(*simulate_cmds.group, simulate_fleet);
  DetectOptions detect;
  CLI::App* detect_cmd = SetupDetect(app, detect);
  SimulateTelemetryOptions simulate_telemetry;
  CLI::App* simulate_telemetry_cmd =
      SetupSimulateTelemetry(*simulate_cmds.group, simulate_telemetry);

  ServeOptions serve;
  CLI::App* serve_cmd = SetupServe(app, serve);
  ReportOptions report;
  CLI::App* report_cmd = SetupReport(app, report);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the error
    return code == 0 ? 0 : static_cast<int>(ExitCode::kBadInput);
  }
  vigil::InitLogging(quiet ? -1 : verbose);

  try {
    CommandResult result = ExitCode::kCannotRun;
    if (run_cmd->parsed()) result = RunRun(run);
    if (bench_list_cmd->parsed()) result = RunBenchList(bench_list);
    if (version_cmd->parsed()) result = RunVersion(version);
    if (model_cmds.mttf->parsed()) result = RunModelMttf(model_mttf);
    if (model_cmds.ettr->parsed()) result = RunModelEttr(model_ettr);
    if (model_cmds.checkpoint->parsed()) result = RunModelCheckpoint(model_checkpoint);
    if (simulate_cmds.job->parsed()) result = RunSimulateJob(simulate_job);
    if (simulate_cmds.cluster->parsed()) result = RunSimulateCluster(simulate_cluster);
    if (fleet_stats_cmd->parsed()) result = RunFleetStats(fleet_stats);
    if (diagnose_cmd->parsed()) result = RunDiagnose(diagnose);
    if (baseline_cmd->parsed()) result = RunBaseline(baseline);
    if (learn_cmd->parsed()) result = RunLearn(learn);
    if (validate_cmd->parsed()) result = RunValidate(validate);
    if (simulate_fleet_cmd->parsed()) result = RunSimulateFleet(simulate_fleet);
    if (detect_cmd->parsed()) result = RunDetect(detect);
    if (simulate_telemetry_cmd->parsed()) result = RunSimulateTelemetry(simulate_telemetry);
    if (serve_cmd->parsed()) result = RunServe(serve);
    if (report_cmd->parsed()) result = RunReport(report);
    if (!result.ok()) {
      fmt::print(stderr, "vigil: {}\n", result.status().message());
      return static_cast<int>(ExitCodeFor(result.status()));
    }
    return static_cast<int>(*result);
  } catch (const std::exception& e) {
    fmt::print(stderr, "vigil: internal error: {}\n", e.what());
    return static_cast<int>(ExitCode::kCannotRun);
  }
}
