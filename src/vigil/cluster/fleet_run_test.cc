#include "vigil/cluster/fleet_run.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "vigil/cluster/fleet_rank.h"
#include "vigil/core/mutex.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::cluster {
namespace {

// A launcher in this process: each node a thread running the rank, as `vigil fleet rank` would.
// Nodes in `absent` never start; `suite_delay_s` is how long each suite takes.
class ThreadLauncher final : public CommandRunner {
 public:
  std::vector<std::string> nodes;
  std::vector<std::string> absent;
  double suite_delay_s = 0;
  std::string slow_suite_node;               // its suite takes suite_delay_s; the others' none
  std::map<std::string, std::string> sysfs;  // a node's RDMA ports, when it has any
  CommandSpec seen;
  // Collectives: the GPUs each node brings (2 when not named), its bus bandwidth (100 GB/s for
  // the first op, 100 / k for the k-th), a node whose prepare fails, one whose run takes
  // collective_delay_s; and every run as (node, comm_id, first_rank, world).
  std::map<std::string, int> gpus;
  std::map<std::string, double> speed;
  std::string failing_prepare;
  std::string failing_run;                  // fails its run at once
  std::map<std::string, std::string> nccl;  // a node's NCCL version, when not 2.28.3
  std::string slow_collective_node;  // answers after collective_delay_s (with an error when a
  double collective_delay_s = 0;     // failing_run is set: it waited for that member)
  struct Ran {
    std::string node, comm_id;
    int first_rank, world;
  };
  Mutex mu;
  std::vector<Ran> ran GUARDED_BY(mu);

  Result<nlohmann::json> Collective(const std::string& node, const nlohmann::json& task) {
    const int brings = gpus.count(node) > 0 ? gpus.at(node) : 2;
    if (task["kind"] == "collective-prepare") {
      if (node == failing_prepare) return Status::Unavailable("no NVIDIA driver");
      return nlohmann::json{{"ranks", brings},
                            {"nccl", nccl.count(node) > 0 ? nccl.at(node) : "2.28.3"}};
    }
    if (node == failing_run) return Status::Internal("8 sums wrong on GPU 3");
    if (node == slow_collective_node) {
      std::this_thread::sleep_for(std::chrono::duration<double>(collective_delay_s));
      if (!failing_run.empty()) return Status::Internal("NCCL: remote process exited");
    }
    {
      MutexLock lock(mu);
      ran.push_back({node, task["comm_id"], task["first_rank"], task["world"]});
    }
    const double v = speed.count(node) > 0 ? speed.at(node) : 100;
    nlohmann::json busbw = nlohmann::json::array();
    for (size_t k = 0; k < task["ops"].size(); ++k) busbw.push_back(v / static_cast<double>(k + 1));
    return nlohmann::json{{"ranks", brings}, {"busbw_gbs", busbw}};
  }

  Result<CommandOutput> Run(const CommandSpec& spec) override {
    seen = spec;
    const auto at = std::find(spec.argv.begin(), spec.argv.end(), "--coordinator");
    if (at == spec.argv.end() || at + 1 == spec.argv.end()) return Status::Internal("no url");
    std::string token;
    for (const std::string& e : spec.env) {
      if (e.rfind("VIGIL_FLEET_TOKEN=", 0) == 0) token = e.substr(18);
    }
    std::vector<std::thread> ranks;
    std::atomic<bool> stop{false};
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (std::count(absent.begin(), absent.end(), nodes[i]) > 0) continue;
      FleetRankOptions o{*(at + 1), token, nodes[i], static_cast<int>(i), "127.0.0.1", 5};
      if (sysfs.count(nodes[i]) > 0) o.sysfs_root = sysfs.at(nodes[i]);
      const double delay = nodes[i] == slow_suite_node ? suite_delay_s : 0;
      ranks.emplace_back([this, o, delay, &stop] {
        const auto suite = [&](const nlohmann::json& task) -> Result<std::string> {
          std::this_thread::sleep_for(std::chrono::duration<double>(delay));
          return nlohmann::json{
              {"schema", "vigil.results/1"}, {"node", o.node}, {"suite", task.value("suite", "")}}
              .dump();
        };
        const auto collective = [&](const nlohmann::json& task) {
          return Collective(o.node, task);
        };
        (void)RunFleetRank(o, {suite, collective}, stop);
      });
    }
    for (std::thread& t : ranks) t.join();
    return CommandOutput{0, "", ""};
  }
};

