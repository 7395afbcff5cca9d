#include "vigil/cluster/fleet_run.h"

#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include "vigil/cluster/fleet_coordinator.h"
#include "vigil/cluster/json_fields.h"
#include "vigil/cluster/net_pair.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"

namespace vigil::cluster {
namespace {

// How long the launcher has to end by itself once every rank was told to exit.
constexpr double kLauncherGrace = 30;
// The launcher's own limit: far beyond any run; the run stops it itself (cancel).
constexpr double kLauncherLimit = 7 * 24 * 3600;
// How much longer than an RDMA test's own limit the coordinator waits for the rank's answer.
constexpr double kRdmaGrace = 15;
// More NICs than a node has: a rank's answer naming a NIC beyond is ignored.
constexpr double kMaxNics = 1024;

std::string NewToken() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", device(), device(), device(), device());
}

std::string Joined(const std::vector<FleetHost>& hosts, char sep) {
  std::string out;
  for (const FleetHost& h : hosts) {
    if (!out.empty()) out += sep;
    out += h.name;
  }
  return out;
}

// The launcher, run on a thread of its own until it ends or is cancelled.
class LauncherThread {
 public:
  LauncherThread(CommandRunner& runner, CommandSpec spec) : spec_(std::move(spec)) {
    spec_.cancel = &cancel_;
    thread_ = std::thread([this, &runner] {
      result_ = std::make_unique<Result<CommandOutput>>(runner.Run(spec_));
      done_ = true;
    });
  }
  ~LauncherThread() { Stop(0); }
  bool done() const { return done_; }

  // Waits up to grace_s for the launcher to end, then stops it; fills the outcome's launcher
  // fields.
  void Stop(double grace_s, FleetRunOutcome* outcome = nullptr) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    while (!done_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    cancel_ = true;
    if (thread_.joinable()) thread_.join();
    if (outcome == nullptr) return;
    const Result<CommandOutput>& r = *result_;
    if (!r.ok()) {
      outcome->launcher_error = r.status().message();
      return;
    }
    outcome->launcher_exit = r->exit_code;
    if (r->exit_code != 0) {
      outcome->launcher_error =
          fmt::format("{} exited with {}: {}", spec_.argv[0], r->exit_code, LastOutput(*r));
    }
  }

 private:
  CommandSpec spec_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> done_{false};
  std::unique_ptr<Result<CommandOutput>> result_;
  std::thread thread_;
};

Result<std::string> AdvertiseAddress(const FleetRunOptions& o) {
  if (!o.advertise_address.empty()) return o.advertise_address;
  std::string toward;
  if (!o.hosts.empty()) {
    VIGIL_ASSIGN_OR_RETURN(toward, ResolveHost(o.hosts[0].name, "the first host"));
  } else {
    VIGIL_ASSIGN_OR_RETURN(toward, ResolveHost(HostName(), "this machine"));
  }
  return LocalAddressToward(toward);
}

// The nodes of the run: every host named, then every other node that registered.
std::vector<FleetNodeOutcome> NodesOf(const FleetRunOptions& o, const std::vector<RankInfo>& ranks,
                                      bool launcher_ended) {
  std::map<std::string, const RankInfo*> by_name;
  for (const RankInfo& r : ranks) by_name[r.node] = &r;
  std::vector<FleetNodeOutcome> nodes;
  for (const FleetHost& h : o.hosts) {
    FleetNodeOutcome n{h, by_name.erase(h.name) > 0, "", ""};
    if (!n.answered) {
      n.error = launcher_ended ? "did not register: the launcher ended first"
                               : fmt::format("did not register within {:g} s", o.start_timeout_s);
    }
    nodes.push_back(std::move(n));
  }
  for (const RankInfo& r : ranks) {
    if (by_name.count(r.node) > 0) nodes.push_back({{r.node, "", 0}, true, "", ""});
  }
  return nodes;
}

// A node lost during the network tests says so (one lost in its suite already does).
void MarkLost(const std::vector<std::string>& lost, std::vector<FleetNodeOutcome>& nodes) {
  for (FleetNodeOutcome& n : nodes) {
    if (n.error.empty() && std::count(lost.begin(), lost.end(), n.host.name) > 0) {
      n.error = "stopped answering during the network tests";
    }
  }
}

class Conductor {
 public:
  Conductor(const FleetRunOptions& o, FleetCoordinator& c, const FleetRunEvents& e,
            std::function<bool()> give_up)
      : o_(o), c_(c), e_(e), give_up_(std::move(give_up)) {}

