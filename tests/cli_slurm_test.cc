// Vigil inside a real Slurm (Debian's slurmctld and slurmd on loopback, testing/slurm_cluster.h):
// contrib/slurm/vigil-slurm-check as the HealthCheckProgram, running the built `vigil`. A node
// that the fleet's criteria find at fault drains itself with a `vigil:` reason within one
// health-check interval; a node drained by hand stays drained; once the fault is gone, the
// validation that the health check starts on the drained node resumes it; and when every node
// fails at once, the circuit breaker holds.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/testing/slurm_cluster.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kInterval = 5;  // HealthCheckInterval, seconds

// The node's State= and Reason= as `scontrol show node --oneliner` prints them.
struct NodeState {
  std::string state, reason;
  bool drained() const { return state.find("DRAIN") != std::string::npos; }
  bool drained_by_vigil() const { return drained() && reason.rfind("vigil:", 0) == 0; }
};

NodeState Show(const SlurmCluster& cluster, const std::string& node) {
  const ProcessResult r = RunProgram("/usr/bin/env", {"SLURM_CONF=" + cluster.conf(), "scontrol",
                                                      "show", "node", "--oneliner", node});
  NodeState s;
  const size_t state = r.out.find(" State=");
  if (state != std::string::npos) {
    s.state = r.out.substr(state + 7, r.out.find(' ', state + 7) - state - 7);
  }
  const size_t reason = r.out.find(" Reason=");
  if (reason != std::string::npos) {
    s.reason = r.out.substr(reason + 8);
    s.reason = s.reason.substr(0, s.reason.find(" ["));
  }
  return s;
}

// Polls `done` every 200 ms for up to `seconds`; whether it came true.
bool WaitFor(double seconds, const std::function<bool()>& done) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return done();
}

void Write(const std::string& path, const std::string& text, bool executable = false) {
  std::ofstream(path) << text;
  if (executable) chmod(path.c_str(), 0755);
}

// Criteria learned from a fleet of this machine's own health rows with the memory scaled by
// `memory_scale`: 1 passes this machine, 4 finds its memory short (a DIMM missing).
void LearnCriteria(const std::string& dir, const std::string& row, double memory_scale,
                   const std::string& out) {
  Json parsed = *ParseJson(row, "row");
  std::string fleet;
  for (int i = 0; i < 30; ++i) {
    Json r = parsed;
    r["node"] = fmt::format("n{}", i);
    r["host-health/memory_total_gib"] =
        parsed["host-health/memory_total_gib"].get<double>() * memory_scale * (1 + 0.001 * (i % 5));
    fleet += DumpJson(r) + "\n";
  }
  const std::string data = fmt::format("{}/fleet-{}.jsonl", dir, memory_scale);
  Write(data, fleet);
  const ProcessResult learned = RunVigil({"learn", "--data", data, "--out", out});
  ASSERT_EQ(learned.exit_code, 0) << learned.err;
}

// The cluster's directory, criteria, settings and health check, as an operator would set them
// up with contrib/slurm/vigil-slurm-check.
struct Site {
  TempDir dir;
  std::string fail, pass;  // criteria files

  explicit Site(double max_drained_share) {
    const ProcessResult row = RunVigil({"run", "--suite", "health", "--scratch", dir.path(),
                                        "--summary", dir.path() + "/row.jsonl"});
    EXPECT_EQ(row.exit_code, 0) << row.out << row.err;
    fail = dir.path() + "/fail.json";
    pass = dir.path() + "/pass.json";
    LearnCriteria(dir.path(), *ReadFile(dir.path() + "/row.jsonl"), 4, fail);
    LearnCriteria(dir.path(), *ReadFile(dir.path() + "/row.jsonl"), 1, pass);
    // Each node's criteria in a file of its own, so that a test can fail one node.
    Write(dir.path() + "/slurm.env",
          fmt::format("VIGIL={}\nVIGIL_STATE={}/state\nSLURM_CONF={}/slurm.conf\n"
                      "VIGIL_MAX_DRAINED_SHARE={}\nVIGIL_DRAIN_JITTER=2s\n"
                      "VIGIL_CRITERIA={}/criteria-$SLURMD_NODENAME.json\n",
                      VIGIL_BINARY, dir.path(), dir.path(), max_drained_share, dir.path()));
    Write(dir.path() + "/health-check",
          fmt::format("#!/bin/sh\nVIGIL_SLURM_ENV={}/slurm.env exec {}/contrib/slurm/"
                      "vigil-slurm-check\n",
                      dir.path(), VIGIL_SOURCE_DIR),
          true);
  }
  ~Site() {
    // The validations that the health checks started run in sessions of their own.
    RunProgram("/usr/bin/pkill", {"-f", dir.path() + "/state"});
  }
  void Criteria(const std::string& node, const std::string& criteria) {
    Write(fmt::format("{}/criteria-{}.json", dir.path(), node), *ReadFile(criteria));
  }
  SlurmClusterOptions Nodes(int n) const {
    SlurmClusterOptions o;
    o.nodes = n;
    o.health_check_program = dir.path() + "/health-check";
    o.health_check_interval_s = kInterval;
    return o;
  }
  // A file below the nodes' state directories, or what is missing.
  std::string File(const std::string& name) const {
    Result<std::string> text = ReadFile(fmt::format("{}/state/{}", dir.path(), name));
    return text.ok() ? *text : "(no " + name + ")";
  }
  std::string Checks(const std::string& node) const { return File(node + "/checks.txt"); }
};

