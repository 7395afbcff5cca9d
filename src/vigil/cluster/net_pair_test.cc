#include "vigil/cluster/net_pair.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>

#include <atomic>
#include <thread>

namespace vigil::cluster {
namespace {

TEST(NetPairTest, BandwidthOverLoopbackIsMeasuredAndCounted) {
  Result<std::unique_ptr<PairListener>> listener = PairListener::Start("127.0.0.1");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  BandwidthOptions o;
  o.seconds = 0.05;
  o.buffer = 64 << 10;
  const Result<double> gbps = MeasureBandwidthGbps("127.0.0.1", (*listener)->port(), o);
  ASSERT_TRUE(gbps.ok()) << gbps.status().ToString();
  EXPECT_GT(*gbps, 0.01);  // loopback moves gigabits; any positive rate shows the count came back
}

TEST(NetPairTest, LatencyOverLoopbackIsHalfTheRoundTrip) {
  Result<std::unique_ptr<PairListener>> listener = PairListener::Start("127.0.0.1");
  ASSERT_TRUE(listener.ok());
  LatencyOptions o;
  o.round_trips = 50;
  const Result<double> us = MeasureLatencyUs("127.0.0.1", (*listener)->port(), o);
  ASSERT_TRUE(us.ok()) << us.status().ToString();
  EXPECT_GT(*us, 0);
  EXPECT_LT(*us, 100000);
}

TEST(NetPairTest, SeveralSendersAtOnceAreEachCounted) {
  Result<std::unique_ptr<PairListener>> listener = PairListener::Start("127.0.0.1");
  ASSERT_TRUE(listener.ok());
  const int port = (*listener)->port();
  std::vector<std::thread> senders;
  std::atomic<int> ok{0};
  for (int i = 0; i < 3; ++i) {
    senders.emplace_back([&] {
      BandwidthOptions o;
      o.seconds = 0.02;
      if (MeasureBandwidthGbps("127.0.0.1", port, o).ok()) ++ok;
    });
  }
  for (std::thread& t : senders) t.join();
  EXPECT_EQ(ok, 3);
}

TEST(NetPairTest, NobodyListeningIsAnErrorNamingThePeer) {
  int port = 0;
  {
    Result<std::unique_ptr<PairListener>> listener = PairListener::Start("127.0.0.1");
    ASSERT_TRUE(listener.ok());
    port = (*listener)->port();
  }  // closed: the port refuses
  BandwidthOptions o;
  o.timeout_s = 2;
  const Result<double> gbps = MeasureBandwidthGbps("127.0.0.1", port, o);
  ASSERT_FALSE(gbps.ok());
  EXPECT_NE(gbps.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << gbps.status().message();
}

TEST(NetPairTest, AnAddressThatIsNotIpv4IsRefused) {
  EXPECT_EQ(PairListener::Start("not-an-address").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MeasureLatencyUs("::1", 1, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(NetPairTest, ASilentListenerEndsTheLatencyTestAtItsDeadline) {
  // A socket that accepts (the kernel's backlog) and never answers: the test must not hang.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  LatencyOptions o;
  o.timeout_s = 0.2;
  const Result<double> us = MeasureLatencyUs("127.0.0.1", ntohs(sa.sin_port), o);
  close(fd);
  EXPECT_EQ(us.status().code(), StatusCode::kDeadlineExceeded) << us.status().ToString();
}

TEST(SubnetTest, AnAddressIsInASubnetByItsPrefix) {
  EXPECT_TRUE(InSubnet("10.0.3.7", "10.0.0.5/16"));
  EXPECT_FALSE(InSubnet("10.1.3.7", "10.0.0.5/16"));
  EXPECT_TRUE(InSubnet("192.168.1.20", "192.168.1.1/24"));
  EXPECT_FALSE(InSubnet("192.168.2.20", "192.168.1.1/24"));
  EXPECT_TRUE(InSubnet("8.8.8.8", "10.0.0.1/0"));
  EXPECT_TRUE(InSubnet("10.0.0.1", "10.0.0.1/32"));
  EXPECT_FALSE(InSubnet("10.0.0.2", "10.0.0.1/32"));
  for (const char* bad : {"10.0.0.1", "10.0.0.1/33", "10.0.0.1/", "10.0.0.1/x", "nowhere/8"}) {
    EXPECT_FALSE(InSubnet("10.0.0.1", bad)) << bad;
  }
  EXPECT_FALSE(InSubnet("not-an-address", "10.0.0.1/8"));
  // Loopback is up on every machine, with its /8.
  const std::vector<std::string> mine = LocalSubnets();
  EXPECT_NE(std::find(mine.begin(), mine.end(), "127.0.0.1/8"), mine.end());
}

}  // namespace
}  // namespace vigil::cluster