  void Suites(std::vector<FleetNodeOutcome>& nodes) {
    std::vector<std::pair<std::string, nlohmann::json>> tasks;
    std::vector<FleetNodeOutcome*> whose;
    for (FleetNodeOutcome& n : nodes) {
      if (!n.answered) continue;
      tasks.push_back({n.host.name,
                       {{"kind", "suite"},
                        {"suite", o_.suite},
                        {"args", o_.suite_args},
                        {"timeout_s", o_.suite_timeout_s}}});
      whose.push_back(&n);
    }
    Say(fmt::format("suite {} on {} nodes", o_.suite, tasks.size()));
    const std::vector<TaskOutcome> done = c_.Run(tasks, o_.suite_timeout_s, give_up_);
    for (size_t i = 0; i < done.size(); ++i) {
      if (done[i].ok && done[i].result.is_object() && done[i].result.contains("document")) {
        whose[i]->document = DumpJson(done[i].result["document"]);
      } else {
        whose[i]->error = "suite: " + (done[i].ok ? "no document in the answer" : done[i].error);
      }
    }
  }

  Result<std::vector<FleetPairOutcome>> Network(const std::vector<FleetNodeOutcome>& nodes,
                                                int& rounds) {
    const std::vector<FleetHost> hosts = Usable(nodes);
    const std::map<std::string, RankInfo> ranks = RanksByName();
    std::vector<FleetPairOutcome> pairs;
    if (hosts.size() < 2) return pairs;
    VIGIL_ASSIGN_OR_RETURN(const std::vector<PairRound> schedule, o_.schedule(hosts));
    rounds = static_cast<int>(schedule.size());
    for (size_t r = 0; r < schedule.size(); ++r) {
      Say(fmt::format("network round {}/{}: {} pairs", r + 1, schedule.size(), schedule[r].size()));
      for (const bool forward : {true, false}) {
        std::vector<std::pair<int, int>> directed;
        for (const auto& [a, b] : schedule[r])
          directed.push_back(forward ? std::pair{a, b} : std::pair{b, a});
        Measure(hosts, ranks, directed, pairs);
      }
    }
    return pairs;
  }

  Result<std::vector<FleetCollectiveOutcome>> Collectives(
      const std::vector<FleetNodeOutcome>& nodes, int& rounds) {
    const CollectiveOptions& co = o_.collectives;
    const std::vector<FleetHost> hosts = Usable(nodes);
    const std::map<std::string, RankInfo> ranks = RanksByName();
    std::vector<FleetCollectiveOutcome> out;
    if (hosts.size() < 2) return out;
    VIGIL_ASSIGN_OR_RETURN(const std::vector<GroupRound> schedule, co.schedule(hosts));
    rounds = static_cast<int>(schedule.size());
    for (size_t r = 0; r < schedule.size(); ++r) {
      std::vector<Group> groups;
      for (const std::vector<int>& members : schedule[r]) {
        if (members.size() < 2) continue;
        Group& g = groups.emplace_back();
        for (const int i : members) g.members.push_back(hosts[static_cast<size_t>(i)].name);
      }
      Say(fmt::format("collective round {}/{}: {} group{}", r + 1, schedule.size(), groups.size(),
                      groups.size() == 1 ? "" : "s"));
      Prepare(ranks, groups);
      RunGroups(groups);
      for (const Group& g : groups) {
        for (size_t k = 0; k < co.ops.size(); ++k) {
          const bool failed = !g.failure.empty();
          out.push_back({static_cast<int>(r + 1), g.members, failed ? 0 : g.world, co.ops[k],
                         g.bytes, failed ? -1 : g.busbw[k], g.failure.Text()});
        }
      }
    }
    return out;
  }

