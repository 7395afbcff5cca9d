#include "vigil/cluster/fleet_rank.h"

#include <httplib.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include "vigil/cluster/host_list.h"
#include "vigil/cluster/json_fields.h"
#include "vigil/cluster/net_pair.h"
#include "vigil/cluster/rdma.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"

namespace vigil::cluster {
namespace {

using SteadyClock = std::chrono::steady_clock;

// A task's answer: {"ok": true, "result": ...} or {"ok": false, "error": ...}.
nlohmann::json Answer(const std::string& node, int64_t id, const Status& status,
                      nlohmann::json result) {
  nlohmann::json body = {{"node", node}, {"id", id}, {"ok", status.ok()}};
  if (status.ok()) {
    body["result"] = std::move(result);
  } else {
    body["error"] = status.message();
  }
  return body;
}

// The NICs a task plans for this end: [{"index", "device", "port", "tcp_port"}].
std::vector<RdmaNic> NicsOf(const nlohmann::json& task) {
  std::vector<RdmaNic> nics;
  const auto list = task.find("nics");
  if (list == task.end() || !list->is_array()) return nics;
  // Each number within what it can be, so that no cast overflows.
  const auto whole = [](const nlohmann::json& n, const char* key, double fallback, double hi) {
    return static_cast<int>(std::clamp(NumberField(n, key, fallback), 0.0, hi));
  };
  for (const nlohmann::json& n : *list) {
    nics.push_back({whole(n, "index", 0, 1023), TextField(n, "device"), whole(n, "port", 1, 255),
                    whole(n, "tcp_port", 18515, 65535)});
  }
  return nics;
}

Result<nlohmann::json> PerformRdma(const std::string& kind, const nlohmann::json& task,
                                   const std::atomic<bool>& interrupted) {
  RdmaOptions o;
  if (TextField(task, "test") == "latency") o.test = RdmaTest::kLatency;
  o.program = TextField(task, "program", o.program);
  o.seconds = NumberField(task, "seconds", o.seconds);
  o.iterations = static_cast<int>(
      std::clamp(NumberField(task, "iterations", o.iterations), 1.0, double{kRdmaMaxIterations}));
  o.timeout_s = NumberField(task, "timeout_s", o.timeout_s);
  o.cancel = &interrupted;
  const std::unique_ptr<CommandRunner> runner = MakeProcessRunner();
  if (kind == "rdma-serve") {
    VIGIL_RETURN_IF_ERROR(ServeRdma(NicsOf(task), o, *runner));
    return nlohmann::json::object();
  }
  nlohmann::json nics = nlohmann::json::array();
  for (const RdmaFigure& f : SendRdma(TextField(task, "address"), NicsOf(task), o, *runner)) {
    nics.push_back({{"index", f.index},
                    {"device", f.device},
                    {"gbps", f.gbps},
                    {"us", f.us},
                    {"error", f.error}});
  }
  return nlohmann::json{{"nics", nics}};
}

// Does one task; returns its answer's result or the error.
Result<nlohmann::json> Perform(const nlohmann::json& task, const RankWork& work,
                               const FleetRankOptions& options,
                               const std::atomic<bool>& interrupted) {
  const std::string kind = TextField(task, "kind");
  if (kind == "rdma-serve" || kind == "rdma-send") return PerformRdma(kind, task, interrupted);
  if (kind == "collective-prepare" || kind == "collective") {
    if (!work.collective) return Status::Unavailable("this rank runs no collectives");
    VIGIL_ASSIGN_OR_RETURN(nlohmann::json answer, work.collective(task));
    if (kind == "collective-prepare") {
      answer["subnets"] = LocalSubnets();
      if (BoolField(task, "leader", false)) {
        VIGIL_ASSIGN_OR_RETURN(const int port, FreeTcpPort(options.bind_address));
        answer["port"] = port;
      }
    }
    return answer;
  }
  if (kind == "suite") {
    if (!work.suite) return Status::Unavailable("this rank runs no suites");
    VIGIL_ASSIGN_OR_RETURN(const std::string document, work.suite(task));
    nlohmann::json parsed = nlohmann::json::parse(document, nullptr, false);
    if (parsed.is_discarded()) return Status::Internal("the suite's document is not JSON");
    return nlohmann::json{{"document", std::move(parsed)}};
  }
  const std::string address = TextField(task, "address");
  const int port = static_cast<int>(NumberField(task, "port", 0));
  if (kind == "net-bandwidth") {
    BandwidthOptions o;
    o.seconds = NumberField(task, "seconds", o.seconds);
    VIGIL_ASSIGN_OR_RETURN(const double gbps, MeasureBandwidthGbps(address, port, o));
    return nlohmann::json{{"gbps", gbps}};
  }
  if (kind == "net-latency") {
    LatencyOptions o;
    o.round_trips = static_cast<int>(NumberField(task, "round_trips", o.round_trips));
    VIGIL_ASSIGN_OR_RETURN(const double us, MeasureLatencyUs(address, port, o));
    return nlohmann::json{{"us", us}};
  }
  return Status::InvalidArgument(fmt::format("unknown task kind \"{}\"", kind));
}

class CoordinatorLink {
 public:
  explicit CoordinatorLink(const FleetRankOptions& o) : o_(o), client_(o.coordinator) {
    client_.set_connection_timeout(5);
    client_.set_read_timeout(30);
    client_.set_write_timeout(30);
    client_.set_bearer_token_auth(o.token);
  }

