#include "cli/common.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vigil::cli {
namespace {

TEST(CommonTest, ExitCodes) {
  EXPECT_EQ(ExitCodeFor(Status::Ok()), ExitCode::kHealthy);
  EXPECT_EQ(ExitCodeFor(Status::InvalidArgument("x")), ExitCode::kBadInput);
  EXPECT_EQ(ExitCodeFor(Status::NotFound("x")), ExitCode::kBadInput);
  EXPECT_EQ(ExitCodeFor(Status::IoError("x")), ExitCode::kCannotRun);
  EXPECT_EQ(ExitCodeFor(Status::Cancelled("x")), ExitCode::kCannotRun);
  EXPECT_EQ(ExitCodeFor(Status::Internal("x")), ExitCode::kCannotRun);
}

TEST(CommonTest, HostPort) {
  EXPECT_EQ(*ParseHostPort("--listen", "127.0.0.1:8080"),
            (std::pair<std::string, int>{"127.0.0.1", 8080}));
  EXPECT_EQ(ParseHostPort("--listen", "[::1]:0")->second, 0);
  for (const char* bad : {"8080", ":80", "host:", "host:http", "host:70000", "host:-1"}) {
    const auto r = ParseHostPort("--listen", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message().rfind("--listen: ", 0), 0u);
  }
}

TEST(CommonTest, TableAlignsColumns) {
  Table t({"A", "LONGER"});
  t.Add({"wide cell", "x"});
  EXPECT_EQ(t.ToString(), "A          LONGER\nwide cell  x\n");
}

// What CLI11 says for `args` given to an app with --gpus (int64) and --rate (double) checked by
// InBounds: "" when they parse.
std::string ParseError(std::vector<std::string> args) {
  CLI::App app;
  int64_t gpus = 0;
  double rate = 0;
  std::vector<int64_t> sizes;
  app.add_option("--gpus", gpus)->check(InBounds(kGpusBounds));
  app.add_option("--rate", rate)->check(InBounds(kFailureRateBounds));
  app.add_option("--sizes", sizes)->delimiter(',')->check(InBounds(kGpusBounds));
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(CommonTest, InBoundsNamesTheFlagAndItsRange) {
  EXPECT_EQ(ParseError({"--gpus", "1048576", "--rate", "0.5"}), "");
  EXPECT_EQ(ParseError({"--gpus", "1e12"}), "--gpus: 1e12 is outside [1, 1048576]");
  EXPECT_EQ(ParseError({"--gpus", "1000000000000000000000"}),
            "--gpus: 1000000000000000000000 is outside [1, 1048576]");
  EXPECT_EQ(ParseError({"--gpus", "0"}), "--gpus: 0 is outside [1, 1048576]");
  EXPECT_EQ(ParseError({"--gpus", "eight"}), "--gpus: \"eight\" is not a number");
  EXPECT_EQ(ParseError({"--rate", "nan"}), "--rate: nan is outside [0.001, 100000]");
  EXPECT_EQ(ParseError({"--rate", "1e400"}), "--rate: 1e400 is outside [0.001, 100000]");
  EXPECT_EQ(ParseError({"--sizes", "8,64,2000000"}), "--sizes: 2000000 is outside [1, 1048576]");
}

TEST(CommonTest, DurationFlagsHaveRanges) {
  EXPECT_EQ(*ParseDurationFlag("--restart", "10m", kOutageBounds), 600);
  EXPECT_EQ(ParseDurationFlag("--restart", "31d", kOutageBounds).status().message(),
            "--restart: 31d is outside [0s, 30d]");
  EXPECT_EQ(ParseDurationFlag("--interval", "1e308w", kIntervalBounds).status().message(),
            "--interval: 1e308w is outside [1s, 365d]");  // inf seconds
  EXPECT_EQ(ParseDurationFlag("--write", "soon", kWriteBounds).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CommonTest, JobNodesChecksRanges) {
  EXPECT_EQ(*JobNodes({.gpus = 64}), 8);
  EXPECT_EQ(JobNodes({.gpus = int64_t{1} << 40}).status().message(),
            "--gpus: 1099511627776 is outside [1, 1048576]");
  EXPECT_EQ(JobNodes({.nodes = 4, .gpus_per_node = 0}).status().message(),
            "--gpus-per-node: 0 is outside [1, 256]");
}

TEST(CommonTest, WholeJobNodesAreWhole) {
  EXPECT_EQ(*WholeJobNodes({.gpus = 64}), 8);
  EXPECT_EQ(*WholeJobNodes({.nodes = 3}), 3);
  EXPECT_EQ(WholeJobNodes({.gpus = 12}).status().message(),
            "--gpus must be a multiple of --gpus-per-node");
  EXPECT_EQ(WholeJobNodes({}).status().message(),
            "give the job's size with one of --gpus or --nodes");
}

}  // namespace
}  // namespace vigil::cli