// Every pair of the hosts, one pair per round.
Result<std::vector<PairRound>> EveryPair(const std::vector<FleetHost>& hosts) {
  std::vector<PairRound> rounds;
  for (int a = 0; a < static_cast<int>(hosts.size()); ++a) {
    for (int b = a + 1; b < static_cast<int>(hosts.size()); ++b) rounds.push_back({{a, b}});
  }
  return rounds;
}

class FleetRunTest : public ::testing::Test {
 protected:
  FleetRunOptions Options(const std::vector<std::string>& names) {
    FleetRunOptions o;
    for (const std::string& n : names) o.hosts.push_back({n, "", 0});
    o.vigil_path = "/usr/bin/vigil";
    o.bind_address = "127.0.0.1";
    o.advertise_address = "127.0.0.1";
    o.work_dir = dir_.path();
    o.schedule = EveryPair;
    o.transfer_seconds = 0.02;
    o.latency_round_trips = 20;
    o.start_timeout_s = 3;
    o.pair_timeout_s = 10;
    launcher_.nodes = names;
    return o;
  }

  using Ports = std::vector<std::pair<std::string, std::string>>;
  // An RDMA-only run (RdmaOnly, below) of two nodes, n0 and n1, with these ports (GiveRdmaPorts):
  // its pairs, none when it failed.
  std::vector<FleetPairOutcome> TwoNodeRdma(int port_base, bool latency, const Ports& n0,
                                            const Ports& n1);

  testing::TempDir dir_;
  ThreadLauncher launcher_;
  std::atomic<bool> interrupted_{false};
};

TEST_F(FleetRunTest, EveryNodeRunsItsSuiteAndEveryPairIsMeasuredBothWays) {
  FleetRunOptions o = Options({"n0", "n1", "n2"});
  o.suite = "quick";
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->nodes.size(), 3u);
  for (const FleetNodeOutcome& n : r->nodes) {
    EXPECT_TRUE(n.answered) << n.host.name;
    EXPECT_EQ(n.error, "") << n.host.name;
    EXPECT_NE(n.document.find("\"node\":\"" + n.host.name + "\""), std::string::npos);
  }
  EXPECT_EQ(r->rounds, 3);
  ASSERT_EQ(r->pairs.size(), 6u);
  for (const FleetPairOutcome& p : r->pairs) {
    EXPECT_GT(p.gbps, 0) << p.from << "->" << p.to << ": " << p.error;
    EXPECT_GT(p.us, 0) << p.from << "->" << p.to;
  }
  EXPECT_EQ(r->launcher_exit, 0);
  EXPECT_EQ(r->launcher_error, "");
  // The token reaches the ranks through the environment, never the command line.
  for (const std::string& e : launcher_.seen.env) {
    if (e.rfind("VIGIL_FLEET_TOKEN=", 0) != 0) continue;
    for (const std::string& a : launcher_.seen.argv)
      EXPECT_EQ(a.find(e.substr(18)), std::string::npos);
  }
}

TEST_F(FleetRunTest, ANodeThatNeverStartsIsNamedAndTheOthersAreMeasured) {
  FleetRunOptions o = Options({"n0", "n1", "n2"});
  o.start_timeout_s = 1;
  launcher_.absent = {"n1"};
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->nodes[1].answered);
  EXPECT_EQ(r->nodes[1].error, "did not register within 1 s");
  ASSERT_EQ(r->pairs.size(), 2u);
  EXPECT_EQ(r->pairs[0].from, "n0");
  EXPECT_EQ(r->pairs[0].to, "n2");
  EXPECT_GT(r->pairs[0].gbps, 0);
}

