#include "vigil/agent/run_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "vigil/testing/document_parts.h"

namespace vigil::agent {
namespace {

using learned::ClassModel;
using learned::FamilyModel;
using learned::LearnedCriteria;
using learned::NodeFindings;

using testing::Figure;
using testing::Record;

FamilyModel Family(std::string family, Direction d, double centre, double spread, double limit) {
  FamilyModel f;
  f.family = std::move(family);
  f.direction = d;
  learned::Mode m;
  m.centre = centre;
  m.spread = spread;
  m.nodes = 10;
  f.modes = {m};
  f.limit = limit;
  return f;
}

// One class (nodes that do not say theirs): a bandwidth with a floor of 80, a latency with a
// ceiling of 100 and a count whose healthy range is 47..53.
LearnedCriteria Criteria() {
  ClassModel c;
  c.families = {Family("cpu-stream/triad_gbps", Direction::kHigher, 100, 5, 4),
                Family("cpu-latency/load_ns", Direction::kLower, 90, 2, 5),
                Family("cpu-misc/widgets", Direction::kEither, 50, 1, 3)};
  LearnedCriteria criteria;
  criteria.classes = {c};
  return criteria;
}

NodeResults Doc() {
  NodeResults doc;
  doc.node = "n1";
  BenchmarkRecord stream = Record("cpu-stream", "memory");
  stream.metrics = {Figure("cpu-stream/triad_gbps", 95, "GB/s")};
  BenchmarkRecord latency = Record("cpu-latency", "memory");
  latency.metrics = {Figure("cpu-latency/load_ns", 120, "ns")};
  BenchmarkRecord gemm = Record("gpu-gemm", "gpu");
  gemm.status = BenchStatus::kSkipped;
  gemm.error = "no NVIDIA driver";
  BenchmarkRecord nccl = Record("nccl", "network");
  nccl.status = BenchStatus::kSkipped;
  nccl.error = "no NVIDIA driver";
  doc.benchmarks = {stream, latency, gemm, nccl};
  return doc;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Without criteria no row may read as "healthy": the column says what a figure is read against,
// and STATUS is RUN, whose "ran" says the benchmark ran, not that it passed.
TEST(RunTableTest, WithoutCriteriaEachRowSaysItsReference) {
  const std::vector<std::string> lines = Lines(RenderRunTable(Doc(), NodeFindings{}, nullptr));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("BENCHMARK    RUN      METRIC", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("REFERENCE"), std::string::npos);
  EXPECT_NE(lines[1].find("ran"), std::string::npos);
  EXPECT_NE(lines[1].find("no reference"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("no reference"), std::string::npos) << lines[2];
  for (const std::string& line : lines) {
    EXPECT_EQ((" " + line + " ").find(" ok "), std::string::npos) << line;
  }
}

// With criteria each row says where its value lies against the range learned for the node's class.
TEST(RunTableTest, WithCriteriaEachRowSaysItsVerdict) {
  const LearnedCriteria criteria = Criteria();
  const std::string table = RenderRunTable(Doc(), NodeFindings{}, &criteria);
  const std::vector<std::string> lines = Lines(table);
  EXPECT_NE(lines[0].find("VERDICT"), std::string::npos) << table;
  EXPECT_NE(lines[1].find("above floor 80"), std::string::npos) << table;
  EXPECT_NE(lines[2].find("above ceiling 100"), std::string::npos) << table;
}

// The skipped benchmarks say so on their rows, and why once, on one line for both.
TEST(RunTableTest, SkippedBenchmarksShareOneReason) {
  const std::string table = RenderRunTable(Doc(), NodeFindings{}, nullptr);
  EXPECT_NE(table.find("\nskipped gpu-gemm, nccl: no NVIDIA driver\n"), std::string::npos) << table;
  EXPECT_NE(table.find("gpu-gemm     skipped  -"), std::string::npos) << table;
}

TEST(RunTableTest, ReadingOfEachKindOfMetric) {
  const LearnedCriteria criteria = Criteria();
  const ClassModel* c = &criteria.classes[0];
  const NodeFindings none;
  const auto reading = [&](const std::string& key, double v) {
    return MetricReading(key, v, v, none, c, true);
  };
  EXPECT_EQ(reading("cpu-misc/widgets", 50), "within 47..53");
  EXPECT_EQ(reading("cpu-misc/widgets", 40), "below 47..53");
  EXPECT_EQ(reading("cpu-misc/widgets", 60), "above 47..53");
  EXPECT_EQ(reading("cpu-stream/triad_gbps", 70), "below floor 80");
  EXPECT_EQ(reading("cpu-latency/load_ns", 95), "below ceiling 100");
  EXPECT_EQ(reading("cpu-other/gizmos", 1), "no learned range");
  EXPECT_EQ(reading("cpu-misc/widgets", NAN), "no learned range");
  EXPECT_EQ(reading("gpu-health/ecc_uncorrected_volatile:0", 0), "must be 0");
  EXPECT_EQ(MetricReading("cpu-misc/widgets", 50, 50, none, nullptr, false), "no reference");
}

// A finding on the metric is the row's verdict, whatever the range says.
TEST(RunTableTest, AFindingIsTheRowsVerdict) {
  const LearnedCriteria criteria = Criteria();
  NodeFindings judged;
  learned::Finding f;
  f.metric = "cpu-misc/widgets";
  f.value = 40;
  f.expected_low = 45;
  f.expected_high = 55;
  judged.findings.push_back(f);
  EXPECT_EQ(MetricReading("cpu-misc/widgets", 40, 40, judged, &criteria.classes[0], true),
            "fault: below 45..55");
  judged.findings[0].test = learned::FindingTest::kHealth;
  EXPECT_EQ(MetricReading("cpu-misc/widgets", 40, 40, judged, &criteria.classes[0], true),
            "fault: must be 0");
}

// A family judged by the balance inside the node: a value beyond the fleet's range is no fault,
// and the row says why.
TEST(RunTableTest, BalancedFamilyOutsideTheFleetsRangeSaysWhy) {
  LearnedCriteria criteria = Criteria();
  criteria.classes[0].families[2].balanced = true;
  EXPECT_EQ(MetricReading("cpu-misc/widgets", 40, 40, NodeFindings{}, &criteria.classes[0], true),
            "below 47..53 (in balance within the node)");
}

}  // namespace
}  // namespace vigil::agent
