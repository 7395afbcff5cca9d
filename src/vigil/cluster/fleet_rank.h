// One node's part of `vigil fleet run` (`vigil fleet rank`, started by the launcher): register with
// the coordinator, keep a pair listener open for the other nodes' network tests, and do what the
// coordinator asks until it says "exit".
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "vigil/core/status.h"

namespace vigil::cluster {

struct FleetRankOptions {
  std::string coordinator;  // "http://host:port"
  std::string token;
  std::string node;                      // this node's name
  int rank = -1;                         // the launcher's rank, -1 when none
  std::string bind_address = "0.0.0.0";  // the pair listener's
  // Give up when the coordinator cannot be reached for this long (it is gone; never hang).
  double coordinator_timeout_s = 60;
  std::string sysfs_root = "/sys";  // where this node's RDMA ports are listed (rdma.h)
};

// Runs a "suite" task (the task object as the coordinator sent it) and returns the node's results
// document as JSON text.
using SuiteTaskRunner = std::function<Result<std::string>(const nlohmann::json& task)>;

// Does a node's part of a collective across nodes (fleet_run.h), for a task as the coordinator
// sent it: "collective-prepare" answers {"ranks": the GPUs this node brings}; "collective" runs
// it as NCCL_COMM_ID = task's "comm_id" and answers {"busbw_gbs": [one per task's "ops"]}.
using CollectiveTaskRunner = std::function<Result<nlohmann::json>(const nlohmann::json& task)>;

// What a rank does besides the network tests, which it does itself.
struct RankWork {
  SuiteTaskRunner suite;
  CollectiveTaskRunner collective;
};

// Serves the coordinator until it says "exit" (OK), cannot be reached for
// coordinator_timeout_s (Unavailable), or `interrupted` is set (Cancelled). A task that fails is
// answered with its error; it does not end the rank. The first member of a collective's group
// also answers its prepare with "port", free on this node for NCCL's bootstrap.
Status RunFleetRank(const FleetRankOptions& options, const RankWork& work,
                    const std::atomic<bool>& interrupted);

// The node name a rank takes: `flag` when given; else, under mpirun with the run's host list in
// $VIGIL_FLEET_HOSTS (comma-separated), the host of its rank ($OMPI_COMM_WORLD_RANK); else
// $SLURMD_NODENAME; else the host name. `get` reads an environment variable ("" when unset).
std::string RankNodeName(const std::string& flag,
                         const std::function<std::string(const char*)>& get);

// The launcher's rank of this process: $OMPI_COMM_WORLD_RANK, $SLURM_PROCID or $PMI_RANK; -1.
int LauncherRank(const std::function<std::string(const char*)>& get);

}  // namespace vigil::cluster