TEST_F(FleetRunTest, ASuiteOverItsTimeLosesItsNodeAndKeepsTheOthers) {
  FleetRunOptions o = Options({"n0", "n1", "n2"});
  o.suite = "quick";
  o.suite_timeout_s = 0.3;
  launcher_.slow_suite_node = "n2";
  launcher_.suite_delay_s = 1.5;
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->nodes[2].error, "suite: did not answer within 0.3 s");
  EXPECT_EQ(r->nodes[2].document, "");
  EXPECT_NE(r->nodes[0].document, "");
  ASSERT_EQ(r->pairs.size(), 2u);  // n0 and n1 only
}

TEST_F(FleetRunTest, ALauncherThatCannotStartIsReportedAtOnce) {
  FleetRunOptions o = Options({"n0", "n1"});
  o.start_timeout_s = 60;
  o.launcher_program = "/nonexistent/mpirun";
  const std::unique_ptr<CommandRunner> real = MakeProcessRunner();
  const auto start = std::chrono::steady_clock::now();
  const Result<FleetRunOutcome> r = RunFleet(o, *real, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30);
  EXPECT_FALSE(r->nodes[0].answered);
  EXPECT_EQ(r->nodes[0].error, "did not register: the launcher ended first");
  EXPECT_NE(r->launcher_error.find("/nonexistent/mpirun"), std::string::npos) << r->launcher_error;
}

TEST_F(FleetRunTest, TwoRanksWithOneNameAreAProblem) {
  FleetRunOptions o = Options({"n0", "n1"});
  o.start_timeout_s = 1;
  launcher_.nodes = {"n0", "n0", "n1"};
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->problems.size(), 1u);
  EXPECT_NE(r->problems[0].find("node n0 registered twice"), std::string::npos) << r->problems[0];
}

// Groups of two consecutive hosts, one round.
Result<std::vector<GroupRound>> Pairs(const std::vector<FleetHost>& hosts) {
  GroupRound round;
  for (int i = 0; i + 1 < static_cast<int>(hosts.size()); i += 2) round.push_back({i, i + 1});
  return std::vector<GroupRound>{round};
}

// Collectives only: an all-reduce in groups of two, no pair tests.
FleetRunOptions CollectiveOnly(FleetRunOptions o) {
  o.schedule = nullptr;
  o.collectives.schedule = Pairs;
  o.collectives.ops = {"allreduce"};
  o.collectives.timeout_s = 10;
  return o;
}

