#include "cli/fleet_run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/version.h"
#include "vigil/cluster/rdma.h"
#include "vigil/core/json.h"

namespace vigil::cli {
namespace {

// Any duration from a millisecond to a week.
constexpr Bounds kFleetDurationBounds{.lo = 0.001, .hi = 7 * 86400.0, .seconds = true};

}  // namespace

CLI::App* SetupFleetRun(CLI::App& fleet, FleetRunCliOptions& o) {
  CLI::App* cmd = fleet.add_subcommand(
      "run",
      "Run a suite and the network tests between nodes on many nodes through srun or mpirun; "
      "name the node, link or switch that is slow (exit 1)");
  cmd->add_option("--launcher", o.run.launcher, "mpirun (with --hosts) or srun")
      ->check(CLI::IsMember({"mpirun", "srun"}))
      ->capture_default_str();
  cmd->add_option("--hosts", o.run.hosts,
                  "Host list: one host per line, optional rack=<switch> (mpirun: required; "
                  "srun: the nodes to use)");
  cmd->add_option("--nodes", o.run.nodes,
                  "srun without --hosts: how many nodes (default: the allocation's)")
      ->check(InBounds(kNodesBounds));
  cmd->add_option("--launcher-program", o.run.launcher_program,
                  "The launcher's path (default: mpirun or srun from PATH)");
  cmd->add_option("--launcher-arg", o.run.launcher_args,
                  "One more argument for the launcher, repeatable (--launcher-arg=--mca ...)");
  cmd->add_option("--vigil", o.run.vigil_path,
                  "The vigil the nodes run, the same path on every node (default: this one)");
  cmd->add_option("--bind", o.run.bind, "Address the coordinator listens on")
      ->capture_default_str();
  cmd->add_option("--advertise", o.run.advertise,
                  "Address the nodes reach the coordinator at (default: this machine's address "
                  "toward the first host)");
  cmd->add_option("--suite", o.run.suite,
                  "Run this suite on every node first (health, quick, full; default: none)")
      ->check(CLI::IsMember({"health", "quick", "full"}));
  cmd->add_option("--suite-arg", o.run.suite_args,
                  "One more `vigil run` argument for each node, repeatable");
  cmd->add_option("--pattern", o.run.pattern,
                  "Which nodes test with which: pair-wise (every pair, N-1 rounds), ring, "
                  "topology (by rack), or none")
      ->capture_default_str();
  cmd->add_option("--collective-pattern", o.run.collective_pattern,
                  "NCCL collectives across the GPUs of groups of nodes: all-nodes (one group), "
                  "k-batch (groups of --group-size), or none")
      ->check(CLI::IsMember({"all-nodes", "k-batch", "none"}))
      ->capture_default_str();
  cmd->add_option("--group-size", o.run.group_size, "k-batch: nodes per group")
      ->check(InBounds({.lo = 2, .hi = 1e6}))
      ->capture_default_str();
  cmd->add_option("--collective", o.run.collectives,
                  "Which collectives each group runs: all-reduce, all-gather, reduce-scatter, "
                  "all-to-all (repeatable, or comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--collective-size", o.run.collective_size,
                  "Bytes per GPU of each collective, as nccl-tests sizes them (e.g. 256M, 1G)")
      ->capture_default_str();
  cmd->add_option("--collective-timeout", o.collective_timeout,
                  "How long a node's part of one group's collectives may take")
      ->capture_default_str();
  cmd->add_option("--measure", o.run.measure,
                  "What each pair measures: bandwidth, latency or both (latency is the path's "
                  "own delay, the 5th percentile of the round trips)")
      ->check(CLI::IsMember({"bandwidth", "latency", "both"}))
      ->capture_default_str();
  cmd->add_flag("--rdma", o.run.rdma,
                "Also measure each pair over RDMA on every active NIC at once, NIC i to NIC i, as "
                "--measure says: bandwidth with perftest's ib_write_bw, latency with ib_write_lat "
                "(Debian's perftest on every node)");
  cmd->add_option("--rdma-bw-program,--rdma-program", o.run.rdma_bw_program,
                  "--rdma: the ib_write_bw to run")
      ->capture_default_str();
  cmd->add_option("--rdma-lat-program", o.run.rdma_lat_program, "--rdma: the ib_write_lat to run")
      ->capture_default_str();
  cmd->add_option("--rdma-duration", o.rdma_duration,
                  "--rdma: how long each bandwidth measurement lasts")
      ->capture_default_str();
  cmd->add_option("--rdma-iterations", o.run.rdma_iterations,
                  "--rdma: round trips of each latency measurement (its figure is their median)")
      ->check(InBounds({.lo = 1, .hi = cluster::kRdmaMaxIterations}))
      ->capture_default_str();
  cmd->add_option("--transfer", o.transfer, "How long each bandwidth transfer sends")
      ->capture_default_str();
  cmd->add_option("--round-trips", o.run.round_trips, "Latency: round trips per pair")
      ->check(InBounds({.lo = 1, .hi = 1e7}))
      ->capture_default_str();
  cmd->add_option("--start-timeout", o.start_timeout,
                  "How long every node has to start and register")
      ->capture_default_str();
  cmd->add_option("--suite-timeout", o.suite_timeout, "How long a node's suite may take")
      ->capture_default_str();
  cmd->add_option("--pair-timeout", o.pair_timeout, "How long one pair's test may take")
      ->capture_default_str();
  cmd->add_option("--out", o.run.out,
                  "Directory for each node's results document, net-pairs.jsonl and "
                  "fleet-run.json (made when missing)");
  cmd->add_option("--report", o.run.report,
                  "Upload each node's document to this fleet service (`vigil serve`)");
  cmd->add_option("--token-file", o.run.token_file, "--report: file holding the bearer token");
  AddTlsClientFlags(*cmd, "--report", o.run.tls);
  cmd->add_flag("--json", o.json, "Print the run's report as JSON");
  return cmd;
}

CommandResult RunFleetRun(const FleetRunCliOptions& o) {
  agent::FleetCommandOptions run = o.run;
  VIGIL_ASSIGN_OR_RETURN(run.transfer_s,
                         ParseDurationFlag("--transfer", o.transfer, kFleetDurationBounds));
  VIGIL_ASSIGN_OR_RETURN(run.rdma_s, ParseDurationFlag("--rdma-duration", o.rdma_duration,
                                                       {.lo = 1, .hi = 3600, .seconds = true}));
  VIGIL_ASSIGN_OR_RETURN(run.start_timeout_s, ParseDurationFlag("--start-timeout", o.start_timeout,
                                                                kFleetDurationBounds));
  VIGIL_ASSIGN_OR_RETURN(run.suite_timeout_s, ParseDurationFlag("--suite-timeout", o.suite_timeout,
                                                                kFleetDurationBounds));
  VIGIL_ASSIGN_OR_RETURN(run.pair_timeout_s,
                         ParseDurationFlag("--pair-timeout", o.pair_timeout, kFleetDurationBounds));
  VIGIL_ASSIGN_OR_RETURN(
      run.collective_timeout_s,
      ParseDurationFlag("--collective-timeout", o.collective_timeout, kFleetDurationBounds));
  run.vigil_version = std::string(VigilVersion());
  cluster::FleetRunEvents events;
  events.progress = [](std::string_view line) { spdlog::info("{}", line); };
  VIGIL_ASSIGN_OR_RETURN(const agent::FleetCommandResult result,
                         agent::RunFleetCommand(run, events, InstallInterruptFlag()));
  if (o.json) {
    fmt::print("{}\n", DumpJson(agent::FleetResultJson(result), 2));
  } else {
    fmt::print("{}", agent::FleetResultText(result));
  }
  return static_cast<ExitCode>(result.exit_code);
}

CLI::App* SetupFleetRank(CLI::App& fleet, agent::FleetRankCommandOptions& o) {
  CLI::App* cmd = fleet.add_subcommand(
      "rank", "One node's part of `vigil fleet run` (the launcher starts it; not for people)");
  cmd->add_option("--coordinator", o.coordinator, "The run's coordinator, http://host:port")
      ->required();
  cmd->add_option("--node", o.node,
                  "This node's name (default: its host in the run's list, $SLURMD_NODENAME, "
                  "or the host name)");
  cmd->add_option("--bind", o.bind, "Address the network test listens on")->capture_default_str();
  return cmd;
}

CommandResult RunFleetRank(const agent::FleetRankCommandOptions& o) {
  VIGIL_RETURN_IF_ERROR(agent::RunFleetRankCommand(o, InstallInterruptFlag()));
  return ExitCode::kHealthy;
}

CLI::App* SetupFleetNccl(CLI::App& fleet, agent::FleetNcclOptions& o) {
  CLI::App* cmd = fleet.add_subcommand(
      "nccl",
      "One node's part of an NCCL collective across nodes under `vigil fleet rank`, with "
      "NCCL_COMM_ID set (not for people); prints JSON");
  cmd->add_flag("--count", o.count,
                "Only print how many GPUs this node brings and the NCCL version it loads");
  cmd->add_option("--ranks", o.ranks, "The GPUs this node said it brings (--count)")
      ->check(InBounds({.lo = 1, .hi = 1e6}));
  cmd->add_option("--first-rank", o.first_rank, "The global rank of this node's first GPU")
      ->check(InBounds({.lo = 0, .hi = 1e7}));
  cmd->add_option("--world", o.world, "Ranks (GPUs) of every node of the group")
      ->check(InBounds({.lo = 1, .hi = 1e7}));
  cmd->add_option("--op", o.ops, "A collective to time, repeatable")->capture_default_str();
  cmd->add_option("--size", o.size, "Bytes per GPU")->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "Collectives before timing")
      ->check(InBounds({.lo = 0, .hi = 1e6}))
      ->capture_default_str();
  cmd->add_option("--iterations", o.iterations, "Collectives per timed sample")
      ->check(InBounds({.lo = 1, .hi = 1e6}))
      ->capture_default_str();
  cmd->add_option("--samples", o.samples, "Timed samples")
      ->check(InBounds({.lo = 1, .hi = 1e4}))
      ->capture_default_str();
  return cmd;
}

CommandResult RunFleetNccl(const agent::FleetNcclOptions& o) {
  VIGIL_ASSIGN_OR_RETURN(const Json answer, agent::RunFleetNccl(o));
  fmt::print("{}\n", DumpJson(answer));
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
