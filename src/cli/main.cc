// vigil: reliability for large AI training clusters. main only wires the subcommands together:
// the table below says where each hangs, the Setup that adds its flags and the Run that runs it;
// each lives in a file of its own.
#include <fmt/format.h>
#include <signal.h>

#include <CLI/CLI.hpp>

#include "cli/bench_list.h"
#include "cli/command.h"
#include "cli/common.h"
#include "cli/detect.h"
#include "cli/diagnose.h"
#include "cli/fleet_run.h"
#include "cli/fleet_stats.h"
#include "cli/model_checkpoint.h"
#include "cli/model_ettr.h"
#include "cli/model_mttf.h"
#include "cli/plan_impact.h"
#include "cli/plan_infer.h"
#include "cli/plan_reconfigure.h"
#include "cli/plan_search.h"
#include "cli/plan_train.h"
#include "cli/run.h"
#include "cli/select.h"
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

  // In the order of --help.
  CommandTable commands(app);
  commands.Add(app, SetupRun, RunRun);
  CLI::App& bench = commands.Group("bench", "Inspect the benchmark suite");
  commands.Add(bench, SetupBenchList, RunBenchList);
  commands.Add(app, SetupVersion, RunVersion);
  CLI::App& model = commands.Group(
      "model", "Analytic reliability models: MTTF at scale, ETTR, checkpoint intervals");
  commands.Add(model, SetupModelMttf, RunModelMttf);
  commands.Add(model, SetupModelEttr, RunModelEttr);
  commands.Add(model, SetupModelCheckpoint, RunModelCheckpoint);
  CLI::App& simulate = commands.Group("simulate", "Simulators: job timelines, cluster logs");
  commands.Add(simulate, SetupSimulateJob, RunSimulateJob);
  commands.Add(simulate, SetupSimulateCluster, RunSimulateCluster);
  commands.Add(simulate, SetupSimulateFleet, RunSimulateFleet);
  commands.Add(simulate, SetupSimulateTelemetry, RunSimulateTelemetry);
  CLI::App& fleet =
      commands.Group("fleet", "Fleet-wide analytics, and runs on many nodes through the launcher");
  commands.Add(fleet, SetupFleetStats, RunFleetStats);
  commands.Add(app, SetupSelect, RunSelect);
  commands.Add(fleet, SetupFleetRun, RunFleetRun);
  commands.Add(fleet, SetupFleetRank, RunFleetRank);
  commands.Add(fleet, SetupFleetNccl, RunFleetNccl);
  commands.Add(app, SetupDiagnose, RunDiagnose);
  commands.Add(app, SetupBaseline, RunBaseline);
  commands.Add(app, SetupLearn, RunLearn);
  commands.Add(app, SetupValidate, RunValidate);
  commands.Add(app, SetupDetect, RunDetect);
  commands.Add(app, SetupServe, RunServe);
  commands.Add(app, SetupReport, RunReport);
  CLI::App& plan = commands.Group(
      "plan",
      "Performance models from measured hardware: training steps and parallel layouts, the cost "
      "of a degraded node, inference "
      "time, reconfiguration after failures");
  commands.Add(plan, SetupPlanTrain, RunPlanTrain);
  commands.Add(plan, SetupPlanSearch, RunPlanSearch);
  commands.Add(plan, SetupPlanInfer, RunPlanInfer);
  commands.Add(plan, SetupPlanReconfigure, RunPlanReconfigure);
  commands.Add(plan, SetupPlanImpact, RunPlanImpact);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the error
    return code == 0 ? 0 : static_cast<int>(ExitCode::kBadInput);
  }
  vigil::InitLogging(quiet ? -1 : verbose);

  try {
    const CommandResult result = commands.RunChosen();
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
