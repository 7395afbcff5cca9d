// `vigil fleet run` between its flags and its printing (docs/multinode.md): the host list read and
// every host resolved before anything starts, the run through the launcher (cluster/fleet_run.h),
// each node's results document with its network pairs, the culprits named from the pair matrix
// (cluster/localise.h), the files written and the fleet service told. And `vigil fleet rank`, the
// part each node runs.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "vigil/cluster/command.h"
#include "vigil/cluster/fleet_run.h"
#include "vigil/cluster/localise.h"
#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/telemetry/http_client.h"

namespace vigil::agent {

struct FleetCommandOptions {
  std::string launcher = "mpirun";  // mpirun or srun
  std::string hosts;                // the host list file (mpirun: required)
  int nodes = 0;                    // srun without --hosts: how many nodes (0: the allocation's)
  std::string launcher_program;     // "" : the launcher's name from PATH
  std::vector<std::string> launcher_args;
  std::string vigil_path;  // the vigil the nodes run; "" : this program's own path
  std::string bind = "0.0.0.0";
  std::string advertise;  // the coordinator's address as the nodes reach it; "" : found
  std::string suite;      // "" : no suite, only the network tests
  std::vector<std::string> suite_args;  // more `vigil run` flags for each node
  std::string pattern = "pair-wise";    // a pair pattern, or "none" for no network test
  std::string measure = "both";         // bandwidth, latency or both
  // Also RDMA per NIC, as `measure` says: perftest's ib_write_bw and ib_write_lat.
  bool rdma = false;
  std::string rdma_bw_program = "ib_write_bw";
  std::string rdma_lat_program = "ib_write_lat";
  double rdma_s = 2;            // each RDMA bandwidth measurement
  int rdma_iterations = 10000;  // each RDMA latency measurement's round trips
  double transfer_s = 1;
  int round_trips = 1000;
  double start_timeout_s = 60;
  double suite_timeout_s = 900;
  double pair_timeout_s = 60;
  // NCCL collectives across nodes: all-nodes, k-batch or none.
  std::string collective_pattern = "none";
  int group_size = 8;  // k-batch's nodes per group
  std::vector<std::string> collectives = {"all-reduce"};
  std::string collective_size = "1G";  // per GPU, as nccl-tests sizes it
  double collective_timeout_s = 300;
  std::string out;     // a directory for the documents and the run's report ("" : none)
  std::string report;  // a fleet service to upload each node's document to
  std::string token_file;
  telemetry::TlsClientOptions tls;
  std::string vigil_version;
};

struct FleetCommandResult {
  cluster::FleetRunOutcome run;
  std::vector<cluster::NamedCulprit> culprits;  // from bandwidth, then from latency
  std::vector<std::string> uploads_failed;      // "<node>: why"
  int exit_code = 0;  // 0 healthy, 1 a culprit or a node that failed, 3 nothing ran
};

// Runs it. Errors before anything is launched: InvalidArgument (exit 2) naming the flag, or the
// host list's file, line and field; IoError when --out cannot be written.
Result<FleetCommandResult> RunFleetCommand(const FleetCommandOptions& options,
                                           const cluster::FleetRunEvents& events,
                                           const std::atomic<bool>& interrupted);

// The culprits of a run's measured pairs: the TCP bandwidth's, then latency's (racks when every
// node has one), then each RDMA NIC's on its own, its bandwidth's then its latency's ("rdma NIC
// 1", "rdma latency NIC 1": NIC i of every sender with NIC i of its receiver, a rail of the
// fabric). Errors: cluster::Localise's.
Result<std::vector<cluster::NamedCulprit>> LocateCulprits(const cluster::FleetRunOutcome& run);

// The run as a person reads it: one line per node, then the culprits.
std::string FleetResultText(const FleetCommandResult& result);
// The run as `--json` prints it and --out keeps it (fleet-run.json).
Json FleetResultJson(const FleetCommandResult& result);

struct FleetRankCommandOptions {
  std::string coordinator;  // http://host:port
  std::string node;         // "" : from the launcher's environment (cluster::RankNodeName)
  std::string bind = "0.0.0.0";
  std::string vigil_path;  // this program, for the suite's `vigil run`; "" : /proc/self/exe
  std::string work_dir;    // where a suite's document is written before it is sent; "" : $TMPDIR
};

// Serves the coordinator (cluster::RunFleetRank); a suite task runs `vigil run --suite S --out F`,
// a collective task `vigil fleet nccl` (below) with NCCL_COMM_ID set, each in a child process that
// its time limit stops: a GPU or a peer that hangs cannot hang the rank.
Status RunFleetRankCommand(const FleetRankCommandOptions& options,
                           const std::atomic<bool>& interrupted);

// The `vigil fleet nccl` child that does a rank's collective task (cluster/fleet_rank.h): the
// prepare's count, or the run with NCCL_COMM_ID set to the task's comm_id; limited to the task's
// timeout_s. InvalidArgument for a run without comm_id.
Result<cluster::CommandSpec> FleetNcclCommand(const std::string& vigil, const nlohmann::json& task);

// The last line of a `vigil fleet nccl` child's standard output that is a JSON object: NCCL writes
// its own lines there (NCCL_DEBUG=INFO, to stdout unless NCCL_DEBUG_FILE says otherwise).
// Internal when there is none.
Result<nlohmann::json> LastJsonLine(std::string_view out);

// `vigil fleet nccl`: this node's part of a collective across nodes (not for people).
struct FleetNcclOptions {
  bool count = false;  // only say how many GPUs this node brings and its NCCL version
  int ranks = 0;       // the GPUs it said it brings
  int first_rank = 0;
  int world = 0;
  std::vector<std::string> ops = {"all-reduce"};
  std::string size = "1G";
  int warmup = 5;
  int iterations = 20;
  int samples = 5;
};
// {"ranks": N, "nccl": "2.28.3"} when counting (NCCL loaded: a node without it fails here, not
// in the middle of its group), else {"ranks": N, "busbw_gbs": [one per op]}. InvalidArgument for
// an op or size that does not parse or ranks outside the world; the GPU's and NCCL's errors as
// gpu::Collectives gives them.
Result<Json> RunFleetNccl(const FleetNcclOptions& options);

}  // namespace vigil::agent