TEST_F(FleetRunTest, EachGroupRunsItsCollectivesWithConsecutiveRanksFromItsFirstMember) {
  FleetRunOptions o = CollectiveOnly(Options({"n0", "n1", "n2", "n3"}));
  o.collectives.ops = {"allreduce", "alltoall"};
  launcher_.gpus = {{"n1", 8}, {"n2", 4}, {"n3", 3}};
  launcher_.speed = {{"n3", 40}};
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->collective_rounds, 1);
  ASSERT_EQ(r->collectives.size(), 4u);  // two groups x two ops
  const FleetCollectiveOutcome& a = r->collectives[0];
  EXPECT_EQ(a.members, (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(a.world, 10);
  EXPECT_EQ(a.bytes, 1073741800);  // whole floats for each of 10 ranks
  EXPECT_EQ(a.op, "allreduce");
  EXPECT_DOUBLE_EQ(a.busbw_gbs, 100);
  EXPECT_DOUBLE_EQ(r->collectives[1].busbw_gbs, 50);
  EXPECT_EQ(r->collectives[1].op, "alltoall");
  // The group's figure is its slowest member's.
  EXPECT_EQ(r->collectives[2].members, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(r->collectives[2].world, 7);
  EXPECT_DOUBLE_EQ(r->collectives[2].busbw_gbs, 40);
  for (const FleetCollectiveOutcome& c : r->collectives) EXPECT_EQ(c.error, "");

  MutexLock lock(launcher_.mu);
  std::map<std::string, ThreadLauncher::Ran> by_node;
  for (const ThreadLauncher::Ran& x : launcher_.ran) by_node[x.node] = x;
  ASSERT_EQ(by_node.size(), 4u);
  EXPECT_EQ(by_node["n0"].first_rank, 0);
  EXPECT_EQ(by_node["n1"].first_rank, 2);
  EXPECT_EQ(by_node["n1"].world, 10);
  EXPECT_EQ(by_node["n2"].first_rank, 0);
  EXPECT_EQ(by_node["n3"].first_rank, 4);
  // Every member bootstraps from its first member's address and one port.
  EXPECT_EQ(by_node["n0"].comm_id, by_node["n1"].comm_id);
  EXPECT_EQ(by_node["n2"].comm_id, by_node["n3"].comm_id);
  EXPECT_NE(by_node["n0"].comm_id, by_node["n2"].comm_id);
  EXPECT_EQ(by_node["n0"].comm_id.rfind("127.0.0.1:", 0), 0u) << by_node["n0"].comm_id;
}

TEST_F(FleetRunTest, AMemberThatCannotPrepareFailsItsGroupAndTheOtherGroupRuns) {
  FleetRunOptions o = CollectiveOnly(Options({"n0", "n1", "n2", "n3"}));
  launcher_.failing_prepare = "n1";
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->collectives.size(), 2u);
  EXPECT_EQ(r->collectives[0].error, "n1: no NVIDIA driver");
  EXPECT_EQ(r->collectives[0].busbw_gbs, -1);
  EXPECT_EQ(r->collectives[1].error, "");
  EXPECT_DOUBLE_EQ(r->collectives[1].busbw_gbs, 100);
  MutexLock lock(launcher_.mu);
  for (const ThreadLauncher::Ran& x : launcher_.ran) EXPECT_TRUE(x.node == "n2" || x.node == "n3");
}

TEST_F(FleetRunTest, AFailedGroupNamesTheMemberThatFailedFirstNotTheOnesWaitingForIt) {
  FleetRunOptions o = CollectiveOnly(Options({"n0", "n1", "n2"}));
  o.collectives.schedule = [](const std::vector<FleetHost>&) {
    return Result<std::vector<GroupRound>>(std::vector<GroupRound>{{{0, 1, 2}}});
  };
  launcher_.failing_run = "n2";
  launcher_.slow_collective_node = "n0";  // the first member, which waited for n2
  launcher_.collective_delay_s = 0.5;
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_EQ(r->collectives[0].error, "n2: 8 sums wrong on GPU 3 (then 1 more member)");
  EXPECT_EQ(r->collectives[0].world, 0);
}

TEST_F(FleetRunTest, MembersWithAnotherNcclVersionFailTheirGroupBeforeItRuns) {
  FleetRunOptions o = CollectiveOnly(Options({"n0", "n1"}));
  launcher_.nccl = {{"n1", "2.27.7"}};
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_EQ(r->collectives[0].error, "n1: NCCL 2.27.7, where n0 has 2.28.3");
  MutexLock lock(launcher_.mu);
  EXPECT_TRUE(launcher_.ran.empty());
}

TEST_F(FleetRunTest, AMemberPastItsTimeFailsItsGroupAndIsLost) {
  FleetRunOptions o = CollectiveOnly(Options({"n0", "n1"}));
  o.collectives.timeout_s = 0.2;
  o.collectives.grace_s = 0.2;
  launcher_.slow_collective_node = "n1";
  launcher_.collective_delay_s = 1.5;
  const auto start = std::chrono::steady_clock::now();
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30);
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_NE(r->collectives[0].error.find("n1: did not answer within"), std::string::npos)
      << r->collectives[0].error;
  EXPECT_EQ(r->nodes[1].error, "stopped answering during the network tests");
  EXPECT_EQ(r->nodes[0].error, "");
}

