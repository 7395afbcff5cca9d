// vigil: reliability for large AI training clusters. main only wires the subcommands together;
// each lives in a file of its own with its options, its Setup and its Run.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/bench_list.h"
#include "cli/common.h"
#include "cli/run.h"
#include "cli/version.h"
#include "vigil/core/log.h"

int main(int argc, char** argv) {
  using namespace vigil::cli;
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