 private:
  // The nodes that answered, passed their suite and have not stopped answering since.
  std::vector<FleetHost> Usable(const std::vector<FleetNodeOutcome>& nodes) const {
    const std::vector<std::string> lost = c_.Lost();
    std::vector<FleetHost> hosts;
    for (const FleetNodeOutcome& n : nodes) {
      if (n.answered && n.error.empty() &&
          std::find(lost.begin(), lost.end(), n.host.name) == lost.end()) {
        hosts.push_back(n.host);
      }
    }
    return hosts;
  }

  std::map<std::string, RankInfo> RanksByName() const {
    std::map<std::string, RankInfo> ranks;
    for (const RankInfo& r : c_.Ranks()) ranks[r.node] = r;
    return ranks;
  }

  // Why a group failed: its members' errors, the first to come in first. When one member fails,
  // the others wait in NCCL for it until their own limit: the earliest error is the likeliest
  // cause, and the later ones (time-outs, "remote process exited") are its echoes.
  struct Failure {
    std::vector<std::pair<double, std::string>> errors;  // (when, "<node>: why")
    bool empty() const { return errors.empty(); }
    void Add(double at, std::string text) { errors.emplace_back(at, std::move(text)); }
    std::string Text() const {
      if (errors.empty()) return "";
      const auto first = std::min_element(errors.begin(), errors.end());
      if (errors.size() == 1) return first->second;
      return fmt::format("{} (then {} more member{})", first->second, errors.size() - 1,
                         errors.size() == 2 ? "" : "s");
    }
  };

  struct Group {
    std::vector<std::string> members;
    std::vector<int> first_rank;  // each member's
    std::vector<int> brings;      // each member's GPUs
    int world = 0;
    double bytes = 0;           // per GPU, whole floats for every rank
    std::string comm_id;        // "address:port" of the first member's bootstrap
    std::vector<double> busbw;  // per op, the slowest member's
    Failure failure;
  };

  // Every member of every group says how many GPUs it brings, its NCCL version and its IPv4
  // subnets; the first also a port. NCCL bootstraps each member from an interface in the subnet of
  // NCCL_COMM_ID's address, and a communicator of two NCCL versions is not to be trusted: both
  // are checked here, before anyone waits on them.
  void Prepare(const std::map<std::string, RankInfo>& ranks, std::vector<Group>& groups) {
    const CollectiveOptions& co = o_.collectives;
    std::vector<std::pair<std::string, nlohmann::json>> tasks;
    for (const Group& g : groups) {
      for (size_t i = 0; i < g.members.size(); ++i) {
        tasks.push_back(
            {g.members[i],
             {{"kind", "collective-prepare"}, {"leader", i == 0}, {"timeout_s", co.timeout_s}}});
      }
    }
    const std::vector<TaskOutcome> done = c_.Run(tasks, co.timeout_s + co.grace_s, give_up_);
    size_t t = 0;
    for (Group& g : groups) {
      const std::string leader = ranks.at(g.members[0]).address;
      const std::string version = TextField(done[t].result, "nccl");
      const bool leader_ok = done[t].ok && NumberField(done[t].result, "ranks", 0) >= 1;
      for (size_t i = 0; i < g.members.size(); ++i, ++t) {
        const TaskOutcome& d = done[t];
        const std::string& node = g.members[i];
        const int brings = d.ok ? static_cast<int>(NumberField(d.result, "ranks", 0)) : 0;
        const int port = static_cast<int>(NumberField(d.result, "port", 0));
        if (!d.ok) {
          g.failure.Add(d.at, fmt::format("{}: {}", node, d.error));
        } else if (brings < 1) {
          g.failure.Add(d.at, fmt::format("{}: no GPU to run collectives on", node));
        } else if (i == 0 && (port < 1 || port > 65535)) {
          g.failure.Add(d.at, fmt::format("{}: no port for NCCL's bootstrap", node));
        } else if (leader_ok && TextField(d.result, "nccl") != version) {
          g.failure.Add(d.at, fmt::format("{}: NCCL {}, where {} has {}", node,
                                          TextField(d.result, "nccl", "?"), g.members[0], version));
        } else if (leader_ok && !InSubnets(leader, d.result)) {
          g.failure.Add(d.at, fmt::format("{}: no interface in the subnet of {}, where NCCL "
                                          "bootstraps from {}",
                                          node, leader, g.members[0]));
        }
        if (i == 0) g.comm_id = fmt::format("{}:{}", leader, port);
        g.first_rank.push_back(g.world);
        g.brings.push_back(brings);
        g.world += brings;
      }
      // Whole floats for every rank, as every member rounds them.
      const double unit = 4.0 * std::max(g.world, 1);
      g.bytes = std::max(unit, std::floor(co.bytes / unit) * unit);
    }
  }

