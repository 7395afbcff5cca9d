#include "vigil/cluster/fleet_coordinator.h"

#include <gtest/gtest.h>
#include <httplib.h>

namespace vigil::cluster {
namespace {

TEST(FleetCoordinatorTest, ARegistrationNeedsANameAndAPort) {
  const Result<RankInfo> ok =
      ParseRegistration(R"({"node": "gpu-7", "rank": 3, "data_port": 40001})", "10.0.0.7");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->node, "gpu-7");
  EXPECT_EQ(ok->address, "10.0.0.7");
  EXPECT_EQ(ok->data_port, 40001);
  EXPECT_EQ(ok->rank, 3);
  EXPECT_EQ(ParseRegistration(R"({"node": "a", "data_port": 1})", "x")->rank, -1);
  for (const char* bad :
       {"", "[]", R"({"node": 1, "data_port": 2})", R"({"node": "", "data_port": 2})",
        R"({"node": "a"})", R"({"node": "a", "data_port": 70000})",
        R"({"node": "a", "data_port": "80"})"}) {
    EXPECT_EQ(ParseRegistration(bad, "x").status().code(), StatusCode::kInvalidArgument) << bad;
  }
  // A rank of another type is not trusted: it reads as none.
  EXPECT_EQ(ParseRegistration(R"({"node": "a", "data_port": 9, "rank": "zero"})", "x")->rank, -1);
}

TEST(FleetCoordinatorTest, ARegistrationListsItsRdmaPortsInOrder) {
  const Result<RankInfo> ok = ParseRegistration(
      R"({"node": "a", "data_port": 9, "rdma": [{"device": "mlx5_0", "port": 1, "state": "DOWN"},
          {"device": "mlx5_1", "port": 2, "state": "ACTIVE"}]})",
      "x");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->rdma.size(), 2u);
  EXPECT_EQ(ok->rdma[0].device, "mlx5_0");
  EXPECT_FALSE(ok->rdma[0].active());
  EXPECT_EQ(ok->rdma[1].Name(), "mlx5_1_p2");
  EXPECT_TRUE(ok->rdma[1].active());
  for (const char* bad :
       {R"({"node": "a", "data_port": 9, "rdma": {}})",
        R"({"node": "a", "data_port": 9, "rdma": [1]})",
        R"({"node": "a", "data_port": 9, "rdma": [{"device": "", "port": 1, "state": "ACTIVE"}]})",
        R"({"node": "a", "data_port": 9, "rdma": [{"device": "m", "port": 0, "state": "ACTIVE"}]})",
        R"({"node": "a", "data_port": 9, "rdma": [{"device": "m", "port": 1}]})"}) {
    EXPECT_EQ(ParseRegistration(bad, "x").status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(FleetCoordinatorTest, AnAnswerNeedsNodeIdAndOk) {
  const Result<RankAnswer> ok =
      ParseRankAnswer(R"({"node": "a", "id": 4, "ok": true, "result": {"gbps": 9.5}})");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->id, 4);
  EXPECT_TRUE(ok->outcome.ok);
  EXPECT_EQ(ok->outcome.result["gbps"], 9.5);
  const Result<RankAnswer> failed = ParseRankAnswer(R"({"node": "a", "id": 5, "ok": false})");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->outcome.error, "failed, saying nothing");
  EXPECT_FALSE(ParseRankAnswer(R"({"node": "a", "id": "5", "ok": true})").ok());
  EXPECT_FALSE(ParseRankAnswer(R"({"node": "a", "id": 5, "ok": 1})").ok());
}

TEST(FleetCoordinatorTest, OnlyTheRunsTokenIsHeard) {
  Result<std::unique_ptr<FleetCoordinator>> c = FleetCoordinator::Start("127.0.0.1", 0, "s3cret");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  httplib::Client client("127.0.0.1", (*c)->port());
  const std::string body = R"({"node": "a", "data_port": 9})";
  const auto refused = client.Post("/v1/register", body, "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  client.set_bearer_token_auth("s3cret");
  const auto bad = client.Post("/v1/register", "{", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  const auto taken = client.Post("/v1/register", body, "application/json");
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->status, 200);
  ASSERT_EQ((*c)->Ranks().size(), 1u);
  EXPECT_EQ((*c)->Ranks()[0].address, "127.0.0.1");
  // Nothing to do yet: the ask waits, then says so; after Release it says exit.
  (*c)->Release();
  const auto task = client.Get("/v1/task?node=a");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->body, R"({"kind":"exit"})");
}

}  // namespace
}  // namespace vigil::cluster
