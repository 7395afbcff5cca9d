// Remediation in the fleet service: uploads and alerts become decisions, the API and /metrics
// show them, and a hung backend never holds up an upload.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "vigil/core/json.h"
#include "vigil/remediate/fake_backend.h"
#include "vigil/server/api_fixture.h"
#include "vigil/store/sqlite_store.h"
#include "vigil/testing/healthy_fleet.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::server {
namespace {

// A node whose driver lost GPU 3: defective by the fixed rules, without criteria.
FleetRow LostGpu(const std::string& node) {
  return FleetRow{node,
                  {{"gpu-presence/missing:3", 1}, {"gpu-presence/missing:0", 0}},
                  "7x NVIDIA H100 80GB HBM3"};
}

class RemediationTest : public ApiFixture {
 protected:
  std::string DbFile() const override { return dir_.File("fleet.db"); }
  testing::TempDir dir_;
  void Enable(remediate::Mode mode, size_t backend_nodes = 40) {
    remediate::Policy p;
    p.mode = mode;
    p.on[1] = remediate::Action::kDrain;  // critical alerts
    auto backend = std::make_unique<remediate::FakeBackend>(backend_nodes);
    backend_ = backend.get();
    ASSERT_TRUE(service_->EnableRemediation(p, std::move(backend)).ok());
  }