  // Whether `address` (IPv4) lies in one of the prepare answer's "subnets" ("a.b.c.d/len").
  static bool InSubnets(const std::string& address, const nlohmann::json& answer) {
    const auto subnets = answer.find("subnets");
    if (!answer.is_object() || subnets == answer.end() || !subnets->is_array()) return false;
    for (const nlohmann::json& s : *subnets) {
      if (s.is_string() && InSubnet(address, s.get<std::string>())) return true;
    }
    return false;
  }

  // The collectives of every group that was prepared, all groups at once.
  void RunGroups(std::vector<Group>& groups) {
    const CollectiveOptions& co = o_.collectives;
    std::vector<std::pair<std::string, nlohmann::json>> tasks;
    std::vector<Group*> whose;
    for (Group& g : groups) {
      if (!g.failure.empty()) continue;
      for (size_t i = 0; i < g.members.size(); ++i) {
        tasks.push_back({g.members[i],
                         {{"kind", "collective"},
                          {"comm_id", g.comm_id},
                          {"first_rank", g.first_rank[i]},
                          {"ranks", g.brings[i]},
                          {"world", g.world},
                          {"ops", co.ops},
                          {"bytes", g.bytes},
                          {"warmup", co.warmup},
                          {"iterations", co.iterations},
                          {"samples", co.samples},
                          {"timeout_s", co.timeout_s}}});
        whose.push_back(&g);
      }
      g.busbw.assign(co.ops.size(), std::numeric_limits<double>::infinity());
    }
    const std::vector<TaskOutcome> done = c_.Run(tasks, co.timeout_s + co.grace_s, give_up_);
    for (size_t t = 0; t < done.size(); ++t) {
      Group& g = *whose[t];
      const std::string& node = tasks[t].first;
      const auto figures = done[t].ok ? done[t].result.find("busbw_gbs") : done[t].result.end();
      if (!done[t].ok || figures == done[t].result.end() || !figures->is_array() ||
          figures->size() != co.ops.size()) {
        g.failure.Add(done[t].at, fmt::format("{}: {}", node,
                                              done[t].ok ? "no bus bandwidth for every collective"
                                                         : done[t].error));
        continue;
      }
      for (size_t k = 0; k < co.ops.size(); ++k) {
        const double v = (*figures)[k].is_number() ? (*figures)[k].get<double>() : -1;
        if (!(v > 0)) {
          g.failure.Add(done[t].at, fmt::format("{}: bus bandwidth of {} is not a positive number",
                                                node, co.ops[k]));
          break;
        }
        g.busbw[k] = std::min(g.busbw[k], v);
      }
    }
  }

  // Both tests of every directed pair (from, to) at once: bandwidth, then latency.
  void Measure(const std::vector<FleetHost>& hosts, const std::map<std::string, RankInfo>& ranks,
               const std::vector<std::pair<int, int>>& directed,
               std::vector<FleetPairOutcome>& pairs) {
    const size_t first = pairs.size();
    for (const auto& [a, b] : directed) {
      pairs.push_back({hosts[a].name, hosts[b].name, -1, -1, "", {}});
    }
    for (const char* kind : {"net-bandwidth", "net-latency"}) {
      if (!(std::string_view(kind) == "net-bandwidth" ? o_.bandwidth : o_.latency)) continue;
      std::vector<std::pair<std::string, nlohmann::json>> tasks;
      for (const auto& [a, b] : directed) {
        const RankInfo& to = ranks.at(hosts[b].name);
        nlohmann::json task = {{"kind", kind}, {"address", to.address}, {"port", to.data_port}};
        task["seconds"] = o_.transfer_seconds;
        task["round_trips"] = o_.latency_round_trips;
        tasks.push_back({hosts[a].name, std::move(task)});
      }
      const std::vector<TaskOutcome> done = c_.Run(tasks, o_.pair_timeout_s, give_up_);
      for (size_t i = 0; i < done.size(); ++i) {
        FleetPairOutcome& p = pairs[first + i];
        if (!done[i].ok) {
          if (p.error.empty()) p.error = fmt::format("{}: {}", kind, done[i].error);
        } else if (std::string_view(kind) == "net-bandwidth") {
          p.gbps = NumberField(done[i].result, "gbps", -1);
        } else {
          p.us = NumberField(done[i].result, "us", -1);
        }
      }
    }
    if (o_.rdma_bandwidth || o_.rdma_latency) MeasureRdma(hosts, ranks, directed, pairs, first);
  }

