#include "cli/common.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vigil/testing/temp_dir.h"

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

TEST(CommonTest, ReadFleetFilesAppendsAndRefusesAnEmptyFleet) {
  vigil::testing::TempDir dir;
  dir.Write("a.jsonl", "{\"node\": \"a\", \"m/x\": 1}\n");
  dir.Write("b.jsonl", "{\"node\": \"b\", \"m/y\": 2}\n");
  dir.Write("empty.jsonl", "\n");
  Result<FleetTable> t = ReadFleetFiles({dir.File("a.jsonl"), dir.File("b.jsonl")});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->node_count(), 2u);
  EXPECT_EQ(t->metric_count(), 2u);
  Result<FleetTable> empty = ReadFleetFiles({dir.File("empty.jsonl")});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), dir.File("empty.jsonl") + ": no nodes in the file");
}

TEST(CommonTest, FormatsFigures) {
  EXPECT_EQ(FormatFigure(23.4149), "23.41");
  EXPECT_EQ(FormatFigure(123.44), "123.4");
  EXPECT_EQ(FormatFigure(4.56789), "4.568");
  EXPECT_EQ(FormatFigure(2048), "2048");
  EXPECT_EQ(FormatFigure(512), "512");
  EXPECT_EQ(FormatFigure(1234567), "1.235e+06");
  EXPECT_EQ(FormatFigure(0.0001234), "0.0001234");
  EXPECT_EQ(FormatFigure(0), "0");
  EXPECT_EQ(FormatFigure(std::nan("")), "-");
}

}  // namespace
}  // namespace vigil::cli
