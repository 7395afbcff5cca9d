// `vigil fleet run` on real launchers. Several hosts are network namespaces joined by veth pairs to
// a bridge; Debian's OpenMPI mpirun starts `vigil fleet rank` in each (its rsh agent is `ip netns
// exec`, and the host names resolve through an /etc/hosts of the test's own, bind-mounted in a
// mount namespace of `vigil fleet run`'s). tc throttles one host's link, or one direction of one
// pair, and the pair-wise pattern must name exactly that. Root is needed (CI runs as root); the
// tests skip, saying why, where namespaces or mpirun are missing. And srun on a real Slurm
// (Debian's slurmctld and three slurmds on loopback) runs a suite and the pair tests on its nodes.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "serve_process.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/testing/slurm_cluster.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

constexpr int kHosts = 4;
// Every link's wire speed: a NIC's limit, as real links have, so that a healthy pair measures the
// link and not how busy this machine's two cores are (veth alone is CPU-bound and noisy). Each
// bucket holds at least a timer tick of its rate (rate / HZ: 1.6 Mbit at 400 Mbit/s and HZ 250):
// with 64 kbit, a tbf woken late by a busy machine idled its link, and a healthy pair measured
// 0.42 of the others in CI and was named.
constexpr const char* kWire = "tbf rate 400mbit burst 2mbit latency 20ms";
// A bad link: 20x slower. (tbf and htb: the kernel this was written on has no prio or netem.)
constexpr const char* kSlow = "tbf rate 20mbit burst 160kbit latency 50ms";

ProcessResult Sh(const std::string& script) { return RunProgram("/bin/sh", {"-c", script}); }

