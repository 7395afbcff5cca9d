#include "vigil/cluster/fleet_coordinator.h"

#include <httplib.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include "vigil/core/json.h"

namespace vigil::cluster {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Now() {
  return std::chrono::duration<double>(SteadyClock::now().time_since_epoch()).count();
}

SteadyClock::time_point At(double mono) {
  return SteadyClock::time_point(
      std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(mono)));
}

// How long a rank's ask for a task waits for one before it is told to ask again.
constexpr double kLongPoll = 2;
// Workers of the HTTP server: each ask that waits holds one for up to kLongPoll.
constexpr size_t kWorkers = 256;

void Reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(DumpJson(body), "application/json");
}

// `body[key]` when it is there with the type `ok` accepts.
template <typename Check>
const nlohmann::json* CheckedField(const nlohmann::json& body, const char* key, Check ok) {
  const auto it = body.find(key);
  return it != body.end() && ok(*it) ? &*it : nullptr;
}

Status Missing(const char* what) {
  return Status::InvalidArgument(fmt::format("expected {}", what));
}

}  // namespace

Result<RankInfo> ParseRegistration(std::string_view body, const std::string& address) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return Missing("a JSON object");
  const auto* node = CheckedField(j, "node", [](const auto& v) { return v.is_string(); });
  const auto* port = CheckedField(j, "data_port", [](const auto& v) {
    return v.is_number_integer() && v.template get<int64_t>() > 0 &&
           v.template get<int64_t>() < 65536;
  });
  const auto* rank = CheckedField(j, "rank", [](const auto& v) {
    return v.is_number_integer() && v.template get<int64_t>() >= -1 &&
           v.template get<int64_t>() <= INT32_MAX;
  });
  if (node == nullptr || node->get_ref<const std::string&>().empty()) {
    return Missing("\"node\": a name");
  }
  if (port == nullptr) return Missing("\"data_port\": a port number");
  RankInfo info{node->get<std::string>(),
                address,
                port->get<int>(),
                rank == nullptr ? -1 : rank->get<int>(),
                {}};
  // Its RDMA ports (none from a rank that says nothing of them).
  const auto rdma = j.find("rdma");
  if (rdma == j.end()) return info;
  if (!rdma->is_array()) return Missing("\"rdma\": a list of ports");
  for (const nlohmann::json& p : *rdma) {
    const auto* device = CheckedField(p, "device", [](const auto& v) {
      return v.is_string() && !v.template get_ref<const std::string&>().empty();
    });
    const auto* number = CheckedField(p, "port", [](const auto& v) {
      return v.is_number_integer() && v.template get<int64_t>() >= 1 &&
             v.template get<int64_t>() <= 255;
    });
    const auto* state = CheckedField(p, "state", [](const auto& v) { return v.is_string(); });
    if (!p.is_object() || device == nullptr || number == nullptr || state == nullptr) {
      return Missing("\"rdma\": ports with a device, a port number (1-255) and a state");
    }
    info.rdma.push_back(
        {device->get<std::string>(), number->get<int>(), state->get<std::string>(), "", 0});
  }
  return info;
}

Result<RankAnswer> ParseRankAnswer(std::string_view body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return Missing("a JSON object");
  const auto* node = CheckedField(j, "node", [](const auto& v) { return v.is_string(); });
  const auto* id = CheckedField(j, "id", [](const auto& v) { return v.is_number_integer(); });
  const auto* ok = CheckedField(j, "ok", [](const auto& v) { return v.is_boolean(); });
  if (node == nullptr || id == nullptr || ok == nullptr) {
    return Missing("\"node\" (string), \"id\" (integer) and \"ok\" (boolean)");
  }
  RankAnswer a{node->get<std::string>(), id->get<int64_t>(), {}};
  a.outcome.node = a.node;
  a.outcome.ok = ok->get<bool>();
  if (const auto* result = CheckedField(j, "result", [](const auto&) { return true; })) {
    a.outcome.result = *result;
  }
  if (const auto* error = CheckedField(j, "error", [](const auto& v) { return v.is_string(); })) {
    a.outcome.error = error->get<std::string>();
  }
  if (!a.outcome.ok && a.outcome.error.empty()) a.outcome.error = "failed, saying nothing";
  return a;
}