// Stand-ins for ib_write_bw and ib_write_lat (rdma.cc's arguments: a bandwidth server has 12, its
// client 13; a latency server 9, its client 10): the server writes its device into a marker for
// its TCP port while it runs; a client finds it or cannot connect yet; a pair is slow when either
// end's device is named slow* (a quarter of the bandwidth), late when late* (four times the
// latency); a latency client on a nolat* device prints no table, and a server on a badsrv* device
// fails as it ends, its client measured. One pair at a time: every node here shares one address.
void FakePerftest(const testing::TempDir& dir) {
  const std::string serve =
      "  echo $dev > $d/ready-$tcp.tmp; mv $d/ready-$tcp.tmp $d/ready-$tcp; sleep 0.4\n"
      "  rm -f $d/ready-$tcp\n"
      "  case $dev in badsrv*) echo 'ibv_dereg_mr failed' >&2; exit 1;; esac; exit 0\n"
      "fi\n";
  const std::string connect =
      " ] || { echo \"Couldn't connect to $tcp\" >&2; exit 1; }\n"
      "peer=$(cat $d/ready-$tcp)\n";
  dir.Write("ib_write_bw", "#!/bin/sh\nd=" + dir.path() +
                               "; dev=$2; tcp=$6\nif [ $# -eq 12 ]; then\n" + serve +
                               "[ -e $d/ready-$tcp" + connect +
                               "bw=100; case \"$dev $peer\" in *slow*) bw=25;; esac\n"
                               "echo ' #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec]'\n"
                               "echo \" 1048576 100 0 $bw\"\n");
  dir.Write("ib_write_lat",
            "#!/bin/sh\nd=" + dir.path() + "; dev=$2; tcp=$6\nif [ $# -eq 9 ]; then\n" + serve +
                "[ -e $d/ready-$tcp" + connect +
                "[ \"$8\" = 500 ] || { echo \"-n $8, not --rdma-iterations\" >&2; exit 1; }\n"
                "case $dev in nolat*) echo 'ibv_post_send failed'; exit 0;; esac\n"
                "us=2; case \"$dev $peer\" in *late*) us=8;; esac\n"
                "echo ' #bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec]'\n"
                "echo \" 2 $8 1 9 $us 3\"\n");
  chmod(dir.File("ib_write_bw").c_str(), 0755);
  chmod(dir.File("ib_write_lat").c_str(), 0755);
}

// RDMA only (bandwidth, and latency when asked), through the stand-ins, their TCP ports from
// `port_base`.
FleetRunOptions RdmaOnly(FleetRunOptions o, const testing::TempDir& dir, int port_base,
                         bool latency = false) {
  o.bandwidth = o.latency = false;
  o.rdma_bandwidth = true;
  o.rdma_latency = latency;
  o.rdma_bw_program = dir.File("ib_write_bw");
  o.rdma_lat_program = dir.File("ib_write_lat");
  o.rdma_seconds = 1;
  o.rdma_iterations = 500;
  o.rdma_port_base = port_base;
  FakePerftest(dir);
  return o;
}

// Gives `node` the RDMA ports (first port of each device) with their sysfs states, in order.
void GiveRdmaPorts(const testing::TempDir& dir, ThreadLauncher& launcher, const std::string& node,
                   const std::vector<std::pair<std::string, std::string>>& states) {
  for (const auto& [device, state] : states) {
    dir.Write("sys-" + node + "/class/infiniband/" + device + "/ports/1/state", state + "\n");
  }
  launcher.sysfs[node] = dir.File("sys-" + node);
}

std::vector<FleetPairOutcome> FleetRunTest::TwoNodeRdma(int port_base, bool latency,
                                                        const Ports& n0, const Ports& n1) {
  const FleetRunOptions o = RdmaOnly(Options({"n0", "n1"}), dir_, port_base, latency);
  GiveRdmaPorts(dir_, launcher_, "n0", n0);
  GiveRdmaPorts(dir_, launcher_, "n1", n1);
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->pairs : std::vector<FleetPairOutcome>{};
}