  // The RDMA tests of every directed pair at once, bandwidth then latency: the receivers' servers
  // and the senders' clients are started together (a client retries until its server listens).
  // NIC i runs when both ends have an ACTIVE NIC i; the others are named from what the ranks
  // registered.
  void MeasureRdma(const std::vector<FleetHost>& hosts,
                   const std::map<std::string, RankInfo>& ranks,
                   const std::vector<std::pair<int, int>>& directed,
                   std::vector<FleetPairOutcome>& pairs, size_t first) {
    // A NIC that cannot run is named in the pair's figures now; one that runs gets its figures
    // from each test.
    std::vector<RdmaPlan> plans;
    for (size_t k = 0; k < directed.size(); ++k) {
      const auto& [a, b] = directed[k];
      const std::vector<RdmaPort>& from = ranks.at(hosts[a].name).rdma;
      const std::vector<RdmaPort>& to = ranks.at(hosts[b].name).rdma;
      FleetPairOutcome& p = pairs[first + k];
      RdmaPlan plan{k};
      for (size_t i = 0; i < std::max(from.size(), to.size()); ++i) {
        std::string why = NicMissing(hosts[a].name, from, i);
        if (why.empty()) why = NicMissing(hosts[b].name, to, i);
        p.rdma.push_back({static_cast<int>(i), i < from.size() ? from[i].Name() : "-", -1, why});
        if (!why.empty()) continue;
        const int tcp = o_.rdma_port_base + static_cast<int>(i);
        plan.send_nics.push_back(
            {{"index", i}, {"device", from[i].device}, {"port", from[i].port}, {"tcp_port", tcp}});
        plan.serve_nics.push_back(
            {{"index", i}, {"device", to[i].device}, {"port", to[i].port}, {"tcp_port", tcp}});
      }
      if (from.empty() && to.empty()) {
        p.rdma.push_back({0, "-", -1, "neither node has an RDMA port"});
      }
      if (!plan.send_nics.empty()) plans.push_back(std::move(plan));
    }
    for (const RdmaTest test : {RdmaTest::kBandwidth, RdmaTest::kLatency}) {
      const bool latency = test == RdmaTest::kLatency;
      if (!(latency ? o_.rdma_latency : o_.rdma_bandwidth)) continue;
      RunRdmaTest(test, hosts, ranks, directed, plans, pairs, first);
    }
    for (size_t k = 0; k < directed.size(); ++k) {
      FleetPairOutcome& p = pairs[first + k];
      for (const RdmaFigure& f : p.rdma) {
        if (!f.error.empty() && p.error.empty()) {
          p.error = fmt::format("rdma NIC {} ({}): {}", f.index, f.device, f.error);
        }
      }
    }
  }

  // A directed pair's RDMA plan: the NICs both ends can run, as each end's task lists them.
  struct RdmaPlan {
    size_t pair;  // in `directed`
    nlohmann::json send_nics = nlohmann::json::array(), serve_nics = nlohmann::json::array();
  };