FleetCoordinator::FleetCoordinator(std::string token)
    : token_(std::move(token)), server_(std::make_unique<httplib::Server>()) {}

Result<std::unique_ptr<FleetCoordinator>> FleetCoordinator::Start(const std::string& bind_address,
                                                                  int port, std::string token) {
  std::unique_ptr<FleetCoordinator> c(new FleetCoordinator(std::move(token)));
  FleetCoordinator* self = c.get();
  httplib::Server& server = *c->server_;
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  server.Post("/v1/register",
              [self](const httplib::Request& q, httplib::Response& r) { self->Register(q, r); });
  server.Get("/v1/task",
             [self](const httplib::Request& q, httplib::Response& r) { self->NextTask(q, r); });
  server.Post("/v1/result",
              [self](const httplib::Request& q, httplib::Response& r) { self->Answer(q, r); });
  c->port_ = port == 0 ? server.bind_to_any_port(bind_address)
                       : (server.bind_to_port(bind_address, port) ? port : -1);
  if (c->port_ < 0) {
    return Status::IoError(fmt::format("cannot listen on {}:{}", bind_address, port));
  }
  c->listener_ = std::thread([self] { self->server_->listen_after_bind(); });
  // A stop() before the thread listens would leave it listening for ever.
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return c;
}

FleetCoordinator::~FleetCoordinator() {
  Release();
  server_->stop();
  if (listener_.joinable()) listener_.join();
}

std::vector<RankInfo> FleetCoordinator::Ranks() const {
  MutexLock lock(mu_);
  std::vector<RankInfo> ranks;
  for (const std::string& node : order_) ranks.push_back(nodes_.at(node).info);
  return ranks;
}

std::vector<std::string> FleetCoordinator::Lost() const {
  MutexLock lock(mu_);
  std::vector<std::string> lost;
  for (const std::string& node : order_) {
    if (nodes_.at(node).lost) lost.push_back(node);
  }
  return lost;
}

std::vector<std::string> FleetCoordinator::Problems() const {
  MutexLock lock(mu_);
  return problems_;
}

bool FleetCoordinator::Authorised(const httplib::Request& req) const {
  return req.get_header_value("Authorization") == "Bearer " + token_;
}

void FleetCoordinator::Register(const httplib::Request& req, httplib::Response& res) {
  if (!Authorised(req)) return Reply(res, 401, {{"error", "wrong token"}});
  Result<RankInfo> info = ParseRegistration(req.body, req.remote_addr);
  if (!info.ok()) return Reply(res, 400, {{"error", info.status().message()}});
  MutexLock lock(mu_);
  if (const auto it = nodes_.find(info->node); it != nodes_.end()) {
    problems_.push_back(fmt::format(
        "node {} registered twice (ranks {} and {}): the launcher started two ranks on one node",
        info->node, it->second.info.rank, info->rank));
    return Reply(res, 409, {{"error", "this node has registered already"}});
  }
  order_.push_back(info->node);
  nodes_[info->node].info = std::move(*info);
  changed_.NotifyAll();
  Reply(res, 200, {{"ok", true}});
}

void FleetCoordinator::NextTask(const httplib::Request& req, httplib::Response& res) {
  if (!Authorised(req)) return Reply(res, 401, {{"error", "wrong token"}});
  const std::string node = req.get_param_value("node");
  const double until = Now() + kLongPoll;
  MutexLock lock(mu_);
  for (;;) {
    const auto it = nodes_.find(node);
    if (it == nodes_.end()) return Reply(res, 404, {{"error", "unknown node"}});
    NodeState& state = it->second;
    if (released_ || state.lost) return Reply(res, 200, {{"kind", "exit"}});
    for (Pending& p : state.queue) {
      if (p.handed) continue;
      p.handed = true;
      nlohmann::json task = p.task;
      task["id"] = p.id;
      return Reply(res, 200, task);
    }
    if (Now() >= until) return Reply(res, 200, {{"kind", "wait"}});
    changed_.WaitUntil(mu_, At(until));
  }
}