// Polls `done` every 100 ms for up to `seconds`; whether it came true.
bool WaitUntil(double seconds, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// Hosts vh1..vhN in namespaces of their own, on 10.213.<x>.0/24 with the bridge at .1.
class Namespaces {
 public:
  explicit Namespaces(const TempDir& dir) : dir_(dir) {
    static int made = 0;  // names of its own for each test of this process
    const int id = static_cast<int>((getpid() * 7 + made) % 200) + 20;
    prefix_ = fmt::format("vf{}{}", getpid() % 100000, made++ % 10);
    subnet_ = fmt::format("10.213.{}", id);
    std::string script = fmt::format(
        "set -e\nip link add {0}br type bridge\nip addr add {1}.1/24 dev {0}br\n"
        "ip link set {0}br up\n",
        prefix_, subnet_);
    std::string hosts = "127.0.0.1 localhost\n";
    for (int i = 1; i <= kHosts; ++i) {
      script += fmt::format(
          "ip netns add {0}h{1}\nip link add {0}v{1} type veth peer name eth0 netns {0}h{1}\n"
          "ip link set {0}v{1} master {0}br up\nip -n {0}h{1} addr add {2}.{3}/24 dev eth0\n"
          "ip -n {0}h{1} link set eth0 up\nip -n {0}h{1} link set lo up\n"
          "ip netns exec {0}h{1} tc qdisc add dev eth0 root {4}\n"
          "tc qdisc add dev {0}v{1} root {4}\n",
          prefix_, i, subnet_, i + 1, kWire);
      hosts += fmt::format("{}.{} {}\n", subnet_, i + 1, Host(i));
    }
    const ProcessResult r = Sh(script);
    ok_ = r.exit_code == 0;
    why_ = r.err;
    std::ofstream(dir_.File("hosts")) << hosts;
    std::string list;
    for (int i = 1; i <= kHosts; ++i) list += Host(i) + "\n";
    std::ofstream(dir_.File("hosts.txt")) << list;
    // OpenMPI's rsh agent: `<agent> <host> <command...>`, run in the host's namespace under a host
    // name of its own, as a real host has (with one host name for all, mpirun hangs now and then:
    // 2 starts in 40 here, its daemons sharing a session directory).
    std::ofstream(dir_.File("rsh")) << fmt::format(
        "#!/bin/sh\nhost=$1; shift\nexec ip netns exec {}h\"${{host#vh}}\" unshare --uts "
        "/bin/sh -c \"hostname $host && $*\"\n",
        prefix_);
    chmod(dir_.File("rsh").c_str(), 0755);
  }
  ~Namespaces() {
    // What still runs in a host first (an OpenMPI daemon that outlived its mpirun kept running
    // after its namespace was deleted); then the root side of each veth: deleting it removes the
    // pair at once, where a namespace's devices go in the kernel's own time.
    std::string script = fmt::format("ip link del {}br 2>/dev/null\n", prefix_);
    for (int i = 1; i <= kHosts; ++i) {
      script += fmt::format(
          "for p in $(ip netns pids {0}h{1} 2>/dev/null); do kill -9 $p; done\n"
          "ip link del {0}v{1} 2>/dev/null; ip netns del {0}h{1} 2>/dev/null\n",
          prefix_, i);
    }
    Sh(script);
  }

  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  static std::string Host(int i) { return fmt::format("vh{}", i); }
  std::string Address(int i) const { return fmt::format("{}.{}", subnet_, i + 1); }
  std::string Namespace(int i) const { return fmt::format("{}h{}", prefix_, i); }
  std::string BridgePort(int i) const { return fmt::format("{}v{}", prefix_, i); }

  // `vigil fleet run` through mpirun over the namespaces, with the test's /etc/hosts.
  ProcessResult FleetRun(const std::vector<std::string>& extra) const {
    return VigilProcess(FleetRunArgs(extra), "/usr/bin/unshare").Wait();
  }

  // The same command line, for a run started in the background.
  std::vector<std::string> FleetRunArgs(const std::vector<std::string>& extra) const {
    std::string command = fmt::format(
        "mount --bind {0}/hosts /etc/hosts && "
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
        "OMPI_MCA_plm_rsh_agent={0}/rsh OMPI_MCA_plm_rsh_no_tree_spawn=1 "
        "OMPI_MCA_oob_tcp_if_include={1}.0/24 OMPI_MCA_btl_tcp_if_include={1}.0/24 "
        "exec {2} fleet run --launcher mpirun --hosts {0}/hosts.txt",
        dir_.path(), subnet_, VIGIL_BINARY);
    for (const std::string& e : extra) command += " " + e;
    return {"--mount", "--", "/bin/sh", "-c", command};
  }

 private:
  const TempDir& dir_;
  std::string prefix_, subnet_;
  bool ok_ = false;
  std::string why_;
};

class FleetRunE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
    if (access("/usr/bin/mpirun", X_OK) != 0) GTEST_SKIP() << "no mpirun (Debian's openmpi-bin)";
    ns_ = std::make_unique<Namespaces>(dir_);
    if (!ns_->ok()) GTEST_SKIP() << "cannot make network namespaces here: " << ns_->why();
  }

  // Slows what leaves `dev` in namespace `ns` ("" : the root namespace) to kSlow: for one
  // destination address, or for all when `to` is "". What tc said when it could not ("" : done).
  std::string Throttle(const std::string& ns, const std::string& dev, const std::string& to) {
    const std::string tc = ns.empty() ? "tc" : "ip netns exec " + ns + " tc";
    std::string script;
    if (to.empty()) {
      script = fmt::format("{} qdisc replace dev {} root {}", tc, dev, kSlow);
    } else {
      // An htb whose default class keeps the wire speed; `to` goes to a slow class.
      script = fmt::format(
          "set -e\n{0} qdisc replace dev {1} root handle 1: htb default 10\n"
          "{0} class add dev {1} parent 1: classid 1:10 htb rate 400mbit\n"
          "{0} class add dev {1} parent 1: classid 1:30 htb rate 20mbit ceil 20mbit\n"
          "{0} filter add dev {1} protocol ip parent 1: prio 1 u32 match ip dst {2}/32 "
          "flowid 1:30\n",
          tc, dev, to);
    }
    const ProcessResult r = Sh(script);
    return r.exit_code == 0 ? "" : r.err + " (" + script + ")";
  }

  Json Report(const ProcessResult& r) {
    const Result<std::string> text = ReadFile(dir_.File("out/fleet-run.json"));
    EXPECT_TRUE(text.ok()) << r.err;
    return text.ok() ? *ParseJson(*text, "fleet-run.json") : Json();
  }

  TempDir dir_;
  std::unique_ptr<Namespaces> ns_;
};