TEST_F(FleetRunTest, RdmaMeasuresEveryNicOfEveryPairNicToNic) {
  FleetRunOptions o = RdmaOnly(Options({"n0", "n1", "n2"}), dir_, 32100, /*latency=*/true);
  for (const std::string n : {"n0", "n1", "n2"}) {
    // n2's second NIC is the slow one (sorted after mlx5_0, as NIC 1), n1's first the late one.
    GiveRdmaPorts(dir_, launcher_, n,
                  {{n == "n1" ? "late_0" : "mlx5_0", "4: ACTIVE"},
                   {n == "n2" ? "slowx_1" : "mlx5_1", "4: ACTIVE"}});
  }
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->pairs.size(), 6u);
  for (const FleetPairOutcome& p : r->pairs) {
    EXPECT_EQ(p.error, "") << p.from << "->" << p.to;
    EXPECT_EQ(p.gbps, -1);  // the TCP test was not asked for
    ASSERT_EQ(p.rdma.size(), 2u) << p.from << "->" << p.to;
    EXPECT_EQ(p.rdma[0].index, 0);
    EXPECT_EQ(p.rdma[0].device, p.from == "n1" ? "late_0" : "mlx5_0");
    EXPECT_EQ(p.rdma[0].gbps, 100) << p.from << "->" << p.to;
    const bool n1 = p.from == "n1" || p.to == "n1";
    EXPECT_EQ(p.rdma[0].us, n1 ? 8 : 2) << p.from << "->" << p.to;
    const bool n2 = p.from == "n2" || p.to == "n2";
    EXPECT_EQ(p.rdma[1].device, p.from == "n2" ? "slowx_1" : "mlx5_1");
    EXPECT_EQ(p.rdma[1].gbps, n2 ? 25 : 100) << p.from << "->" << p.to;
    EXPECT_EQ(p.rdma[1].us, 2) << p.from << "->" << p.to;
  }
}

TEST_F(FleetRunTest, ADownNicIsNamedAndTheOtherNicsKeepTheirRails) {
  const std::vector<FleetPairOutcome> pairs =
      TwoNodeRdma(32200, false, {{"mlx5_0", "4: ACTIVE"}, {"mlx5_1", "4: ACTIVE"}},
                  {{"mlx5_0", "1: DOWN"}, {"mlx5_1", "4: ACTIVE"}});
  ASSERT_EQ(pairs.size(), 2u);
  for (const FleetPairOutcome& p : pairs) {
    ASSERT_EQ(p.rdma.size(), 2u) << p.from << "->" << p.to;
    EXPECT_EQ(p.rdma[0].gbps, -1);
    EXPECT_EQ(p.rdma[0].error, "n1's mlx5_0 is DOWN");
    EXPECT_EQ(p.rdma[1].index, 1);  // NIC 1 with NIC 1, not with the next active one
    EXPECT_EQ(p.rdma[1].device, "mlx5_1");
    EXPECT_EQ(p.rdma[1].gbps, 100) << p.rdma[1].error;
    EXPECT_EQ(p.error, "rdma NIC 0 (mlx5_0): n1's mlx5_0 is DOWN");
  }
}

TEST_F(FleetRunTest, ALatencyThatFailsKeepsTheNicsBandwidthAndSaysWhy) {
  const std::vector<FleetPairOutcome> pairs =
      TwoNodeRdma(32300, /*latency=*/true, {{"nolat_0", "4: ACTIVE"}}, {{"mlx5_0", "4: ACTIVE"}});
  ASSERT_EQ(pairs.size(), 2u);
  for (const FleetPairOutcome& p : pairs) {
    ASSERT_EQ(p.rdma.size(), 1u) << p.from << "->" << p.to;
    EXPECT_EQ(p.rdma[0].gbps, 100) << p.rdma[0].error;
    const bool broken = p.from == "n0";
    EXPECT_EQ(p.rdma[0].us, broken ? -1 : 2) << p.rdma[0].error;
    EXPECT_EQ(p.error, broken ? "rdma NIC 0 (nolat_0): latency: ib_write_lat: no "
                                "\"t_typical[usec]\" table in its output"
                              : "");
  }
}

TEST_F(FleetRunTest, AReceiversErrorNamesOnlyTheNicsWithoutAFigure) {
  const std::vector<FleetPairOutcome> pairs =
      TwoNodeRdma(32400, false, {{"mlx5_0", "4: ACTIVE"}, {"mlx5_1", "4: ACTIVE"}},
                  {{"mlx5_0", "4: ACTIVE"}, {"badsrv_1", "4: ACTIVE"}});
  ASSERT_EQ(pairs.size(), 2u);
  for (const FleetPairOutcome& p : pairs) {
    ASSERT_EQ(p.rdma.size(), 2u) << p.from << "->" << p.to;
    for (const RdmaFigure& f : p.rdma) {
      EXPECT_EQ(f.gbps, 100) << p.from << "->" << p.to << " " << f.error;
      EXPECT_EQ(f.error, "") << p.from << "->" << p.to;
    }
  }
}

