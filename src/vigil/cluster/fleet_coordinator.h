// The coordinator of `vigil fleet run`: a small HTTP service that the ranks the launcher started
// (one `vigil fleet rank` per node) register with, ask for their next task, and answer. The
// launcher only starts processes; everything the run does passes through here, so a node that never
// answers, or stops answering, is known by name and the others' results are kept.
//
// Protocol (JSON bodies, the run's token in "Authorization: Bearer <token>"):
//   POST /v1/register {"node", "rank", "data_port", "rdma"} -> {"ok": true} (409 for a name seen
//   twice) GET  /v1/task?node=N  waits up to 2 s                -> a task {"id", "kind", ...},
//                                                           {"kind": "wait"} or {"kind": "exit"}
//   POST /v1/result {"node", "id", "ok", "result" | "error"}
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "vigil/cluster/rdma.h"
#include "vigil/core/mutex.h"
#include "vigil/core/status.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace vigil::cluster {

struct RankInfo {
  std::string node;
  std::string address;         // where its registration came from: its pair listener's address
  int data_port = 0;           // its pair listener's port
  int rank = -1;               // the launcher's rank, -1 when it has none
  std::vector<RdmaPort> rdma;  // its RDMA ports, every state, in order (rdma.h)
};

struct TaskOutcome {
  std::string node;
  bool ok = false;
  nlohmann::json result;  // the task's answer when ok
  std::string error;      // why not, when !ok
  double at = 0;  // when it was answered or given up on, in the coordinator's monotonic seconds
};

// A rank's registration, from its body: InvalidArgument naming the field that is missing or of the
// wrong type. `address` is where it came from.
Result<RankInfo> ParseRegistration(std::string_view body, const std::string& address);

// A rank's answer to a task, from its body ({"node", "id", "ok", "result" | "error"}).
struct RankAnswer {
  std::string node;
  int64_t id = 0;
  TaskOutcome outcome;
};
Result<RankAnswer> ParseRankAnswer(std::string_view body);

class FleetCoordinator {
 public:
  // Listens on bind_address (port 0: a free one). IoError when it cannot.
  static Result<std::unique_ptr<FleetCoordinator>> Start(const std::string& bind_address, int port,
                                                         std::string token);
  ~FleetCoordinator();
  FleetCoordinator(const FleetCoordinator&) = delete;
  FleetCoordinator& operator=(const FleetCoordinator&) = delete;

  int port() const { return port_; }
  // The ranks registered so far, in the order they registered.
  std::vector<RankInfo> Ranks() const;
  // The nodes that stopped answering (a task past its time, or the launcher ended), by name.
  std::vector<std::string> Lost() const;
  // What went wrong outside any task (a node name registered twice), in order.
  std::vector<std::string> Problems() const;

  // Waits until `count` ranks have registered, `timeout_s` passes, or give_up() is true (asked
  // every 100 ms).
  void WaitForRanks(size_t count, double timeout_s, const std::function<bool()>& give_up);

  // Gives each task (node, task object without "id") to its node's rank and waits for the answers:
  // each at most timeout_s, all of them no longer once give_up() is true. A node that does not
  // answer in time is lost: its later tasks fail at once. Outcomes are in the tasks' order.
  std::vector<TaskOutcome> Run(const std::vector<std::pair<std::string, nlohmann::json>>& tasks,
                               double timeout_s, const std::function<bool()>& give_up);

  // Every rank's next ask is answered "exit".
  void Release();

 private:
  struct Pending {
    int64_t id = 0;
    nlohmann::json task;
    bool handed = false;
  };
  struct NodeState {
    RankInfo info;
    std::vector<Pending> queue;  // tasks not answered yet, oldest first
    bool lost = false;
    std::map<int64_t, TaskOutcome> answers;
  };

  explicit FleetCoordinator(std::string token);
  bool Authorised(const httplib::Request& req) const;
  void Register(const httplib::Request& req, httplib::Response& res);
  void NextTask(const httplib::Request& req, httplib::Response& res);
  void Answer(const httplib::Request& req, httplib::Response& res);
  // The outcome of task `id` of `node` once answered, lost or given up on.
  TaskOutcome Await(const std::string& node, int64_t id, double deadline_mono, double timeout_s,
                    const std::function<bool()>& give_up);

  const std::string token_;
  int port_ = 0;
  mutable Mutex mu_;
  CondVar changed_;  // a registration, an answer, or Release
  std::map<std::string, NodeState> nodes_ GUARDED_BY(mu_);
  std::vector<std::string> order_ GUARDED_BY(mu_);  // node names in registration order
  std::vector<std::string> problems_ GUARDED_BY(mu_);
  int64_t next_id_ GUARDED_BY(mu_) = 1;
  bool released_ GUARDED_BY(mu_) = false;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
};

}  // namespace vigil::cluster