  // One RDMA test over every planned pair at once; each NIC's figure, or why not, into its pair
  // (pairs[first + k] for directed[k]).
  void RunRdmaTest(RdmaTest test, const std::vector<FleetHost>& hosts,
                   const std::map<std::string, RankInfo>& ranks,
                   const std::vector<std::pair<int, int>>& directed,
                   const std::vector<RdmaPlan>& plans, std::vector<FleetPairOutcome>& pairs,
                   size_t first) {
    const bool latency = test == RdmaTest::kLatency;
    RdmaOptions limits;
    limits.test = test;
    limits.seconds = o_.rdma_seconds;
    limits.iterations = o_.rdma_iterations;
    limits.timeout_s = o_.pair_timeout_s;
    const nlohmann::json settings = {
        {"test", latency ? "latency" : "bandwidth"},
        {"program", latency ? o_.rdma_lat_program : o_.rdma_bw_program},
        {"seconds", limits.seconds},
        {"iterations", o_.rdma_iterations},
        {"timeout_s", limits.timeout_s}};
    std::vector<std::pair<std::string, nlohmann::json>> tasks;
    for (const RdmaPlan& plan : plans) {
      const auto& [a, b] = directed[plan.pair];
      nlohmann::json send = settings, serve = settings;
      send["kind"] = "rdma-send";
      send["address"] = ranks.at(hosts[b].name).address;
      send["nics"] = plan.send_nics;
      serve["kind"] = "rdma-serve";
      serve["nics"] = plan.serve_nics;
      tasks.push_back({hosts[a].name, std::move(send)});
      tasks.push_back({hosts[b].name, std::move(serve)});
    }
    const std::vector<TaskOutcome> done =
        c_.Run(tasks, RdmaLimitSeconds(limits) + kRdmaGrace, give_up_);
    for (size_t t = 0; t < plans.size(); ++t) {
      FleetPairOutcome& p = pairs[first + plans[t].pair];
      const TaskOutcome& sent = done[2 * t];
      const TaskOutcome& served = done[2 * t + 1];
      const auto answered = sent.ok ? sent.result.find("nics") : sent.result.end();
      std::map<int, const nlohmann::json*> by_index;
      if (answered != sent.result.end() && answered->is_array()) {
        for (const nlohmann::json& nic : *answered) {
          const double index = NumberField(nic, "index", -1);
          if (index >= 0 && index < kMaxNics) by_index[static_cast<int>(index)] = &nic;
        }
      }
      for (const nlohmann::json& planned : plans[t].send_nics) {
        const int index = planned["index"].get<int>();
        const auto it = std::find_if(p.rdma.begin(), p.rdma.end(),
                                     [&](const RdmaFigure& f) { return f.index == index; });
        if (it == p.rdma.end()) continue;  // MeasureRdma made one for every planned NIC
        RdmaFigure& f = *it;
        const auto nic = by_index.find(index);
        std::string why;
        if (!sent.ok) {
          why = sent.error;
        } else if (nic == by_index.end()) {
          why = "no figure";
        } else {
          f.device = TextField(*nic->second, "device", f.device);
          const double v = NumberField(*nic->second, latency ? "us" : "gbps", -1);
          why = TextField(*nic->second, "error");
          if (v >= 0 && why.empty()) {
            (latency ? f.us : f.gbps) = v;
          } else if (why.empty()) {
            why = "no figure";
          }
        }
        // The receiver's error (its first NIC's) explains a NIC without a figure only.
        if (!why.empty() && !served.ok) why += "; receiver: " + served.error;
        if (!why.empty()) {
          f.error += fmt::format("{}{}: {}", f.error.empty() ? "" : "; ",
                                 latency ? "latency" : "bandwidth", why);
        }
      }
    }
  }

  // Why NIC i of `node` cannot run: it has none, or it is not ACTIVE; "" when it can.
  static std::string NicMissing(const std::string& node, const std::vector<RdmaPort>& ports,
                                size_t i) {
    if (i >= ports.size()) {
      return fmt::format("{} has {} RDMA port{}", node, ports.size(), ports.size() == 1 ? "" : "s");
    }
    if (!ports[i].active())
      return fmt::format("{}'s {} is {}", node, ports[i].Name(), ports[i].state);
    return "";
  }

  void Say(const std::string& line) const {
    if (e_.progress) e_.progress(line);
  }

  const FleetRunOptions& o_;
  FleetCoordinator& c_;
  const FleetRunEvents& e_;
  std::function<bool()> give_up_;
};

}  // namespace

Result<Launcher> ParseLauncher(std::string_view text) {
  if (text == "mpirun") return Launcher::kMpirun;
  if (text == "srun") return Launcher::kSrun;
  return Status::InvalidArgument(
      fmt::format("--launcher: {} is not one of mpirun, srun", Quote(text)));
}