void FleetCoordinator::Answer(const httplib::Request& req, httplib::Response& res) {
  if (!Authorised(req)) return Reply(res, 401, {{"error", "wrong token"}});
  Result<RankAnswer> answer = ParseRankAnswer(req.body);
  if (!answer.ok()) return Reply(res, 400, {{"error", answer.status().message()}});
  MutexLock lock(mu_);
  const auto it = nodes_.find(answer->node);
  if (it == nodes_.end()) return Reply(res, 404, {{"error", "unknown node"}});
  std::vector<Pending>& queue = it->second.queue;
  const int64_t id = answer->id;
  const auto p = std::find_if(queue.begin(), queue.end(),
                              [id](const Pending& x) { return x.id == id && x.handed; });
  if (p == queue.end()) return Reply(res, 200, {{"ok", false}});  // late: given up on
  queue.erase(p);
  answer->outcome.at = Now();
  it->second.answers[id] = std::move(answer->outcome);
  changed_.NotifyAll();
  Reply(res, 200, {{"ok", true}});
}

void FleetCoordinator::WaitForRanks(size_t count, double timeout_s,
                                    const std::function<bool()>& give_up) {
  const double until = Now() + timeout_s;
  MutexLock lock(mu_);
  while (order_.size() < count && Now() < until && !give_up()) {
    changed_.WaitUntil(mu_, At(std::min(until, Now() + 0.1)));
  }
}

std::vector<TaskOutcome> FleetCoordinator::Run(
    const std::vector<std::pair<std::string, nlohmann::json>>& tasks, double timeout_s,
    const std::function<bool()>& give_up) {
  std::vector<int64_t> ids;
  {
    MutexLock lock(mu_);
    for (const auto& [node, task] : tasks) {
      const int64_t id = next_id_++;
      ids.push_back(id);
      const auto it = nodes_.find(node);
      if (it != nodes_.end() && !it->second.lost) it->second.queue.push_back({id, task, false});
    }
    changed_.NotifyAll();
  }
  const double deadline = Now() + timeout_s;
  std::vector<TaskOutcome> outcomes;
  for (size_t i = 0; i < tasks.size(); ++i) {
    outcomes.push_back(Await(tasks[i].first, ids[i], deadline, timeout_s, give_up));
  }
  return outcomes;
}

TaskOutcome FleetCoordinator::Await(const std::string& node, int64_t id, double deadline_mono,
                                    double timeout_s, const std::function<bool()>& give_up) {
  MutexLock lock(mu_);
  const auto it = nodes_.find(node);
  if (it == nodes_.end()) return {node, false, {}, "the node never registered", Now()};
  NodeState& state = it->second;
  for (;;) {
    if (const auto a = state.answers.find(id); a != state.answers.end()) {
      TaskOutcome outcome = std::move(a->second);
      state.answers.erase(a);
      return outcome;
    }
    if (state.lost) {
      return {node, false, {}, "the node stopped answering earlier in this run", Now()};
    }
    const bool out_of_time = Now() >= deadline_mono;
    if (out_of_time || give_up()) {
      state.lost = true;
      state.queue.clear();
      return {node,
              false,
              {},
              out_of_time ? fmt::format("did not answer within {:g} s", timeout_s)
                          : "the launcher ended before the node answered",
              Now()};
    }
    changed_.WaitUntil(mu_, At(std::min(deadline_mono, Now() + 0.1)));
  }
}

void FleetCoordinator::Release() {
  MutexLock lock(mu_);
  released_ = true;
  changed_.NotifyAll();
}

}  // namespace vigil::cluster
