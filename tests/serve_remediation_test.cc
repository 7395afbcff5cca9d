// Remediation end to end against a real Slurm: `vigil serve --remediation` (enforce, the slurm
// backend, a breaker share of 0.34 over 6 nodes: 2 drains) receives defective uploads of every
// node, drains exactly 2 with a "vigil:" reason and opens its breaker; a healthy quick-suite
// upload of a drained node resumes it; a node drained by hand stays drained with its reason.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "serve_process.h"
#include "vigil/cluster/command.h"
#include "vigil/cluster/slurm.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/eval/fleet_gen.h"
#include "vigil/results/document.h"
#include "vigil/testing/healthy_fleet.h"
#include "vigil/testing/slurm_cluster.h"
#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

using testing::GetJson;
using testing::TempDir;

httplib::Headers Auth() {
  return {{"Authorization", std::string("Bearer ") + testing::kServeToken}};
}

int Post(int port, const std::string& path, const std::string& body) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(10);
  auto res = c.Post(path, Auth(), body, "application/json");
  return res ? res->status : -1;
}

std::string Metrics(int port) {
  httplib::Client c("127.0.0.1", port);
  auto res = c.Get("/metrics");
  return res ? res->body : "";
}

// Waits up to `seconds` for `done`.
template <class F>
bool WaitFor(double seconds, F done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

TEST(ServeRemediationE2eTest, DrainsUpToTheBreakerAndResumesOnAPassingValidationOnARealSlurm) {
  TempDir dir;
  testing::SlurmClusterOptions shape;
  shape.nodes = 6;
  Result<std::unique_ptr<testing::SlurmCluster>> cluster =
      testing::SlurmCluster::Start(dir.path(), shape);
  if (!cluster.ok()) GTEST_SKIP() << "Slurm cannot start here: " << cluster.status().message();
  const std::vector<std::string>& nodes = (*cluster)->nodes();
  ASSERT_EQ(nodes.size(), 6u);
  const std::unique_ptr<cluster::CommandRunner> runner = cluster::MakeProcessRunner();
  cluster::SlurmOptions slurm_options;
  slurm_options.conf = (*cluster)->conf();
  cluster::Slurm slurm(*runner, slurm_options);

  // A person drains the last node first, with a reason of their own.
  cluster::CommandSpec by_hand;
  by_hand.argv = {"scontrol", "update", "NodeName=" + nodes[5], "State=DRAIN",
                  "Reason=admin: fan noise"};
  by_hand.env = {"SLURM_CONF=" + (*cluster)->conf()};
  const Result<cluster::CommandOutput> drained_by_hand = runner->Run(by_hand);
  ASSERT_TRUE(drained_by_hand.ok());
  ASSERT_EQ(drained_by_hand->exit_code, 0) << drained_by_hand->err;

  ASSERT_TRUE(WriteFileAtomic(dir.File("policy.yaml"), fmt::format(R"(mode: enforce
backend: slurm
slurm: {{conf: {}, timeout: 10s}}
on: {{defective: drain, passing_validation: resume}}
breaker: {{max_drained_share: 0.34}}
rate_limit: {{actions: 100, per: 1h}}
retry: {{initial: 1s, max: 2s, attempts: 3}}
)",
                                                                   (*cluster)->conf()))
                  .ok());
  testing::ServeProcess server(dir, dir.File("fleet.db"),
                               {"--remediation", dir.File("policy.yaml")});
  ASSERT_GT(server.port(), 0);

  // Every node uploads a validation that lost GPU 3: defective by the fixed rules.
  for (const std::string& node : nodes) {
    const FleetRow lost{node,
                        {{"gpu-presence/missing:3", 1}, {"gpu-presence/missing:0", 0}},
                        "7x NVIDIA H100 80GB HBM3"};
    ASSERT_EQ(Post(server.port(), "/api/v1/results", testing::SummaryLines({lost})), 201);
  }
  const auto vigils = [&] {
    std::vector<std::string> out;
    const Result<std::vector<cluster::SlurmNode>> all = slurm.Nodes();
    if (!all.ok()) return out;
    for (const cluster::SlurmNode& n : *all) {
      if (n.DrainedByVigil()) out.push_back(n.name);
    }
    return out;
  };
  ASSERT_TRUE(WaitFor(15, [&] { return vigils().size() == 2; })) << (*cluster)->ControllerLog();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // nothing more comes
  const std::vector<std::string> drained = vigils();
  ASSERT_EQ(drained.size(), 2u);
  EXPECT_EQ(drained, (std::vector<std::string>{nodes[0], nodes[1]}));
  EXPECT_EQ(slurm.Node(nodes[0])->reason, "vigil: GPU 3 gpu-presence/missing:3 = 1");
  EXPECT_EQ(slurm.Node(nodes[5])->reason, "admin: fan noise");

  Json state = GetJson(server.port(), "/api/v1/remediation");
  EXPECT_EQ(state["state"]["breaker_open"], true) << state.dump();
  EXPECT_EQ(state["state"]["limit"], 2) << state.dump();
  std::string metrics = Metrics(server.port());
  EXPECT_NE(metrics.find("vigil_remediation_breaker_open 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("vigil_remediation_drained_nodes 2\n"), std::string::npos) << metrics;
  EXPECT_NE(
      metrics.find("vigil_remediation_decisions_total{action=\"drain\",outcome=\"acted\"} 2\n"),
      std::string::npos)
      << metrics;
  // The drains in the log carry the scontrol commands they ran.
  const Json n0 = GetJson(server.port(), "/api/v1/remediation?node=" + nodes[0]);
  ASSERT_GE(n0["count"].get<int>(), 2) << n0.dump();
  EXPECT_EQ(n0["records"][0]["outcome"], "acted") << n0.dump();
  EXPECT_NE(n0["records"][0]["command"].get<std::string>().find("State=DRAIN"), std::string::npos)
      << n0.dump();

  // Criteria from a healthy fleet, then a healthy quick-suite upload of a drained node resumes
  // it (the breaker is open: resumes still run), and of the node drained by hand does nothing.
  const std::vector<FleetRow> fleet = testing::HealthyFleet(20);
  ASSERT_EQ(Post(server.port(), "/api/v1/results", testing::SummaryLines(fleet)), 201);
  ASSERT_EQ(Post(server.port(), "/api/v1/criteria/learn", ""), 201);
  for (const std::string& node : {nodes[0], nodes[5]}) {
    FleetRow healthy = fleet[3];
    healthy.node = node;
    NodeResults doc = eval::NodeDocumentOf(healthy, 3, 7);
    ASSERT_EQ(doc.suite, "quick");
    ASSERT_EQ(Post(server.port(), "/api/v1/results", DumpJson(ToJson(doc))), 201);
  }
  ASSERT_TRUE(WaitFor(15, [&] { return !slurm.Node(nodes[0])->Drained(); }))
      << GetJson(server.port(), "/api/v1/remediation").dump();
  EXPECT_TRUE(slurm.Node(nodes[1])->DrainedByVigil());
  EXPECT_TRUE(slurm.Node(nodes[5])->Drained());
  EXPECT_EQ(slurm.Node(nodes[5])->reason, "admin: fan noise");
  metrics = Metrics(server.port());
  EXPECT_NE(
      metrics.find("vigil_remediation_decisions_total{action=\"resume\",outcome=\"acted\"} 1\n"),
      std::string::npos)
      << metrics;
  EXPECT_TRUE(GetJson(server.port(), "/api/v1/remediation")["state"]["breaker_open"]);
}

// A policy that does not parse stops `vigil serve` with exit 2 and the file, line and field,
// before it listens.
TEST(ServeRemediationE2eTest, ABadPolicyExitsTwoBeforeListening) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.File("policy.yaml"), "mode: dry-run\nbackend: slurmm\n").ok());
  const testing::ProcessResult r = testing::RunVigil(
      {"serve", "--db", dir.File("fleet.db"), "--listen", "127.0.0.1:0", "--port-file",
       dir.File("port"), "--remediation", dir.File("policy.yaml")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("policy.yaml:2: backend: \"slurmm\" is not one of slurm, command"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(ReadFile(dir.File("port")).ok());
}

}  // namespace
}  // namespace vigil
