#include "vigil/reliability/node_events.h"

#include <gtest/gtest.h>

namespace vigil::reliability {
namespace {

TEST(NodeEventsTest, ReadsIsoAndUnixTimesAndDetailWithCommas) {
  const auto log = ParseNodeEvents(
      "timestamp,node,kind,detail\n"
      "2026-01-01T00:00:00,gpu001,xid,79 (GPU fell off the bus), GPU 3\n"
      "1767225660.5,gpu002,health_check\n",
      "e.csv", false);
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->events.size(), 2u);
  EXPECT_EQ(log->events[0].time, 1767225600);
  EXPECT_EQ(log->events[0].node, "gpu001");
  EXPECT_EQ(log->events[0].kind, "xid");
  EXPECT_EQ(log->events[0].detail, "79 (GPU fell off the bus), GPU 3");
  EXPECT_EQ(log->events[1].time, 1767225660);
  EXPECT_EQ(log->events[1].detail, "");
}

TEST(NodeEventsTest, ErrorsNameLineAndField) {
  const std::string header = "timestamp,node,kind\n";
  EXPECT_NE(ParseNodeEvents(header + "soon,n1,xid\n", "e.csv", false)
                .status()
                .message()
                .find("e.csv:2: field timestamp: bad time \"soon\""),
            std::string::npos);
  EXPECT_NE(ParseNodeEvents(header + "1,,xid\n", "e.csv", false)
                .status()
                .message()
                .find("e.csv:2: field node: empty"),
            std::string::npos);
  EXPECT_NE(ParseNodeEvents(header + "1,n1\n", "e.csv", false)
                .status()
                .message()
                .find("e.csv:2: expected timestamp,node,kind"),
            std::string::npos);
  EXPECT_NE(ParseNodeEvents("time,host\n", "e.csv", false).status().message().find("header"),
            std::string::npos);
  EXPECT_FALSE(ParseNodeEvents(header + "1e300,n1,xid\n", "e.csv", false).ok());
  const auto lenient = ParseNodeEvents(header + "x,n1,xid\n5,n1,xid\n", "e.csv", true);
  ASSERT_TRUE(lenient.ok());
  EXPECT_EQ(lenient->events.size(), 1u);
  EXPECT_EQ(lenient->skipped_lines, 1);
}

TEST(NodeEventsTest, TimesOutsideTheUnixRangeAreRefused) {
  const std::string header = "timestamp,node,kind\n";
  for (const char* t : {"-1", "1e11", "9.2e18", "2201-01-01T00:00:00"}) {
    const auto log = ParseNodeEvents(header + t + ",n1,xid\n", "e.csv", false);
    ASSERT_FALSE(log.ok()) << t;
    EXPECT_NE(log.status().message().find("e.csv:2: field timestamp: bad time"), std::string::npos)
        << log.status().message();
  }
  EXPECT_TRUE(ParseNodeEvents(header + "7258118400,n1,xid\n", "e.csv", false).ok());
}

}  // namespace
}  // namespace vigil::reliability