std::vector<std::string> LauncherArgv(const FleetRunOptions& o, const std::string& url,
                                      const std::string& hostfile) {
  std::vector<std::string> argv;
  const bool mpirun = o.launcher == Launcher::kMpirun;
  argv.push_back(!o.launcher_program.empty() ? o.launcher_program : mpirun ? "mpirun" : "srun");
  if (mpirun) {
    const std::string n = std::to_string(o.hosts.size());
    argv.insert(argv.end(), {"--hostfile", hostfile, "-np", n, "--map-by", "node", "-x",
                             "VIGIL_FLEET_TOKEN", "-x", "VIGIL_FLEET_HOSTS"});
  } else {
    const int n = o.hosts.empty() ? o.nodes : static_cast<int>(o.hosts.size());
    if (n > 0) {
      argv.insert(argv.end(), {"--nodes", std::to_string(n), "--ntasks", std::to_string(n)});
    }
    argv.emplace_back("--ntasks-per-node=1");
    if (!o.hosts.empty()) argv.push_back("--nodelist=" + Joined(o.hosts, ','));
  }
  argv.insert(argv.end(), o.launcher_args.begin(), o.launcher_args.end());
  argv.insert(argv.end(), {o.vigil_path, "fleet", "rank", "--coordinator", url});
  return argv;
}

Result<FleetRunOutcome> RunFleet(const FleetRunOptions& o, CommandRunner& runner,
                                 const FleetRunEvents& events,
                                 const std::atomic<bool>& interrupted) {
  if (o.launcher == Launcher::kMpirun && o.hosts.empty()) {
    return Status::InvalidArgument("--launcher mpirun needs --hosts (the host file)");
  }
  if (o.vigil_path.empty()) return Status::InvalidArgument("no vigil path for the nodes");
  VIGIL_ASSIGN_OR_RETURN(const std::string address, AdvertiseAddress(o));
  const std::string token = NewToken();
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<FleetCoordinator> coordinator,
                         FleetCoordinator::Start(o.bind_address, 0, token));
  const std::string url = fmt::format("http://{}:{}", address, coordinator->port());
  const std::string hostfile = o.work_dir + "/mpirun-hosts";
  if (o.launcher == Launcher::kMpirun) {
    std::string text;
    for (const FleetHost& h : o.hosts) text += h.name + " slots=1\n";
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(hostfile, text));
  }
  CommandSpec spec{LauncherArgv(o, url, hostfile), o.launcher_env, kLauncherLimit};
  spec.env.push_back("VIGIL_FLEET_TOKEN=" + token);
  spec.env.push_back("VIGIL_FLEET_HOSTS=" + Joined(o.hosts, ','));
  if (events.progress) events.progress("launching: " + CommandText(spec.argv));
  LauncherThread launcher(runner, std::move(spec));
  const auto give_up = [&] { return launcher.done() || interrupted.load(); };

  const size_t expected =
      o.hosts.empty() ? static_cast<size_t>(std::max(o.nodes, 1)) : o.hosts.size();
  coordinator->WaitForRanks(expected, o.start_timeout_s, give_up);
  FleetRunOutcome outcome;
  outcome.nodes = NodesOf(o, coordinator->Ranks(), launcher.done());
  Conductor conductor(o, *coordinator, events, give_up);
  if (!o.suite.empty()) conductor.Suites(outcome.nodes);
  if (o.schedule) {
    Result<std::vector<FleetPairOutcome>> pairs = conductor.Network(outcome.nodes, outcome.rounds);
    if (!pairs.ok()) return pairs.status();
    outcome.pairs = std::move(*pairs);
  }
  if (o.collectives.schedule && !o.collectives.ops.empty()) {
    Result<std::vector<FleetCollectiveOutcome>> collectives =
        conductor.Collectives(outcome.nodes, outcome.collective_rounds);
    if (!collectives.ok()) return collectives.status();
    outcome.collectives = std::move(*collectives);
  }
  MarkLost(coordinator->Lost(), outcome.nodes);
  coordinator->Release();
  launcher.Stop(kLauncherGrace, &outcome);
  outcome.problems = coordinator->Problems();
  return outcome;
}

}  // namespace vigil::cluster
