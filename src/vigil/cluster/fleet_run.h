// `vigil fleet run`'s launch and conduct: start the coordinator, start one `vigil fleet rank` per
// node through the cluster's own launcher (srun inside or for a Slurm allocation, mpirun with a
// host file), run a suite on every node and the network tests between nodes round by round, and
// return what each node answered. A node that never registers, or stops answering, is named; the
// others' results are kept.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/cluster/command.h"
#include "vigil/cluster/host_list.h"
#include "vigil/cluster/rdma.h"
#include "vigil/core/status.h"

namespace vigil::cluster {

enum class Launcher { kMpirun, kSrun };
// "mpirun" or "srun"; InvalidArgument naming the choices.
Result<Launcher> ParseLauncher(std::string_view text);

// Pairs of host indices that test at the same time; each pair is measured in both directions.
using PairRound = std::vector<std::pair<int, int>>;
// The rounds for the hosts that answered (the pattern's choice).
using PairSchedule =
    std::function<Result<std::vector<PairRound>>(const std::vector<FleetHost>& hosts)>;

// Groups of host indices that run a collective at the same time (patterns.h's all-nodes and
// k-batch), round by round.
using GroupRound = std::vector<std::vector<int>>;
using GroupSchedule =
    std::function<Result<std::vector<GroupRound>>(const std::vector<FleetHost>& hosts)>;

// NCCL collectives across the GPUs of each group's nodes (docs/multinode.md). Each group is
// prepared first (every member says how many GPUs it brings; the first also a free port for NCCL's
// bootstrap), then every member runs the same collectives with NCCL_COMM_ID set to that port.
struct CollectiveOptions {
  GroupSchedule schedule;          // null: no collectives
  std::vector<std::string> ops;    // "all-reduce", "all-to-all", ... as the ranks read them
  double bytes = double{1 << 30};  // per GPU, as nccl-tests sizes them
  int warmup = 5;                  // collectives before timing
  int iterations = 20;             // collectives per timed sample
  int samples = 5;
  double timeout_s = 300;  // a member's prepare, and its whole run of the ops
  // How much longer the coordinator waits for a member's answer: the member stops its run at
  // timeout_s and answers why, which is better to have than "did not answer".
  double grace_s = 15;
};

struct FleetRunOptions {
  Launcher launcher = Launcher::kMpirun;
  // mpirun: the hosts, one rank each (required). srun: empty (the allocation's nodes, `nodes` of
  // them) or the nodes to run on (--nodelist).
  std::vector<FleetHost> hosts;
  int nodes = 0;                           // srun without hosts: how many (0: the allocation's)
  std::string launcher_program;            // "" : "mpirun" or "srun" from PATH
  std::vector<std::string> launcher_args;  // passed to the launcher before the program
  std::vector<std::string> launcher_env;   // NAME=VALUE for the launcher's environment
  std::string vigil_path;                  // the vigil each node runs (the same path on every node)
  std::string bind_address = "0.0.0.0";    // the coordinator's
  std::string advertise_address;           // what ranks reach the coordinator at; "" : the local
                                           // address toward the first host
  std::string work_dir;                    // where the mpirun host file is written
  // The suite task each node runs ("" : none): passed to the rank as it is (agent fills it).
  std::string suite;
  std::vector<std::string> suite_args;
  PairSchedule schedule;  // null: no network tests
  bool bandwidth = true;  // measure each pair's bandwidth
  bool latency = true;    // and its latency
  // And its RDMA bandwidth and latency per NIC with perftest's ib_write_bw and ib_write_lat
  // (rdma.h), every NIC at once, NIC i on TCP port rdma_port_base + i; a client may take
  // pair_timeout_s to reach its server.
  bool rdma_bandwidth = false;
  bool rdma_latency = false;
  std::string rdma_bw_program = "ib_write_bw";
  std::string rdma_lat_program = "ib_write_lat";
  double rdma_seconds = 2;      // each bandwidth measurement
  int rdma_iterations = 10000;  // each latency measurement's round trips
  int rdma_port_base = 18515;
  double transfer_seconds = 1;
  int latency_round_trips = 1000;
  double start_timeout_s = 60;   // for every rank to register
  double suite_timeout_s = 900;  // for a node's suite
  double pair_timeout_s = 60;    // for one transfer
  CollectiveOptions collectives;
};

struct FleetRunEvents {
  std::function<void(std::string_view line)> progress;  // a line of progress for a person
};

struct FleetNodeOutcome {
  FleetHost host;
  bool answered = false;  // registered with the coordinator
  std::string error;      // why it has no (complete) results; "" when none
  std::string document;   // its suite's results document (JSON text), "" when none
};

struct FleetPairOutcome {
  std::string from;
  std::string to;
  double gbps = -1;  // from -> to; -1 when not measured
  double us = -1;    // one-way latency (half the round trip); -1 when not measured
  std::string error;
  std::vector<RdmaFigure> rdma;  // per NIC, in order, when asked: its figures or why not
};

// What a node's document holds of its groups' collectives (agent/fleet_run.h).
inline constexpr std::string_view kNetCollectiveBenchmark = "net-collective";

// One collective of one group.
struct FleetCollectiveOutcome {
  int round = 0;                     // from 1
  std::vector<std::string> members;  // node names, in rank order (the first holds rank 0)
  int world = 0;                     // ranks (GPUs) of all members; 0 when not prepared
  std::string op;
  double bytes = 0;
  double busbw_gbs = -1;  // nccl-tests' bus bandwidth, the slowest member's; -1 when not measured
  std::string error;      // "<node>: why", the first member's that failed
};

struct FleetRunOutcome {
  std::vector<FleetNodeOutcome> nodes;  // every host named or registered, in host-list order
  std::vector<FleetPairOutcome> pairs;
  int rounds = 0;
  std::vector<FleetCollectiveOutcome> collectives;
  int collective_rounds = 0;
  int launcher_exit = -1;             // -1: still running when the run ended (then stopped)
  std::string launcher_error;         // why the launcher failed, with the end of its output
  std::vector<std::string> problems;  // the coordinator's (a node name seen twice)
};

// The launcher's command line (argv) for `options` reaching the coordinator at `url`; `hostfile`
// is the mpirun host file's path.
std::vector<std::string> LauncherArgv(const FleetRunOptions& options, const std::string& url,
                                      const std::string& hostfile);

// Runs it. Errors (before anything was launched): InvalidArgument for options that cannot work
// (mpirun without hosts), IoError when the coordinator cannot listen. Everything that goes wrong
// after the launch is in the outcome.
Result<FleetRunOutcome> RunFleet(const FleetRunOptions& options, CommandRunner& runner,
                                 const FleetRunEvents& events,
                                 const std::atomic<bool>& interrupted);

}  // namespace vigil::cluster
