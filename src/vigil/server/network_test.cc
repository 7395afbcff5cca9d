#include "vigil/server/network.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

namespace vigil::server {
namespace {

// Nodes n0..n<count-1>, every pair measured both ways at 10 Gbit/s and 5 us, except what `slow`
// sends or receives at 0.5 Gbit/s.
std::vector<store::Upload> Fleet(int count, const std::string& slow) {
  std::vector<store::Upload> latest;
  for (int a = 0; a < count; ++a) {
    store::Upload u;
    u.node = fmt::format("n{}", a);
    u.row.node = u.node;
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      const std::string peer = fmt::format("n{}", b);
      const bool bad = u.node == slow || peer == slow;
      u.row.values.emplace_back(fmt::format("net-pair/bw_gbps:{}-{}", u.node, peer),
                                bad ? 0.5 : 10.0 * (1 + 0.01 * ((a + b) % 3)));
      u.row.values.emplace_back(fmt::format("net-pair/lat_us:{}-{}", u.node, peer), 5.0);
    }
    u.row.values.emplace_back("cpu-stream/triad_gbps", 100);  // not a pair: not read
    latest.push_back(std::move(u));
  }
  return latest;
}

TEST(NetworkTest, TheLatestPairsOfEveryNodeNameTheSlowNode) {
  const Result<Json> v = NetworkVerdict(Fleet(5, "n2"));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["nodes"], 5);
  EXPECT_EQ((*v)["pairs"]["bandwidth"], 20);
  EXPECT_EQ((*v)["pairs"]["latency"], 20);
  ASSERT_EQ((*v)["culprits"].size(), 1u) << v->dump(2);
  EXPECT_EQ((*v)["culprits"][0]["measure"], "bandwidth");
  EXPECT_EQ((*v)["culprits"][0]["kind"], "node");
  EXPECT_EQ((*v)["culprits"][0]["subject"], "n2");
  EXPECT_EQ((*v)["culprits"][0]["direction"], "both");
}

TEST(NetworkTest, PairsWithNodesOutsideTheFleetAndMissingValuesAreLeftOut) {
  std::vector<store::Upload> latest = Fleet(4, "");
  latest[0].row.values.emplace_back("net-pair/bw_gbps:n0-gone", 0.01);  // peer not in the fleet
  latest[0].row.values.emplace_back("net-pair/bw_gbps:n1-n2", 0.01);    // not n0's to send
  latest[0].row.values.emplace_back("net-pair/bw_gbps:n0-n0", 0.01);    // itself
  latest[1].row.values.emplace_back("net-pair/lat_us:n1-n3", std::nan(""));
  const Result<Json> v = NetworkVerdict(latest);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)["pairs"]["bandwidth"], 12);
  EXPECT_EQ((*v)["pairs"]["latency"], 12);
  EXPECT_EQ((*v)["culprits"].size(), 0u) << v->dump(2);
}

