#include "vigil/agent/fleet_run.h"

#include <stdlib.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include "vigil/bench/benchmark.h"
#include "vigil/bench/cuda/gpu_benchmarks.h"
#include "vigil/cluster/command.h"
#include "vigil/cluster/fleet_rank.h"
#include "vigil/cluster/host_list.h"
#include "vigil/cluster/json_fields.h"
#include "vigil/cluster/patterns.h"
#include "vigil/core/env.h"
#include "vigil/core/file.h"
#include "vigil/core/text.h"
#include "vigil/results/document.h"
#include "vigil/server/client.h"

namespace vigil::agent {
namespace {

Result<std::vector<cluster::FleetHost>> ReadHosts(const std::string& path) {
  if (path.empty()) return std::vector<cluster::FleetHost>{};
  VIGIL_ASSIGN_OR_RETURN(const std::string text, Env::Default().ReadFile(path));
  VIGIL_ASSIGN_OR_RETURN(std::vector<cluster::FleetHost> hosts, cluster::ParseHostList(text, path));
  for (const cluster::FleetHost& h : hosts) {
    VIGIL_RETURN_IF_ERROR(cluster::ResolveHost(h.name, fmt::format("{}:{}", path, h.line)));
  }
  return hosts;
}

// The network schedule of --pattern: pairs only (the TCP test measures a pair at a time).
Result<cluster::PairSchedule> ScheduleOf(const std::string& name) {
  if (name == "none") return cluster::PairSchedule();
  VIGIL_ASSIGN_OR_RETURN(const cluster::Pattern pattern, cluster::ParsePattern(name));
  if (pattern == cluster::Pattern::kAllNodes || pattern == cluster::Pattern::kKBatch) {
    return Status::InvalidArgument(fmt::format(
        "--pattern: {} runs collectives over groups of nodes; the network test measures pairs "
        "(pair-wise, ring, topology)",
        name));
  }
  return cluster::PairSchedule([pattern](const std::vector<cluster::FleetHost>& hosts)
                                   -> Result<std::vector<cluster::PairRound>> {
    std::vector<cluster::PatternHost> named;
    for (const cluster::FleetHost& h : hosts) named.push_back({h.name, h.rack});
    VIGIL_ASSIGN_OR_RETURN(const std::vector<cluster::Round> rounds,
                           cluster::Schedule(pattern, named, {}));
    std::vector<cluster::PairRound> pairs;
    for (const cluster::Round& round : rounds) {
      cluster::PairRound& out = pairs.emplace_back();
      for (const std::vector<int>& group : round) {
        if (group.size() == 2) out.emplace_back(group[0], group[1]);
      }
    }
    return pairs;
  });
}

// The groups of --collective-pattern: all-nodes or k-batch (k = --group-size).
Result<cluster::GroupSchedule> GroupScheduleOf(const std::string& name, int k) {
  if (name == "none") return cluster::GroupSchedule();
  VIGIL_ASSIGN_OR_RETURN(const cluster::Pattern pattern, cluster::ParsePattern(name));
  if (pattern != cluster::Pattern::kAllNodes && pattern != cluster::Pattern::kKBatch) {
    return Status::InvalidArgument(fmt::format(
        "--collective-pattern: {} measures pairs; collectives run over groups (all-nodes, "
        "k-batch) or none",
        name));
  }
  return cluster::GroupSchedule([pattern, k](const std::vector<cluster::FleetHost>& hosts)
                                    -> Result<std::vector<cluster::GroupRound>> {
    std::vector<cluster::PatternHost> named;
    for (const cluster::FleetHost& h : hosts) named.push_back({h.name, h.rack});
    return cluster::Schedule(pattern, named, {.k = k});
  });
}

// The collectives' names as the ranks read them (gpu_benchmarks.h's CollectiveName).
Result<std::vector<std::string>> CollectiveNames(const std::vector<std::string>& given) {
  std::vector<std::string> names;
  for (const std::string& g : given) {
    Result<gpu::Collective> op = ParseCollective(g);
    if (!op.ok()) return Status::InvalidArgument("--collective: " + op.status().message());
    names.emplace_back(CollectiveName(*op));
  }
  if (names.empty()) return Status::InvalidArgument("--collective: name one collective at least");
  return names;
}

Result<double> CollectiveBytes(const std::string& flag, const std::string& text) {
  Result<double> bytes = ParseParamValue(ParamKind::kBytes, text);
  if (!bytes.ok() || *bytes < 4) {
    return Status::InvalidArgument(
        fmt::format("{}: {} is not a size of 4 bytes or more (e.g. 1G)", flag, Quote(text)));
  }
  return *bytes;
}

// The nodes of the Slurm allocation this runs in ($SLURM_JOB_NUM_NODES).
Result<int> AllocationNodes() {
  const std::string text = Env::Default().GetVariable("SLURM_JOB_NUM_NODES").value_or("");
  int nodes = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), nodes);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || nodes < 1) {
    return Status::InvalidArgument(
        "--launcher srun outside a Slurm allocation needs --nodes or --hosts (no "
        "$SLURM_JOB_NUM_NODES)");
  }
  return nodes;
}