  // Posts `body` to `path` until it is taken, or the coordinator has been unreachable too long.
  Result<nlohmann::json> Post(const std::string& path, const nlohmann::json& body,
                              const std::atomic<bool>& interrupted) {
    return Retry(interrupted,
                 [&] { return client_.Post(path, DumpJson(body), "application/json"); });
  }

  Result<nlohmann::json> NextTask(const std::atomic<bool>& interrupted) {
    const std::string path = "/v1/task?node=" + httplib::detail::encode_query_param(o_.node);
    return Retry(interrupted, [&] { return client_.Get(path); });
  }

 private:
  template <typename Call>
  Result<nlohmann::json> Retry(const std::atomic<bool>& interrupted, const Call& call) {
    const auto start = SteadyClock::now();
    std::string why;
    while (!interrupted) {
      const httplib::Result res = call();
      if (res && res->status < 500) {
        if (res->status >= 400) {
          return Status::InvalidArgument(
              fmt::format("coordinator {} refused: {} {}", o_.coordinator, res->status, res->body));
        }
        nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
        if (body.is_discarded()) return Status::Internal("the coordinator's answer is not JSON");
        return body;
      }
      why = res ? fmt::format("HTTP {}", res->status) : httplib::to_string(res.error());
      if (std::chrono::duration<double>(SteadyClock::now() - start).count() >
          o_.coordinator_timeout_s) {
        return Status::Unavailable(fmt::format("coordinator {} unreachable for {:g} s: {}",
                                               o_.coordinator, o_.coordinator_timeout_s, why));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return Status::Cancelled("interrupted");
  }

  const FleetRankOptions& o_;
  httplib::Client client_;
};

}  // namespace

Status RunFleetRank(const FleetRankOptions& options, const RankWork& work,
                    const std::atomic<bool>& interrupted) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<PairListener> listener,
                         PairListener::Start(options.bind_address));
  CoordinatorLink link(options);
  nlohmann::json rdma = nlohmann::json::array();
  for (const RdmaPort& p : RdmaPorts(options.sysfs_root)) {
    rdma.push_back({{"device", p.device}, {"port", p.port}, {"state", p.state}});
  }
  VIGIL_RETURN_IF_ERROR(link.Post("/v1/register",
                                  {{"node", options.node},
                                   {"rank", options.rank},
                                   {"data_port", listener->port()},
                                   {"rdma", rdma}},
                                  interrupted));
  for (;;) {
    VIGIL_ASSIGN_OR_RETURN(const nlohmann::json task, link.NextTask(interrupted));
    const std::string kind = TextField(task, "kind");
    if (kind == "exit") return Status::Ok();
    if (kind == "wait") continue;
    const auto id = static_cast<int64_t>(NumberField(task, "id", 0));
    Result<nlohmann::json> result = Perform(task, work, options, interrupted);
    const nlohmann::json answer =
        Answer(options.node, id, result.status(), result.ok() ? *result : nlohmann::json());
    VIGIL_RETURN_IF_ERROR(link.Post("/v1/result", answer, interrupted));
  }
}

int LauncherRank(const std::function<std::string(const char*)>& get) {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"}) {
    const std::string text = get(name);
    int rank = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), rank);
    if (!text.empty() && ec == std::errc() && end == text.data() + text.size() && rank >= 0) {
      return rank;
    }
  }
  return -1;
}

std::string RankNodeName(const std::string& flag,
                         const std::function<std::string(const char*)>& get) {
  if (!flag.empty()) return flag;
  const std::string hosts = get("VIGIL_FLEET_HOSTS");
  const std::string mpi_rank = get("OMPI_COMM_WORLD_RANK");
  if (!hosts.empty() && !mpi_rank.empty()) {
    const int rank = LauncherRank(get);
    const std::vector<std::string_view> names = Split(hosts, ',');
    if (rank >= 0 && static_cast<size_t>(rank) < names.size()) {
      return std::string(names[static_cast<size_t>(rank)]);
    }
  }
  return NodeName("", get);
}

}  // namespace vigil::cluster
