#include "vigil/reliability/sacct.h"

#include <gtest/gtest.h>

#include "vigil/core/clock.h"

namespace vigil::reliability {
namespace {

constexpr std::string_view kSacctHeader =
    "JobID|State|NNodes|AllocTRES|Start|End|NodeList|ExitCode\n";

Result<SacctLog> Parse(std::string_view body, bool lenient = false) {
  return ParseSacct(std::string(kSacctHeader) + std::string(body), "t.sacct",
                    SacctOptions{lenient});
}

TEST(SacctTest, TimesAreReadInTheLogsZone) {
  // The night clocks went back in Chicago: a job from 00:30 to 03:30 local ran four hours.
  const std::string body =
      "7|COMPLETED|1|gres/gpu=8|2026-11-01T00:30:00|2026-11-01T03:30:00|n1|0:0\n";
  SacctOptions chicago;
  chicago.time_zone = *TimeZone::Find("America/Chicago");
  const auto log = ParseSacct(std::string(kSacctHeader) + body, "t.sacct", chicago);
  ASSERT_TRUE(log.ok()) << log.status().message();
  EXPECT_EQ(log->jobs[0].end - log->jobs[0].start, 4 * 3600);
  EXPECT_EQ(FormatIsoSeconds(log->jobs[0].start), "2026-11-01T05:30:00");
  // Read as UTC, the same line is a three-hour job.
  const auto utc = Parse(body);
  ASSERT_TRUE(utc.ok());
  EXPECT_EQ(utc->jobs[0].end - utc->jobs[0].start, 3 * 3600);
}

TEST(SacctTest, ReadsAllocationsAndSkipsSteps) {
  const auto log = Parse(
      "100|COMPLETED|2|billing=16,cpu=192,gres/gpu=16,mem=2T,node=2|2026-01-01T00:00:00|"
      "2026-01-01T02:00:00|gpu[001-002]|0:0\n"
      "100.batch|COMPLETED|1|cpu=96,mem=1T,node=1|2026-01-01T00:00:00|2026-01-01T02:00:00|"
      "gpu001|0:0\n"
      "101_3|CANCELLED by 1234|1|cpu=4,gres/gpu:a100=2,node=1|2026-01-01T01:00:00|"
      "2026-01-01T01:30:00|gpu002|0:15\n"
      "102|PENDING|1|billing=1|Unknown|Unknown|None assigned|0:0\n");
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->jobs.size(), 3u);
  EXPECT_EQ(log->step_lines, 1);
  const SacctJob& a = log->jobs[0];
  EXPECT_EQ(a.id, "100");
  EXPECT_EQ(a.state, JobState::kCompleted);
  EXPECT_EQ(a.nnodes, 2);
  EXPECT_EQ(a.gpus, 16);
  EXPECT_EQ(a.end - a.start, 7200);
  EXPECT_EQ(a.start, *ParseIsoSeconds("2026-01-01T00:00:00"));
  ASSERT_EQ(log->NodesOf(a).size(), 2u);
  EXPECT_EQ(log->node_names[log->NodesOf(a)[1]], "gpu002");
  const SacctJob& b = log->jobs[1];
  EXPECT_EQ(b.state, JobState::kCancelled);
  EXPECT_EQ(b.gpus, 2);
  EXPECT_EQ(b.exit_signal, 15);
  EXPECT_EQ(log->NodesOf(b)[0], log->NodesOf(a)[1]);  // one index per node name
  const SacctJob& c = log->jobs[2];
  EXPECT_FALSE(c.Finished());
  EXPECT_TRUE(log->NodesOf(c).empty());
  EXPECT_EQ(log->node_names.size(), 2u);
}

TEST(SacctTest, AcceptsParsableWithTrailingBarsAndOtherColumns) {
  const auto log = ParseSacct(
      "JobID|User|State|Start|End|NodeList|\r\n"
      "7|alice|NODE_FAIL|2026-01-01T00:00:00|2026-01-01T00:10:00|n[1-3]|\r\n",
      "p.sacct", {});
  ASSERT_TRUE(log.ok()) << log.status().message();
  ASSERT_EQ(log->jobs.size(), 1u);
  EXPECT_EQ(log->jobs[0].nnodes, 3);  // from NodeList without NNodes
  EXPECT_EQ(log->jobs[0].state, JobState::kNodeFail);
}

TEST(SacctTest, ErrorsNameFileLineAndField) {
  struct Case {
    std::string body;
    std::string expected;
  } cases[] = {
      {"1|EXPLODED|1||2026-01-01T00:00:00|2026-01-01T00:01:00|n1|0:0\n",
       "t.sacct:2: field State: unknown job state \"EXPLODED\""},
      {"1|FAILED|1||yesterday|2026-01-01T00:01:00|n1|0:0\n", "t.sacct:2: field Start: bad time"},
      {"1|FAILED|1||2026-01-01T00:02:00|2026-01-01T00:01:00|n1|0:0\n",
       "t.sacct:2: field End: ends before it starts"},
      {"1|FAILED|2||2026-01-01T00:00:00|2026-01-01T00:01:00|n1|0:0\n",
       "t.sacct:2: field NNodes: 2 nodes but NodeList names 1"},
      {"1|FAILED|1||2026-01-01T00:00:00|2026-01-01T00:01:00|n[1|0:0\n",
       "t.sacct:2: field NodeList: bad hostlist"},
      {"1|FAILED|1|gres/gpu=x|2026-01-01T00:00:00|2026-01-01T00:01:00|n1|0:0\n",
       "t.sacct:2: field AllocTRES"},
      {"1|FAILED|1||2026-01-01T00:00:00|2026-01-01T00:01:00|n1|1\n",
       "t.sacct:2: field ExitCode: expected code:signal"},
      {"1|FAILED|1\n", "t.sacct:2: 3 fields where the header has 8"},
  };
  for (const Case& c : cases) {
    const auto log = Parse(c.body);
    ASSERT_FALSE(log.ok()) << c.body;
    EXPECT_EQ(log.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(log.status().message().find(c.expected), std::string::npos) << log.status().message();
  }
  EXPECT_NE(ParseSacct("JobID|State\n", "h.sacct", {}).status().message().find("no field Start"),
            std::string::npos);
  EXPECT_FALSE(ParseSacct("", "e.sacct", {}).ok());
}

TEST(SacctTest, LenientSkipsAndCountsBrokenLines) {
  const auto log = Parse(
      "1|EXPLODED|1||2026-01-01T00:00:00|2026-01-01T00:01:00|n1|0:0\n"
      "2|COMPLETED|1||2026-01-01T00:00:00|2026-01-01T00:01:00|n[1|0:0\n"
      "3|COMPLETED|1||2026-01-01T00:00:00|2026-01-01T00:01:00|n2|0:0\n",
      /*lenient=*/true);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->jobs.size(), 1u);
  EXPECT_EQ(log->skipped_lines, 2);
  EXPECT_NE(log->first_skip.find(":2:"), std::string::npos);
  // A broken node list leaves no stray node references behind.
  EXPECT_EQ(log->node_refs.size(), 1u);
}

TEST(JobStateTest, NamesRoundTrip) {
  for (int i = 0; i < kJobStateCount; ++i) {
    const auto s = static_cast<JobState>(i);
    EXPECT_EQ(ParseJobState(JobStateName(s)), s);
  }
  EXPECT_FALSE(ParseJobState("completed").has_value());
}

TEST(SacctTest, NumbersAndTimesOutsideTheirRangesAreNamed) {
  const auto error = [](std::string_view line) {
    return Parse(std::string(line) + "\n").status().message();
  };
  EXPECT_EQ(error("1|COMPLETED|2000000|node=1|2026-01-01T00:00:00|2026-01-01T01:00:00||0:0"),
            "t.sacct:2: field NNodes: bad node count \"2000000\" (within [0, 1048576])");
  EXPECT_NE(error("1|COMPLETED|1|gres/gpu=2000000|2026-01-01T00:00:00|2026-01-01T01:00:00|n1|0:0")
                .find("field AllocTRES: bad gres/gpu"),
            std::string::npos);
  EXPECT_EQ(error("1|COMPLETED|1|node=1|2026-01-01T00:00:00|2026-01-01T01:00:00|n1|0:300"),
            "t.sacct:2: field ExitCode: \"0:300\": code and signal must be within [0, 255]");
  EXPECT_EQ(error("1|COMPLETED|1|node=1|2026-01-01T00:00:00|2301-01-01T01:00:00|n1|0:0"),
            "t.sacct:2: field End: bad time \"2301-01-01T01:00:00\" (ISO 8601, years 1970 to "
            "2200)");
}

}  // namespace
}  // namespace vigil::reliability