Status CheckOptions(const FleetCommandOptions& o) {
  if (o.transfer_s <= 0 || !std::isfinite(o.transfer_s)) {
    return Status::InvalidArgument("--transfer: must be a positive duration");
  }
  if (o.measure != "bandwidth" && o.measure != "latency" && o.measure != "both") {
    return Status::InvalidArgument(
        fmt::format("--measure: {} is not one of bandwidth, latency, both", Quote(o.measure)));
  }
  if (o.round_trips < 1) return Status::InvalidArgument("--round-trips: must be at least 1");
  for (const double t : {o.start_timeout_s, o.suite_timeout_s, o.pair_timeout_s}) {
    if (t <= 0 || !std::isfinite(t)) {
      return Status::InvalidArgument("--start-timeout, --suite-timeout, --pair-timeout: positive");
    }
  }
  if (o.nodes < 0) return Status::InvalidArgument("--nodes: must not be negative");
  if (o.group_size < 2) return Status::InvalidArgument("--group-size: must be at least 2");
  if (o.collective_timeout_s <= 0 || !std::isfinite(o.collective_timeout_s)) {
    return Status::InvalidArgument("--collective-timeout: must be a positive duration");
  }
  return Status::Ok();
}

// A directory of its own under $TMPDIR for the mpirun host file; removed with the object.
class WorkDir {
 public:
  static Result<WorkDir> Make() {
    std::string path = Env::Default().TempDirectory() + "/vigil-fleet-XXXXXX";
    if (mkdtemp(path.data()) == nullptr) {
      return Status::IoError(fmt::format("{}: cannot make a directory", path));
    }
    return WorkDir(std::move(path));
  }
  WorkDir(WorkDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir() {
    if (path_.empty()) return;
    unlink((path_ + "/mpirun-hosts").c_str());
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  explicit WorkDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// An empty record of a network benchmark, passed until a pair or group of it failed.
BenchmarkRecord NetworkRecord(std::string_view name) {
  return {std::string(name), "network", BenchStatus::kOk, return_code::kOk, "", 0, {}};
}

// Marks the record failed with `error`, unless it already failed: the first error stands.
void Fail(BenchmarkRecord& record, std::string error) {
  if (!record.error.empty()) return;
  record.status = BenchStatus::kFailed;
  record.return_code = return_code::kFailed;
  record.error = std::move(error);
}

// The network pairs of one node, as metrics of a "net-pair" record: the node sent, the key's
// suffix names the pair (`net-pair/bw_gbps:<node>-<peer>`).
BenchmarkRecord NetPairRecord(const std::string& node,
                              const std::vector<cluster::FleetPairOutcome>& pairs) {
  BenchmarkRecord record = NetworkRecord(cluster::kNetPairBenchmark);
  for (const cluster::FleetPairOutcome& p : pairs) {
    if (p.from != node) continue;
    const std::string pair = fmt::format("{}-{}", p.from, p.to);
    if (p.gbps >= 0) {
      record.metrics.push_back(
          {MetricKey{record.name, fmt::format("{}:{}", cluster::kPairBandwidthMetric, pair), {}},
           p.gbps,
           "Gbit/s",
           true,
           {p.gbps}});
    }
    if (p.us >= 0) {
      record.metrics.push_back(
          {MetricKey{record.name, fmt::format("{}:{}", cluster::kPairLatencyMetric, pair), {}},
           p.us,
           "us",
           false,
           {p.us}});
    }
    for (const cluster::RdmaFigure& f : p.rdma) {
      const auto metric = [&](std::string_view name) {
        return MetricKey{record.name, fmt::format("{}_{}:{}", name, f.device, pair), {}};
      };
      if (f.gbps >= 0) {
        record.metrics.push_back(
            {metric(cluster::kPairRdmaMetric), f.gbps, "Gbit/s", true, {f.gbps}});
      }
      if (f.us >= 0) {
        record.metrics.push_back(
            {metric(cluster::kPairRdmaLatencyMetric), f.us, "us", false, {f.us}});
      }
    }
    if (!p.error.empty()) Fail(record, fmt::format("{}: {}", pair, p.error));
  }
  return record;
}

// The collectives of one node's groups, as metrics of a "net-collective" record named as
// SuperBench names nccl-tests' figures (`net-collective/allreduce_1073741824_busbw`, GB/s): the
// group's figure, the slowest member's.
BenchmarkRecord NetCollectiveRecord(const std::string& node,
                                    const std::vector<cluster::FleetCollectiveOutcome>& all) {
  BenchmarkRecord record = NetworkRecord(cluster::kNetCollectiveBenchmark);
  for (const cluster::FleetCollectiveOutcome& c : all) {
    if (std::find(c.members.begin(), c.members.end(), node) == c.members.end()) continue;
    if (c.busbw_gbs > 0) {
      const std::string metric = fmt::format("{}_{:.0f}_busbw", c.op, c.bytes);
      record.metrics.push_back(
          {MetricKey{record.name, metric, {}}, c.busbw_gbs, "GB/s", true, {c.busbw_gbs}});
    }
    if (!c.error.empty()) {
      Fail(record, fmt::format("{} with {} nodes: {}", c.op, c.members.size(), c.error));
    }
  }
  return record;
}

// Each node's results document: its suite's, or a new one, with its network pairs added.
std::map<std::string, NodeResults> Documents(const cluster::FleetRunOutcome& run,
                                             const std::string& version,
                                             std::vector<std::string>& problems) {
  std::map<std::string, NodeResults> docs;
  for (const cluster::FleetNodeOutcome& n : run.nodes) {
    if (!n.answered) continue;
    NodeResults doc;
    if (!n.document.empty()) {
      Result<NodeResults> parsed = ParseNodeResults(n.document, n.host.name);
      if (!parsed.ok()) {
        problems.push_back(fmt::format("{}: {}", n.host.name, parsed.status().message()));
      } else {
        doc = std::move(*parsed);
      }
    }
    if (doc.node.empty()) {
      doc.node = n.host.name;
      doc.vigil_version = version;
      doc.suite = "network";
    }
    for (BenchmarkRecord record : {NetPairRecord(n.host.name, run.pairs),
                                   NetCollectiveRecord(n.host.name, run.collectives)}) {
      if (!record.metrics.empty() || !record.error.empty()) doc.benchmarks.push_back(record);
    }
    docs[n.host.name] = std::move(doc);
  }
  return docs;
}

// A node's document's file name: its name with anything but letters, digits, '.', '-' and '_'
// as '_' (a name comes from a rank: it must not reach outside the directory).
std::string FileName(const std::string& node) {
  std::string name = node;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  if (name.empty() || name == "." || name == "..") name = "_" + name;
  return name + ".json";
}

Status WriteOutputs(const std::string& dir, const std::map<std::string, NodeResults>& docs,
                    const FleetCommandResult& result) {
  for (const auto& [node, doc] : docs) {
    VIGIL_RETURN_IF_ERROR(WriteNodeResults(dir + "/" + FileName(node), doc));
  }
  std::string pairs;
  for (const cluster::FleetPairOutcome& p : result.run.pairs) {
    Json line = {{"from", p.from}, {"to", p.to}};
    line["bw_gbps"] = p.gbps >= 0 ? Json(p.gbps) : Json();
    line["lat_us"] = p.us >= 0 ? Json(p.us) : Json();
    if (!p.rdma.empty()) {
      Json nics = Json::array();
      for (const cluster::RdmaFigure& f : p.rdma) {
        nics.push_back({{"nic", f.index},
                        {"device", f.device},
                        {"gbps", f.gbps >= 0 ? Json(f.gbps) : Json()},
                        {"us", f.us >= 0 ? Json(f.us) : Json()},
                        {"error", f.error}});
      }
      line["rdma"] = std::move(nics);
    }
    if (!p.error.empty()) line["error"] = p.error;
    pairs += DumpJson(line) + "\n";
  }
  VIGIL_RETURN_IF_ERROR(WriteFileAtomic(dir + "/net-pairs.jsonl", pairs));
  return WriteFileAtomic(dir + "/fleet-run.json", DumpJson(FleetResultJson(result), 2) + "\n");
}

void Upload(const FleetCommandOptions& o, const std::map<std::string, NodeResults>& docs,
            FleetCommandResult& result) {
  Result<std::unique_ptr<server::ReportClient>> client =
      server::ReporterOf(o.report, o.token_file, o.tls);
  for (const auto& [node, doc] : docs) {
    if (!client.ok()) {
      result.uploads_failed.push_back(fmt::format("{}: {}", node, client.status().message()));
      continue;
    }
    const Result<Json> answer = (*client)->Upload(DumpJson(ToJson(doc)));
    if (!answer.ok()) {
      result.uploads_failed.push_back(fmt::format("{}: {}", node, answer.status().message()));
    }
  }
}

int ExitCode(const FleetCommandResult& r) {
  const bool any = std::any_of(r.run.nodes.begin(), r.run.nodes.end(),
                               [](const cluster::FleetNodeOutcome& n) { return n.answered; });
  if (!any) return 3;
  const bool failed =
      std::any_of(r.run.nodes.begin(), r.run.nodes.end(),
                  [](const cluster::FleetNodeOutcome& n) { return !n.error.empty(); });
  const bool pair_failed =
      std::any_of(r.run.pairs.begin(), r.run.pairs.end(),
                  [](const cluster::FleetPairOutcome& p) { return !p.error.empty(); });
  const bool collective_failed =
      std::any_of(r.run.collectives.begin(), r.run.collectives.end(),
                  [](const cluster::FleetCollectiveOutcome& c) { return !c.error.empty(); });
  return failed || pair_failed || collective_failed || !r.culprits.empty() ||
                 !r.run.problems.empty()
             ? 1
             : 0;
}

}  // namespace

Result<std::vector<cluster::NamedCulprit>> LocateCulprits(const cluster::FleetRunOutcome& run) {
  std::map<std::string, int> index;
  cluster::NetworkPairs pairs;
  for (const cluster::FleetNodeOutcome& n : run.nodes) {
    if (!n.answered) continue;
    index[n.host.name] = static_cast<int>(pairs.nodes.size());
    pairs.nodes.push_back(n.host.name);
    pairs.racks.push_back(n.host.rack);
  }
  const bool racks = std::all_of(pairs.racks.begin(), pairs.racks.end(),
                                 [](const std::string& r) { return !r.empty(); });
  if (!racks) pairs.racks.clear();
  // RDMA: each NIC (rail) on its own, NIC i of the sender with NIC i of the receiver.
  for (const cluster::FleetPairOutcome& p : run.pairs) {
    const int a = index.at(p.from), b = index.at(p.to);
    if (p.gbps >= 0) pairs.bandwidth.push_back({a, b, p.gbps});
    if (p.us >= 0) pairs.latency.push_back({a, b, p.us});
    for (const cluster::RdmaFigure& f : p.rdma) {
      if ((f.gbps < 0 && f.us < 0) || f.index < 0) continue;
      for (int i = static_cast<int>(pairs.rdma.size()); i <= f.index; ++i) {
        pairs.rdma.push_back({fmt::format("NIC {}", i), {}, {}});
      }
      cluster::RailPairs& rail = pairs.rdma[static_cast<size_t>(f.index)];
      if (f.gbps >= 0) rail.bandwidth.push_back({a, b, f.gbps});
      if (f.us >= 0) rail.latency.push_back({a, b, f.us});
    }
  }
  return cluster::LocaliseNetwork(pairs);
}

Result<FleetCommandResult> RunFleetCommand(const FleetCommandOptions& o,
                                           const cluster::FleetRunEvents& events,
                                           const std::atomic<bool>& interrupted) {
  VIGIL_RETURN_IF_ERROR(CheckOptions(o));
  cluster::FleetRunOptions run;
  VIGIL_ASSIGN_OR_RETURN(run.launcher, cluster::ParseLauncher(o.launcher));
  VIGIL_ASSIGN_OR_RETURN(run.hosts, ReadHosts(o.hosts));
  VIGIL_ASSIGN_OR_RETURN(run.schedule, ScheduleOf(o.pattern));
  VIGIL_ASSIGN_OR_RETURN(run.collectives.schedule,
                         GroupScheduleOf(o.collective_pattern, o.group_size));
  VIGIL_ASSIGN_OR_RETURN(run.collectives.ops, CollectiveNames(o.collectives));
  VIGIL_ASSIGN_OR_RETURN(run.collectives.bytes,
                         CollectiveBytes("--collective-size", o.collective_size));
  run.collectives.timeout_s = o.collective_timeout_s;
  if (!o.out.empty()) {
    VIGIL_RETURN_IF_ERROR(Env::Default().CreateDirectories(o.out));
    VIGIL_RETURN_IF_ERROR(Env::Default().CheckWritable(o.out + "/fleet-run.json"));
  }
  VIGIL_ASSIGN_OR_RETURN(WorkDir work, WorkDir::Make());
  run.nodes = o.nodes;
  if (run.launcher == cluster::Launcher::kSrun && run.hosts.empty() && run.nodes == 0) {
    VIGIL_ASSIGN_OR_RETURN(run.nodes, AllocationNodes());
  }
  run.launcher_program = o.launcher_program;
  run.launcher_args = o.launcher_args;
  run.vigil_path = o.vigil_path.empty() ? ThisProgramPath() : o.vigil_path;
  run.bind_address = o.bind;
  run.advertise_address = o.advertise;
  run.work_dir = work.path();
  run.suite = o.suite;
  run.suite_args = o.suite_args;
  run.bandwidth = o.measure != "latency";
  run.latency = o.measure != "bandwidth";
  run.transfer_seconds = o.transfer_s;
  run.rdma_bandwidth = o.rdma && run.bandwidth;
  run.rdma_latency = o.rdma && run.latency;
  run.rdma_bw_program = o.rdma_bw_program;
  run.rdma_lat_program = o.rdma_lat_program;
  run.rdma_seconds = o.rdma_s;
  run.rdma_iterations = o.rdma_iterations;
  run.latency_round_trips = o.round_trips;
  run.start_timeout_s = o.start_timeout_s;
  run.suite_timeout_s = o.suite_timeout_s;
  run.pair_timeout_s = o.pair_timeout_s;
  const std::unique_ptr<cluster::CommandRunner> runner = cluster::MakeProcessRunner();
  FleetCommandResult result;
  VIGIL_ASSIGN_OR_RETURN(result.run, cluster::RunFleet(run, *runner, events, interrupted));
  const std::map<std::string, NodeResults> docs =
      Documents(result.run, o.vigil_version, result.run.problems);
  VIGIL_ASSIGN_OR_RETURN(result.culprits, LocateCulprits(result.run));
  if (!o.report.empty()) Upload(o, docs, result);
  result.exit_code = ExitCode(result);
  if (!o.out.empty()) VIGIL_RETURN_IF_ERROR(WriteOutputs(o.out, docs, result));
  return result;
}

std::string FleetResultText(const FleetCommandResult& r) {
  std::string out;
  for (const cluster::FleetNodeOutcome& n : r.run.nodes) {
    std::vector<double> sent;
    for (const cluster::FleetPairOutcome& p : r.run.pairs) {
      if (p.from == n.host.name && p.gbps >= 0) sent.push_back(p.gbps);
    }
    std::sort(sent.begin(), sent.end());
    const std::string bw = sent.empty() ? "-" : fmt::format("{:.3g} Gbit/s", sent[sent.size() / 2]);
    out +=
        fmt::format("{:<24} {:<10} {:<16} {}\n", n.host.name, n.answered ? "answered" : "no answer",
                    bw, n.error.empty() ? (n.document.empty() ? "" : "suite done") : n.error);
  }
  for (const cluster::FleetCollectiveOutcome& c : r.run.collectives) {
    out += fmt::format(
        "collective {} round {} on {} ({} GPUs): {}\n", c.op, c.round, fmt::join(c.members, ","),
        c.world, c.error.empty() ? fmt::format("{:.4g} GB/s bus bandwidth", c.busbw_gbs) : c.error);
  }
  for (const auto& [measure, c] : r.culprits) {
    out += fmt::format("culprit: {} {} ({}, {}): {}\n", cluster::CulpritKindName(c.kind), c.subject,
                       c.direction, measure, c.evidence);
  }
  for (const std::string& p : r.run.problems) out += "problem: " + p + "\n";
  if (!r.run.launcher_error.empty()) out += "launcher: " + r.run.launcher_error + "\n";
  for (const std::string& u : r.uploads_failed) out += "upload failed: " + u + "\n";
  const size_t answered =
      std::count_if(r.run.nodes.begin(), r.run.nodes.end(),
                    [](const cluster::FleetNodeOutcome& n) { return n.answered; });
  out += fmt::format("{} of {} nodes answered, {} pairs in {} rounds, {} culprit{}\n", answered,
                     r.run.nodes.size(), r.run.pairs.size(), r.run.rounds, r.culprits.size(),
                     r.culprits.size() == 1 ? "" : "s");
  return out;
}

Json FleetResultJson(const FleetCommandResult& r) {
  Json nodes = Json::array();
  for (const cluster::FleetNodeOutcome& n : r.run.nodes) {
    nodes.push_back({{"node", n.host.name},
                     {"rack", n.host.rack},
                     {"answered", n.answered},
                     {"suite_document", !n.document.empty()},
                     {"error", n.error}});
  }
  Json culprits = Json::array();
  for (const cluster::NamedCulprit& c : r.culprits) culprits.push_back(cluster::CulpritJson(c));
  Json collectives = Json::array();
  for (const cluster::FleetCollectiveOutcome& c : r.run.collectives) {
    Json one = {{"round", c.round}, {"members", c.members}, {"gpus", c.world},
                {"op", c.op},       {"bytes", c.bytes},     {"error", c.error}};
    one["busbw_gbs"] = c.busbw_gbs > 0 ? Json(c.busbw_gbs) : Json();
    collectives.push_back(std::move(one));
  }
  return {{"nodes", nodes},
          {"pairs", r.run.pairs.size()},
          {"rounds", r.run.rounds},
          {"collectives", collectives},
          {"collective_rounds", r.run.collective_rounds},
          {"culprits", culprits},
          {"problems", r.run.problems},
          {"launcher_exit", r.run.launcher_exit},
          {"launcher_error", r.run.launcher_error},
          {"uploads_failed", r.uploads_failed},
          {"exit_code", r.exit_code}};
}

Status RunFleetRankCommand(const FleetRankCommandOptions& o, const std::atomic<bool>& interrupted) {
  const auto get = [](const char* name) {
    const std::optional<std::string> v = Env::Default().GetVariable(name);
    return v.value_or("");
  };
  cluster::FleetRankOptions rank;
  rank.coordinator = o.coordinator;
  rank.token = get("VIGIL_FLEET_TOKEN");
  rank.node = cluster::RankNodeName(o.node, get);
  rank.rank = cluster::LauncherRank(get);
  rank.bind_address = o.bind;
  const std::string self = o.vigil_path.empty() ? ThisProgramPath() : o.vigil_path;
  const std::string dir = o.work_dir.empty() ? Env::Default().TempDirectory() : o.work_dir;
  const std::unique_ptr<cluster::CommandRunner> runner = cluster::MakeProcessRunner();
  const auto run_suite = [&](const nlohmann::json& task) -> Result<std::string> {
    const std::string out = fmt::format("{}/vigil-fleet-{}-{}.json", dir, rank.node, getpid());
    cluster::CommandSpec spec;
    spec.argv = {self,     "run",     "--suite", task.value("suite", std::string("quick")),
                 "--node", rank.node, "--out",   out};
    if (const auto args = task.find("args"); args != task.end() && args->is_array()) {
      for (const auto& a : *args) {
        if (a.is_string()) spec.argv.push_back(a.get<std::string>());
      }
    }
    spec.timeout_s = cluster::NumberField(task, "timeout_s", 3600);
    VIGIL_ASSIGN_OR_RETURN(const cluster::CommandOutput ran, runner->Run(spec));
    if (ran.exit_code != 0 && ran.exit_code != 1) {
      return Status::IoError(
          fmt::format("vigil run exited with {}: {}", ran.exit_code, cluster::LastOutput(ran)));
    }
    Result<std::string> text = Env::Default().ReadFile(out);
    (void)Env::Default().RemoveFile(out);
    return text;
  };
  const auto run_collective = [&](const nlohmann::json& task) -> Result<nlohmann::json> {
    VIGIL_ASSIGN_OR_RETURN(const cluster::CommandSpec spec, FleetNcclCommand(self, task));
    VIGIL_ASSIGN_OR_RETURN(const cluster::CommandOutput ran, runner->Run(spec));
    if (ran.exit_code != 0) {
      return Status::IoError(fmt::format("vigil fleet nccl exited with {}: {}", ran.exit_code,
                                         cluster::LastOutput(ran)));
    }
    return LastJsonLine(ran.out);
  };
  return cluster::RunFleetRank(rank, {run_suite, run_collective}, interrupted);
}

Result<nlohmann::json> LastJsonLine(std::string_view out) {
  std::string_view rest = out;
  while (!rest.empty()) {
    const size_t end = rest.find_last_not_of("\n");
    if (end == std::string_view::npos) break;
    rest = rest.substr(0, end + 1);
    const size_t start = rest.rfind('\n') == std::string_view::npos ? 0 : rest.rfind('\n') + 1;
    nlohmann::json line = nlohmann::json::parse(rest.substr(start), nullptr, false);
    if (line.is_object()) return line;
    rest = rest.substr(0, start);
  }
  return Status::Internal("vigil fleet nccl printed no JSON object");
}

Result<cluster::CommandSpec> FleetNcclCommand(const std::string& vigil,
                                              const nlohmann::json& task) {
  cluster::CommandSpec spec;
  spec.argv = {vigil, "fleet", "nccl"};
  spec.timeout_s = cluster::NumberField(task, "timeout_s", 300);
  if (cluster::TextField(task, "kind") == "collective-prepare") {
    spec.argv.emplace_back("--count");
    return spec;
  }
  const std::string comm_id = cluster::TextField(task, "comm_id");
  if (comm_id.empty()) return Status::InvalidArgument("a collective task without comm_id");
  spec.env.push_back("NCCL_COMM_ID=" + comm_id);
  const auto number = [&](const char* key) {
    return fmt::format("{:.0f}", cluster::NumberField(task, key, 0));
  };
  spec.argv.insert(spec.argv.end(),
                   {"--ranks", number("ranks"), "--first-rank", number("first_rank"), "--world",
                    number("world"), "--size", number("bytes"), "--warmup", number("warmup"),
                    "--iterations", number("iterations"), "--samples", number("samples")});
  if (const auto ops = task.find("ops"); ops != task.end() && ops->is_array()) {
    for (const auto& op : *ops) {
      if (op.is_string()) spec.argv.insert(spec.argv.end(), {"--op", op.get<std::string>()});
    }
  }
  return spec;
}

Result<Json> RunFleetNccl(const FleetNcclOptions& o) {
  if (o.count) {
    VIGIL_ASSIGN_OR_RETURN(const int gpus, gpu::DeviceCount());
    VIGIL_ASSIGN_OR_RETURN(const std::string nccl, gpu::NcclVersion());
    return Json{{"ranks", gpus}, {"nccl", nccl}};
  }
  NodeCollectiveSpec spec;
  spec.ranks = o.ranks;
  spec.first_rank = o.first_rank;
  spec.world = o.world;
  for (const std::string& name : o.ops) {
    VIGIL_ASSIGN_OR_RETURN(const gpu::Collective op, ParseCollective(name));
    spec.ops.push_back(op);
  }
  VIGIL_ASSIGN_OR_RETURN(const double bytes, CollectiveBytes("--size", o.size));
  spec.bytes = static_cast<size_t>(bytes);
  spec.warmup = o.warmup;
  spec.iterations = o.iterations;
  spec.samples = o.samples;
  if (o.ranks < 1 || o.first_rank < 0 || o.world < o.first_rank + o.ranks || o.iterations < 1 ||
      o.samples < 1 || o.warmup < 0) {
    return Status::InvalidArgument(
        "--ranks, --first-rank, --world, --warmup, --iterations, --samples: this node's ranks "
        "inside the world and counts of one or more");
  }
  VIGIL_ASSIGN_OR_RETURN(const std::vector<double> busbw, RunNodeCollective(spec));
  return Json{{"ranks", o.ranks}, {"busbw_gbs", busbw}};
}

}  // namespace vigil::agent