TEST(SlurmE2eTest, AFaultDrainsWithinAnIntervalAndAPassedValidationResumes) {
  Site site(0.5);
  site.Criteria("vnode0", site.fail);
  site.Criteria("vnode1", site.pass);
  site.Criteria("vnode2", site.pass);
  const auto start = Clock::now();
  Result<std::unique_ptr<SlurmCluster>> started =
      SlurmCluster::Start(site.dir.path(), site.Nodes(3));
  if (!started.ok()) GTEST_SKIP() << "Slurm cannot start here: " << started.status().message();
  const SlurmCluster& cluster = **started;
  // A person drains vnode1 for a fan.
  const ProcessResult by_hand =
      RunProgram("/usr/bin/env", {"SLURM_CONF=" + cluster.conf(), "scontrol", "update",
                                  "NodeName=vnode1", "State=DRAIN", "Reason=admin: fan"});
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.err;

  ASSERT_TRUE(WaitFor(kInterval + 5, [&] { return Show(cluster, "vnode0").drained_by_vigil(); }))
      << site.Checks("vnode0") << cluster.ControllerLog();
  const double drained_after = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_LE(drained_after, kInterval + 5);
  EXPECT_EQ(Show(cluster, "vnode0").reason.rfind("vigil: memory host-health/memory_total_gib", 0),
            0u)
      << Show(cluster, "vnode0").reason;

  // Two more intervals: the healthy node stays up, the person's drain stays with its reason.
  std::this_thread::sleep_for(std::chrono::seconds(2 * kInterval));
  EXPECT_FALSE(Show(cluster, "vnode2").drained()) << site.Checks("vnode2");
  EXPECT_TRUE(Show(cluster, "vnode1").drained());
  EXPECT_EQ(Show(cluster, "vnode1").reason, "admin: fan");
  EXPECT_TRUE(Show(cluster, "vnode0").drained_by_vigil());

  // The memory is repaired: the health check validates the drained node (the quick suite), and
  // the validation that passes resumes it.
  site.Criteria("vnode0", site.pass);
  EXPECT_TRUE(WaitFor(120, [&] { return !Show(cluster, "vnode0").drained(); }))
      << Show(cluster, "vnode0").reason << site.Checks("vnode0")
      << site.File("vnode0/validation.log");
  std::this_thread::sleep_for(std::chrono::seconds(kInterval + 1));
  EXPECT_FALSE(Show(cluster, "vnode0").drained()) << site.Checks("vnode0");
  EXPECT_EQ(Show(cluster, "vnode1").reason, "admin: fan");
}

TEST(SlurmE2eTest, TheCircuitBreakerHoldsWhenEveryNodeFails) {
  Site site(0.25);  // 4 nodes: at most 1 drained by Vigil
  for (int i = 0; i < 4; ++i) site.Criteria(fmt::format("vnode{}", i), site.fail);
  Result<std::unique_ptr<SlurmCluster>> started =
      SlurmCluster::Start(site.dir.path(), site.Nodes(4));
  if (!started.ok()) GTEST_SKIP() << "Slurm cannot start here: " << started.status().message();
  const SlurmCluster& cluster = **started;
  const auto drained = [&] {
    int n = 0;
    for (const std::string& node : cluster.nodes()) n += Show(cluster, node).drained_by_vigil();
    return n;
  };
  ASSERT_TRUE(WaitFor(3 * kInterval, [&] { return drained() == 1; })) << site.Checks("vnode0");
  // Every node keeps failing its checks for two more intervals; the breaker keeps them up.
  const auto until = Clock::now() + std::chrono::seconds(2 * kInterval);
  int most = 0;
  while (Clock::now() < until) {
    most = std::max(most, drained());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  EXPECT_EQ(most, 1);
  std::string checks;
  for (const std::string& node : cluster.nodes()) checks += site.Checks(node);
  EXPECT_NE(checks.find("vigil: memory"), std::string::npos) << checks;
}

}  // namespace
}  // namespace vigil::testing