TEST(NetworkTest, EachRdmaDeviceIsARailJudgedOnItsOwn) {
  // Two rails at 200 Gbit/s: n3's mlx5_10 sends and receives at 50, which its mlx5_2 does not.
  std::vector<store::Upload> latest = Fleet(5, "");
  for (store::Upload& u : latest) {
    for (const store::Upload& peer : latest) {
      if (peer.node == u.node) continue;
      for (const std::string device : {"mlx5_10", "mlx5_2"}) {
        const bool bad = device == "mlx5_10" && (u.node == "n3" || peer.node == "n3");
        u.row.values.emplace_back(
            fmt::format("net-pair/rdma_gbps_{}:{}-{}", device, u.node, peer.node),
            bad ? 50.0 : 200.0 - (u.node < peer.node ? 1 : 0));
      }
    }
  }
  latest[0].row.values.emplace_back("net-pair/rdma_gbps_:n0-n1", 1);          // no device
  latest[0].row.values.emplace_back("net-pair/rdma_gbps_mlx5_2", 1);          // no pair
  latest[0].row.values.emplace_back("net-pair/rdma_gbps_mlx5_2:n1-n2", 1);    // not n0's to send
  latest[0].row.values.emplace_back("net-pair/rdma_gbps_mlx5_9:n0-gone", 1);  // no such peer
  const Result<Json> v = NetworkVerdict(latest);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["pairs"]["bandwidth"], 20);
  EXPECT_EQ((*v)["pairs"]["rdma"], 40);
  EXPECT_EQ((*v)["rails"], Json::array({"mlx5_2", "mlx5_10"}));  // none from a pair left out
  ASSERT_EQ((*v)["culprits"].size(), 1u) << v->dump(2);
  EXPECT_EQ((*v)["culprits"][0]["measure"], "rdma mlx5_10");
  EXPECT_EQ((*v)["culprits"][0]["kind"], "node");
  EXPECT_EQ((*v)["culprits"][0]["subject"], "n3");
  EXPECT_EQ((*v)["culprits"][0]["direction"], "both");

  // And n1's mlx5_2: mlx5_2's culprit comes first (natural order), then mlx5_10's.
  for (store::Upload& u : latest) {
    for (auto& [key, value] : u.row.values) {
      if (key.starts_with("net-pair/rdma_gbps_mlx5_2:") && key.find("n1") != std::string::npos) {
        value = 20;
      }
    }
  }
  const Result<Json> two = NetworkVerdict(latest);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ((*two)["culprits"].size(), 2u) << two->dump(2);
  EXPECT_EQ((*two)["culprits"][0]["measure"], "rdma mlx5_2");
  EXPECT_EQ((*two)["culprits"][0]["subject"], "n1");
  EXPECT_EQ((*two)["culprits"][1]["measure"], "rdma mlx5_10");
  EXPECT_EQ((*two)["culprits"][1]["subject"], "n3");
}

TEST(NetworkTest, ARailsLatencyIsJudgedApartFromItsBandwidth) {
  // One rail, mlx5_0: every bandwidth 200 Gbit/s, every latency 2 us but n2's, 9 us.
  std::vector<store::Upload> latest = Fleet(5, "");
  for (store::Upload& u : latest) {
    for (const store::Upload& peer : latest) {
      if (peer.node == u.node) continue;
      const std::string pair = fmt::format("mlx5_0:{}-{}", u.node, peer.node);
      u.row.values.emplace_back("net-pair/rdma_gbps_" + pair, 200.0);
      const bool slow = u.node == "n2" || peer.node == "n2";
      u.row.values.emplace_back("net-pair/rdma_lat_us_" + pair,
                                slow ? 9.0 : 2.0 + (u.node < peer.node ? 0.01 : 0));
    }
  }
  latest[1].row.values.emplace_back("net-pair/rdma_lat_us_:n1-n0", 1);  // no device
  const Result<Json> v = NetworkVerdict(latest);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["pairs"]["rdma"], 20);
  EXPECT_EQ((*v)["pairs"]["rdma_latency"], 20);
  EXPECT_EQ((*v)["rails"], Json::array({"mlx5_0"}));
  ASSERT_EQ((*v)["culprits"].size(), 1u) << v->dump(2);
  EXPECT_EQ((*v)["culprits"][0]["measure"], "rdma latency mlx5_0");
  EXPECT_EQ((*v)["culprits"][0]["subject"], "n2");
  EXPECT_EQ((*v)["culprits"][0]["direction"], "both");
}

TEST(NetworkTest, AFleetWithoutPairsNamesNothing) {
  const Result<Json> v = NetworkVerdict({});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)["pairs"]["bandwidth"], 0);
  EXPECT_EQ((*v)["pairs"]["rdma"], 0);
  EXPECT_EQ((*v)["pairs"]["rdma_latency"], 0);
  EXPECT_EQ((*v)["rails"].size(), 0u);
  EXPECT_EQ((*v)["culprits"].size(), 0u);
}

}  // namespace
}  // namespace vigil::server