// The faults planted here are bandwidth (tc has no netem on this kernel to plant a delay), and
// the hosts share this machine's cores, so latency would measure its scheduler: the localisation
// tests measure bandwidth, one test checks that latency is measured.
// A second a transfer: long enough that the two pairs of a round share the cores evenly.
const std::vector<std::string> kQuick = {"--transfer", "1s", "--measure", "bandwidth"};

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(FleetRunE2eTest, AThrottledHostIsNamedAndNothingElse) {
  // Both ways: what vh2 sends, and what the bridge sends to it.
  for (const std::string& e :
       {Throttle(ns_->Namespace(2), "eth0", ""), Throttle("", ns_->BridgePort(2), "")}) {
    if (!e.empty()) GTEST_SKIP() << "tc cannot shape traffic here: " << e;
  }
  const ProcessResult r = ns_->FleetRun(With(kQuick, {"--out", dir_.File("out")}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const Json report = Report(r);
  EXPECT_EQ(report["rounds"], kHosts - 1);
  EXPECT_EQ(report["pairs"], kHosts * (kHosts - 1));
  ASSERT_EQ(report["culprits"].size(), 1u) << report.dump(2);
  EXPECT_EQ(report["culprits"][0]["kind"], "node");
  EXPECT_EQ(report["culprits"][0]["subject"], "vh2");
  EXPECT_EQ(report["culprits"][0]["direction"], "both");
  EXPECT_NE(r.out.find("culprit: node vh2 (both, bandwidth)"), std::string::npos) << r.out;
  // Each node's document holds the pairs it sent, keyed by pair.
  const Result<std::string> doc = ReadFile(dir_.File("out/vh1.json"));
  ASSERT_TRUE(doc.ok());
  EXPECT_NE(doc->find("bw_gbps:vh1-vh2"), std::string::npos);
  EXPECT_EQ(doc->find("lat_us:"), std::string::npos);
}

TEST_F(FleetRunE2eTest, LatencyIsMeasuredForEveryPairWhenAsked) {
  const ProcessResult r =
      ns_->FleetRun({"--measure", "latency", "--round-trips", "200", "--out", dir_.File("out")});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const Result<std::string> pairs = ReadFile(dir_.File("out/net-pairs.jsonl"));
  ASSERT_TRUE(pairs.ok()) << r.err;
  int lines = 0;
  for (size_t at = 0; (at = pairs->find('\n', at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, kHosts * (kHosts - 1));
  EXPECT_EQ(pairs->find("\"lat_us\":null"), std::string::npos) << *pairs;
  EXPECT_NE(pairs->find("\"bw_gbps\":null"), std::string::npos);
}

TEST_F(FleetRunE2eTest, TheFleetServiceNamesTheSameHostFromTheUploadedPairs) {
  ServeProcess serve(dir_, dir_.File("fleet.db"));
  ASSERT_GT(serve.port(), 0);
  for (const std::string& e :
       {Throttle(ns_->Namespace(2), "eth0", ""), Throttle("", ns_->BridgePort(2), "")}) {
    if (!e.empty()) GTEST_SKIP() << "tc cannot shape traffic here: " << e;
  }
  const ProcessResult r =
      ns_->FleetRun(With(kQuick, {"--report", serve.url(), "--token-file", dir_.File("token")}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const Json network = GetJson(serve.port(), "/api/v1/network");
  EXPECT_EQ(network["nodes"], kHosts) << network.dump(2);
  EXPECT_EQ(network["pairs"]["bandwidth"], kHosts * (kHosts - 1));
  ASSERT_EQ(network["culprits"].size(), 1u) << network.dump(2);
  EXPECT_EQ(network["culprits"][0]["subject"], "vh2");
  EXPECT_EQ(network["culprits"][0]["direction"], "both");
}

TEST_F(FleetRunE2eTest, OneThrottledDirectionOfOnePairIsNamedAsThatLink) {
  if (const std::string e = Throttle(ns_->Namespace(1), "eth0", ns_->Address(3)); !e.empty()) {
    GTEST_SKIP() << "tc cannot shape traffic here: " << e;
  }
  const ProcessResult r = ns_->FleetRun(With(kQuick, {"--out", dir_.File("out"), "--json"}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const Json report = Report(r);
  ASSERT_EQ(report["culprits"].size(), 1u) << report.dump(2);
  EXPECT_EQ(report["culprits"][0]["kind"], "link");
  EXPECT_EQ(report["culprits"][0]["direction"], "vh1->vh3");
}

TEST_F(FleetRunE2eTest, AHealthyFabricNamesNothingAndExitsZero) {
  const ProcessResult r = ns_->FleetRun(With(kQuick, {"--out", dir_.File("out")}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(Report(r)["culprits"].size(), 0u);
}

TEST_F(FleetRunE2eTest, CollectivesOnNodesWithoutAGpuFailEachGroupNamingItsNode) {
  if (access("/dev/nvidia0", F_OK) == 0) GTEST_SKIP() << "this machine has a GPU";
  const ProcessResult r =
      ns_->FleetRun({"--pattern", "none", "--collective-pattern", "k-batch", "--group-size", "2",
                     "--collective", "all-reduce,all-to-all", "--out", dir_.File("out")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const Json report = Report(r);
  EXPECT_EQ(report["collective_rounds"], 1);
  ASSERT_EQ(report["collectives"].size(), 4u) << report.dump(2);  // 2 groups x 2 collectives
  EXPECT_EQ(report["collectives"][0]["members"], Json({"vh1", "vh2"}));
  EXPECT_EQ(report["collectives"][1]["op"], "alltoall");
  EXPECT_EQ(report["collectives"][2]["members"], Json({"vh3", "vh4"}));
  for (const Json& c : report["collectives"]) {
    EXPECT_TRUE(c["busbw_gbs"].is_null());
    // Both members' prepares failed (`vigil fleet nccl --count` found no GPU): the error is the
    // one that came in first, either member's, and counts the other.
    const std::string error = c["error"];
    const bool named = error.find(c["members"][0].get<std::string>() + ": ") == 0 ||
                       error.find(c["members"][1].get<std::string>() + ": ") == 0;
    EXPECT_TRUE(named) << error;
    EXPECT_NE(error.find(": vigil fleet nccl exited with 3: "), std::string::npos) << error;
    EXPECT_NE(error.find(" (then 1 more member)"), std::string::npos) << error;
  }
  EXPECT_NE(r.out.find("collective allreduce round 1 on vh1,vh2 (0 GPUs): vh"), std::string::npos)
      << r.out;
  // Each node's document says its group's collectives failed, and why.
  const Result<std::string> doc = ReadFile(dir_.File("out/vh4.json"));
  ASSERT_TRUE(doc.ok());
  EXPECT_NE(doc->find("\"net-collective\""), std::string::npos) << *doc;
  EXPECT_NE(doc->find("allreduce with 2 nodes: vh"), std::string::npos) << *doc;
}

TEST_F(FleetRunE2eTest, RdmaOnNodesWithoutRdmaFailsEachPairSayingWhyAndKeepsTheTcpFigures) {
  if (access("/sys/class/infiniband", F_OK) == 0) GTEST_SKIP() << "this machine has RDMA ports";
  const ProcessResult bad = ns_->FleetRun(With(kQuick, {"--rdma", "--rdma-iterations", "0"}));
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("--rdma-iterations"), std::string::npos) << bad.err;
  const ProcessResult r =
      ns_->FleetRun(With(kQuick, {"--rdma", "--rdma-duration", "1s", "--rdma-iterations", "100",
                                  "--out", dir_.File("out")}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const Result<std::string> pairs = ReadFile(dir_.File("out/net-pairs.jsonl"));
  ASSERT_TRUE(pairs.ok()) << r.err;
  EXPECT_NE(pairs->find("\"error\":\"rdma NIC 0 (-): neither node has an RDMA port\""),
            std::string::npos)
      << *pairs;
  EXPECT_EQ(pairs->find("\"bw_gbps\":null"), std::string::npos) << *pairs;
}

TEST_F(FleetRunE2eTest, ARankThatCrashesIsNamedByTheLauncherAndWhatWasMeasuredIsKept) {
  VigilProcess run(
      ns_->FleetRunArgs({"--transfer", "1s", "--measure", "bandwidth", "--out", dir_.File("out")}),
      "/usr/bin/unshare");
  // Once the first round has been measured, vh3's rank dies (SIGKILL: no goodbye).
  ASSERT_TRUE(WaitUntil(30, [&] {
    return Sh("ip netns pids " + ns_->Namespace(3) + " | grep -q .").exit_code == 0;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const ProcessResult killed = Sh(fmt::format(
      "for p in $(ip netns pids {}); do grep -q 'fleet' /proc/$p/cmdline 2>/dev/null && "
      "kill -9 $p; done; true",
      ns_->Namespace(3)));
  ASSERT_EQ(killed.exit_code, 0) << killed.err;
  const ProcessResult r = run.Wait();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const Json report = Report(r);
  ASSERT_EQ(report["nodes"].size(), 4u) << r.out << r.err;
  EXPECT_NE(report["nodes"][2]["error"], "") << report.dump(2);
  // mpirun names the host whose process died, and ends the others: its words are in the report.
  EXPECT_NE(report["launcher_error"].get<std::string>().find("vh3"), std::string::npos)
      << report.dump(2);
  // The first round (two pairs, both ways) was measured before the crash and is kept.
  const Result<std::string> pairs = ReadFile(dir_.File("out/net-pairs.jsonl"));
  ASSERT_TRUE(pairs.ok());
  EXPECT_NE(pairs->find("\"bw_gbps\":0."), std::string::npos) << *pairs;
}

TEST_F(FleetRunE2eTest, AHostThatDoesNotResolveIsBadInputNamingItsLine) {
  std::ofstream(dir_.File("hosts.txt"), std::ios::app) << "vh9\n";
  const ProcessResult r = ns_->FleetRun(kQuick);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hosts.txt:5: host: \"vh9\" is not a known host"), std::string::npos)
      << r.err;
}

TEST_F(FleetRunE2eTest, AHostTheLauncherCannotReachFailsTheRunNamingTheLauncher) {
  // vh4 resolves, but its namespace is gone: mpirun cannot start its daemon there.
  Sh("ip netns del " + ns_->Namespace(4));
  const ProcessResult r = ns_->FleetRun(With(kQuick, {"--start-timeout", "30s"}));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("launcher: mpirun exited with"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vh4"), std::string::npos) << r.out;
}

TEST(FleetNcclTest, BadFlagsAreExit2AndNoGpuIsExit3NamingWhy) {
  ProcessResult r = RunVigil({"fleet", "nccl", "--world", "2", "--op", "bcast"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("\"bcast\" is not a collective"), std::string::npos) << r.err;
  r = RunVigil({"fleet", "run", "--hosts", "/dev/null", "--collective-pattern", "ring"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  if (access("/dev/nvidia0", F_OK) == 0) return;  // the rest is about a node without a GPU
  r = RunVigil({"fleet", "nccl", "--count"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("CUDA"), std::string::npos) << r.err;
}

TEST(FleetRunSrunTest, SrunRunsTheSuiteAndThePairsOnEveryNodeOfTheAllocation) {
  TempDir dir;
  SlurmClusterOptions options;
  options.nodes = 3;
  const Result<std::unique_ptr<SlurmCluster>> started = SlurmCluster::Start(dir.path(), options);
  if (!started.ok()) GTEST_SKIP() << "Slurm cannot start here: " << started.status().message();
  const SlurmCluster& cluster = **started;
  // The three nodes share this machine's loopback, so their bandwidths say nothing about links:
  // the test checks that every node ran and every pair was measured, not what was named.
  const ProcessResult r = RunProgram("/usr/bin/env", {"SLURM_CONF=" + cluster.conf(),
                                                      VIGIL_BINARY,
                                                      "fleet",
                                                      "run",
                                                      "--launcher",
                                                      "srun",
                                                      "--nodes",
                                                      "3",
                                                      "--bind",
                                                      "127.0.0.1",
                                                      "--advertise",
                                                      "127.0.0.1",
                                                      "--suite",
                                                      "health",
                                                      "--transfer",
                                                      "0.1s",
                                                      "--round-trips",
                                                      "50",
                                                      "--out",
                                                      dir.File("out")});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out << r.err << cluster.ControllerLog();
  const Result<std::string> text = ReadFile(dir.File("out/fleet-run.json"));
  ASSERT_TRUE(text.ok()) << r.out << r.err;
  const Json report = *ParseJson(*text, "fleet-run.json");
  ASSERT_EQ(report["nodes"].size(), 3u) << report.dump(2);
  for (const Json& node : report["nodes"]) {
    EXPECT_TRUE(node["answered"].get<bool>()) << node.dump();
    EXPECT_TRUE(node["suite_document"].get<bool>()) << node.dump();
  }
  EXPECT_EQ(report["pairs"], 6);
  for (const std::string& node : cluster.nodes()) {
    const Result<std::string> doc = ReadFile(dir.File("out/" + node + ".json"));
    ASSERT_TRUE(doc.ok()) << node;
    EXPECT_NE(doc->find("host-health"), std::string::npos) << node;            // the suite's
    EXPECT_NE(doc->find("bw_gbps:" + node + "-"), std::string::npos) << node;  // its pairs
  }
}

}  // namespace
}  // namespace vigil::testing
