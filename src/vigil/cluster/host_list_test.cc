#include "vigil/cluster/host_list.h"

#include <gtest/gtest.h>

namespace vigil::cluster {
namespace {

TEST(HostListTest, HostsRacksAndOpenMpiKeys) {
  const Result<std::vector<FleetHost>> hosts = ParseHostList(
      "# the rack of eight\ngpu-001 rack=r01\n\n  gpu-002 slots=8 rack=r01  # spare\ngpu-003\n",
      "hosts.txt");
  ASSERT_TRUE(hosts.ok()) << hosts.status().ToString();
  ASSERT_EQ(hosts->size(), 3u);
  EXPECT_EQ((*hosts)[0].name, "gpu-001");
  EXPECT_EQ((*hosts)[0].rack, "r01");
  EXPECT_EQ((*hosts)[0].line, 2);
  EXPECT_EQ((*hosts)[1].rack, "r01");
  EXPECT_EQ((*hosts)[1].line, 4);
  EXPECT_EQ((*hosts)[2].rack, "");
}

TEST(HostListTest, BadLinesNameFileLineAndField) {
  const auto error = [](const std::string& text) {
    return ParseHostList(text, "h.txt").status().message();
  };
  EXPECT_EQ(error("a\nb zone=1\n"),
            "h.txt:2: \"zone\": unknown key (known: rack, slots, max_slots)");
  EXPECT_EQ(error("a rack=\n"), "h.txt:1: rack: empty value");
  EXPECT_EQ(error("a\nb\na\n"), "h.txt:3: host: \"a\" is listed twice");
  EXPECT_EQ(error("a r01\n"),
            "h.txt:1: \"r01\": expected key=value after the host name (rack=, slots=)");
  EXPECT_EQ(error("# nothing\n\n"), "h.txt: names no host");
}

TEST(HostListTest, AHostThatDoesNotResolveIsNamedWithItsLine) {
  EXPECT_EQ(*ResolveHost("127.0.0.1", "h.txt:1"), "127.0.0.1");
  EXPECT_EQ(*ResolveHost("localhost", "h.txt:1"), "127.0.0.1");
  const Result<std::string> unknown = ResolveHost("no-such-host.invalid", "h.txt:4");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message().rfind("h.txt:4: host: \"no-such-host.invalid\"", 0), 0u)
      << unknown.status().message();
}

TEST(HostListTest, TheLocalAddressTowardLoopbackIsLoopback) {
  EXPECT_EQ(*LocalAddressToward("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(LocalAddressToward("nope").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil::cluster