TEST_F(FleetRunTest, RdmaOnNodesWithoutRdmaIsAPairErrorNamingWhy) {
  FleetRunOptions o = Options({"n0", "n1"});
  o.bandwidth = o.latency = false;
  o.rdma_bandwidth = true;
  launcher_.sysfs = {{"n0", dir_.File("none")}, {"n1", dir_.File("none")}};
  const Result<FleetRunOutcome> r = RunFleet(o, launcher_, {}, interrupted_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->pairs.size(), 2u);
  EXPECT_EQ(r->pairs[0].error, "rdma NIC 0 (-): neither node has an RDMA port");
}

TEST_F(FleetRunTest, MpirunWithoutHostsIsBadUsage) {
  FleetRunOptions o = Options({});
  EXPECT_EQ(RunFleet(o, launcher_, {}, interrupted_).status().code(), StatusCode::kInvalidArgument);
}

TEST(LauncherArgvTest, MpirunOneRankPerHostAndTheTokenByEnvironment) {
  FleetRunOptions o;
  o.hosts = {{"a", "", 1}, {"b", "", 2}};
  o.vigil_path = "/opt/vigil";
  o.launcher_args = {"--mca", "btl", "tcp,self"};
  EXPECT_EQ(LauncherArgv(o, "http://10.0.0.1:5000", "/tmp/h"),
            (std::vector<std::string>{"mpirun", "--hostfile", "/tmp/h", "-np", "2", "--map-by",
                                      "node", "-x", "VIGIL_FLEET_TOKEN", "-x", "VIGIL_FLEET_HOSTS",
                                      "--mca", "btl", "tcp,self", "/opt/vigil", "fleet", "rank",
                                      "--coordinator", "http://10.0.0.1:5000"}));
}

TEST(LauncherArgvTest, SrunOneTaskPerNode) {
  FleetRunOptions o;
  o.launcher = Launcher::kSrun;
  o.nodes = 4;
  o.vigil_path = "vigil";
  EXPECT_EQ(
      LauncherArgv(o, "http://h:1", ""),
      (std::vector<std::string>{"srun", "--nodes", "4", "--ntasks", "4", "--ntasks-per-node=1",
                                "vigil", "fleet", "rank", "--coordinator", "http://h:1"}));
  o.hosts = {{"x", "", 1}, {"y", "", 2}};
  EXPECT_EQ(LauncherArgv(o, "http://h:1", "")[5], "--ntasks-per-node=1");
  EXPECT_EQ(LauncherArgv(o, "http://h:1", "")[6], "--nodelist=x,y");
}

TEST(LauncherArgvTest, ParseLauncher) {
  EXPECT_EQ(*ParseLauncher("srun"), Launcher::kSrun);
  EXPECT_EQ(ParseLauncher("ssh").status().message(),
            "--launcher: \"ssh\" is not one of mpirun, srun");
}

TEST(FleetRankTest, TheNodeNameComesFromTheRunsHostListUnderMpirun) {
  const auto env = [](std::map<std::string, std::string> vars) {
    return [vars](const char* name) {
      const auto it = vars.find(name);
      return it == vars.end() ? std::string() : it->second;
    };
  };
  EXPECT_EQ(RankNodeName("given", env({})), "given");
  EXPECT_EQ(RankNodeName("", env({{"VIGIL_FLEET_HOSTS", "a,b,c"}, {"OMPI_COMM_WORLD_RANK", "2"}})),
            "c");
  EXPECT_EQ(RankNodeName("", env({{"SLURMD_NODENAME", "gpu7"}, {"SLURM_PROCID", "0"}})), "gpu7");
  EXPECT_FALSE(RankNodeName("", env({})).empty());  // the host name
  EXPECT_EQ(LauncherRank(env({{"SLURM_PROCID", "5"}})), 5);
  EXPECT_EQ(LauncherRank(env({{"PMI_RANK", "x"}})), -1);
}

}  // namespace
}  // namespace vigil::cluster