  // Waits (up to 5 s) until the fake backend holds `n` nodes drained.
  bool WaitForDrained(size_t n) {
    for (int i = 0; i < 500; ++i) {
      if (backend_->drained().size() == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  remediate::FakeBackend* backend_ = nullptr;
};

TEST_F(RemediationTest, WithoutAPolicyNothingChanges) {
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines({LostGpu("n1")})).status, 201);
  const std::string metrics = Call("GET", "/metrics", "", {}, false).body;
  EXPECT_EQ(metrics.find("vigil_remediation"), std::string::npos) << metrics;
  const Json r = Body(Call("GET", "/api/v1/remediation"));
  EXPECT_EQ(r["enabled"], false);
  EXPECT_EQ(r["count"], 0);
  EXPECT_EQ(Call("POST", "/api/v1/remediation/reset").status, 409);
  EXPECT_EQ(Call("GET", "/").body.find("Remediation"), std::string::npos);
}

TEST_F(RemediationTest, ADefectiveUploadIsADryRunDecisionWithTheFindingAsReason) {
  Enable(remediate::Mode::kDryRun);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines({LostGpu("n1")})).status, 201);
  const Json r = Body(Call("GET", "/api/v1/remediation"));
  ASSERT_EQ(r["count"], 1) << r.dump();
  const Json& d = r["records"][0];
  EXPECT_EQ(d["node"], "n1");
  EXPECT_EQ(d["action"], "drain");
  EXPECT_EQ(d["trigger"], "defective");
  EXPECT_EQ(d["outcome"], "dry-run");
  EXPECT_EQ(d["reason"], "vigil: GPU 3 gpu-presence/missing:3 = 1");
  EXPECT_EQ(r["state"]["mode"], "dry-run");
  EXPECT_TRUE(backend_->calls().empty());
  const std::string metrics = Call("GET", "/metrics", "", {}, false).body;
  EXPECT_NE(metrics.find("vigil_remediation_decisions_total{action=\"drain\",outcome=\"dry-run\"} "
                         "1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("vigil_remediation_breaker_open 0\n"), std::string::npos);
  // The dashboard: the fleet page's remediation section, the node page's actions.
  EXPECT_NE(Call("GET", "/").body.find("circuit breaker closed"), std::string::npos);
  const std::string node_page = Call("GET", "/nodes/n1").body;
  EXPECT_NE(node_page.find("vigil: GPU 3 gpu-presence/missing:3 = 1"), std::string::npos)
      << node_page;
}

TEST_F(RemediationTest, EnforceDrainsThroughTheBackendAndTheBreakerHoldsAtTheLimit) {
  Enable(remediate::Mode::kEnforce, 40);  // 5% of 40: 2
  std::vector<FleetRow> lost;
  for (int i = 0; i < 5; ++i) lost.push_back(LostGpu(fmt::format("n{}", i)));
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(lost)).status, 201);
  ASSERT_TRUE(WaitForDrained(2));
  EXPECT_EQ(backend_->drained().at("n0"), "vigil: GPU 3 gpu-presence/missing:3 = 1");
  Json r = Body(Call("GET", "/api/v1/remediation", "", {{"node", "n0"}}));
  EXPECT_EQ(r["records"][0]["outcome"], "acted") << r.dump();
  EXPECT_EQ(r["records"][0]["command"], "fake drain n0");
  EXPECT_EQ(r["state"]["breaker_open"], true);
  std::string metrics = Call("GET", "/metrics", "", {}, false).body;
  EXPECT_NE(metrics.find("vigil_remediation_breaker_open 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("vigil_remediation_drained_nodes 2\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("vigil_remediation_decisions_total{action=\"drain\",outcome=\"breaker-"
                         "open\"} 3\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(Call("GET", "/").body.find("circuit breaker OPEN"), std::string::npos);

  // A reset needs the write token.
  EXPECT_EQ(Call("POST", "/api/v1/remediation/reset", "", {}, false).status, 401);
  r = Body(Call("POST", "/api/v1/remediation/reset"));
  EXPECT_EQ(r["reset"], true);
  EXPECT_EQ(r["breaker_open"], false);

  // A critical alert (a fast-path rule) drains; statistical ones do not. The breaker reopens at
  // the limit on the next drain it refuses.
  const std::string alert =
      R"({"machine":"n9","kind":"rule","rule":"xid 79","component":"gpu2","detected":1})";
  ASSERT_EQ(Call("POST", "/api/v1/alerts", alert).status, 201);
  r = Body(Call("GET", "/api/v1/remediation", "", {{"node", "n9"}}));
  EXPECT_EQ(r["records"][0]["trigger"], "critical_alert") << r.dump();
  EXPECT_EQ(r["records"][0]["outcome"], "breaker-open") << r.dump();
  EXPECT_EQ(r["records"][0]["reason"], "vigil: gpu2 xid 79");
}

TEST_F(RemediationTest, TheUploadIsAnsweredWhileTheBackendHangs) {
  Enable(remediate::Mode::kEnforce, 100);
  backend_->Hang();
  // Both are answered although the backend never returns until released below: an upload that
  // waited for its drain would hang here (and the test would time out), not merely be slow.
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines({LostGpu("n1")})).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines({LostGpu("n2")})).status, 201);
  EXPECT_TRUE(backend_->drained().empty());
  // The worker takes the first drain and hangs in the backend; the second waits behind it.
  for (int i = 0; i < 500 && backend_->calls().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(backend_->calls().size(), 1u);
  const Json r = Body(Call("GET", "/api/v1/remediation"));
  EXPECT_EQ(r["state"]["queued"], 1) << r.dump();
  EXPECT_EQ(r["count"], 2) << r.dump();
  backend_->Release();
  EXPECT_TRUE(WaitForDrained(2));
}

TEST_F(RemediationTest, ANodeDefectiveInEnoughOfItsLatestUploadsIsALemon) {
  remediate::Policy p;
  p.on = {std::nullopt, std::nullopt, remediate::Action::kDrain, std::nullopt};  // lemons only
  p.lemon_defective = 2;
  p.lemon_uploads = 3;
  ASSERT_TRUE(service_->EnableRemediation(p, nullptr).ok());
  FleetRow row = LostGpu("n1");
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines({row})).status, 201);
  EXPECT_EQ(Body(Call("GET", "/api/v1/remediation"))["count"], 0);  // once is not a lemon
  row.values.back().second = 0.5;  // the next validation: other figures, defective again
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines({row})).status, 201);
  const Json r = Body(Call("GET", "/api/v1/remediation"));
  ASSERT_EQ(r["count"], 1) << r.dump();
  EXPECT_EQ(r["records"][0]["trigger"], "lemon");
  EXPECT_EQ(r["records"][0]["outcome"], "dry-run");
  EXPECT_EQ(r["records"][0]["reason"],
            "vigil: GPU 3 gpu-presence/missing:3 = 1 (lemon: 2 of the last 2 uploads defective)");
}

TEST_F(RemediationTest, TheListIsPagedNewestFirst) {
  Enable(remediate::Mode::kDryRun, 1000);
  std::vector<FleetRow> lost;
  for (int i = 0; i < 5; ++i) lost.push_back(LostGpu(fmt::format("n{}", i)));
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(lost)).status, 201);
  const Json first = Body(Call("GET", "/api/v1/remediation", "", {{"limit", "2"}}));
  ASSERT_EQ(first["count"], 2);
  EXPECT_EQ(first["records"][0]["node"], "n4");
  const std::string before = std::to_string(first["records"][1]["id"].get<int64_t>());
  const Json next =
      Body(Call("GET", "/api/v1/remediation", "", {{"limit", "2"}, {"before", before}}));
  EXPECT_EQ(next["records"][0]["node"], "n2");
  EXPECT_EQ(Call("GET", "/api/v1/remediation", "", {{"before", "x"}}).status, 400);
}

}  // namespace
}  // namespace vigil::server
