#include "vigil/learned/reason.h"

#include <gtest/gtest.h>

#include <limits>

namespace vigil::learned {
namespace {

Finding Fixed(std::string metric, ComponentId component, double value) {
  Finding f;
  f.component = std::move(component);
  f.metric = std::move(metric);
  f.test = FindingTest::kHealth;
  f.value = value;
  f.severity = Severity::kCritical;
  return f;
}

Finding Fleet(Severity severity) {
  Finding f;
  f.component = ComponentId{"GPU", ComponentIndex{3, std::nullopt}};
  f.metric = "gpu-gemm/fp16_tflops:3";
  f.value = 612;
  f.expected_low = 700;
  f.expected_high = 820;
  f.severity = severity;
  return f;
}

NodeResults Failed(std::string name, std::string error) {
  NodeResults doc;
  BenchmarkRecord r;
  r.name = std::move(name);
  r.status = BenchStatus::kFailed;
  r.error = std::move(error);
  doc.benchmarks.push_back(r);
  return doc;
}

TEST(ReasonTest, NothingWrongIsOk) {
  NodeResults doc;
  BenchmarkRecord skipped;
  skipped.name = "gpu-gemm";
  skipped.status = BenchStatus::kSkipped;
  skipped.error = "no NVIDIA driver";
  doc.benchmarks.push_back(skipped);
  EXPECT_EQ(HealthLine(doc, {}), "OK");
}

TEST(ReasonTest, AFixedReadingComesFirstAndNamesItsComponent) {
  NodeFindings judged;
  judged.findings.push_back(Fleet(Severity::kCritical));
  judged.findings.push_back(Fixed("gpu-health/row_remap_failure:3",
                                  ComponentId{"GPU", ComponentIndex{3, std::nullopt}}, 1));
  EXPECT_EQ(HealthLine(Failed("gpu-stress", "timed out after 300 s\nkilled"), judged),
            "vigil: GPU 3 row_remap_failure=1 (+2 more)");
  EXPECT_EQ(HealthLine(Failed("gpu-stress", "timed out after 300 s\nkilled"), {}),
            "vigil: gpu-stress failed: timed out after 300 s");
  judged.findings.erase(judged.findings.begin() + 1);
  EXPECT_EQ(HealthLine(NodeResults{}, judged),
            "vigil: GPU 3 gpu-gemm/fp16_tflops:3 612 (expected 700..820)");
  EXPECT_EQ(
      HealthLine(
          NodeResults{},
          {false, {Fixed("host-health/scratch_full", ComponentId{"filesystem scratch", {}}, 1)}}),
      "vigil: filesystem scratch scratch_full=1");
}

TEST(ReasonTest, TheWorstFindingLeads) {
  NodeFindings judged;
  Finding minor = Fleet(Severity::kMinor);
  minor.component = ComponentId{"NIC", ComponentIndex{1, std::nullopt}};
  judged.findings.push_back(minor);
  judged.findings.push_back(Fleet(Severity::kMajor));
  EXPECT_EQ(HealthLine(NodeResults{}, judged).substr(0, 13), "vigil: GPU 3 ");
}

TEST(ReasonTest, ALongErrorIsCutToOneShortLine) {
  const std::string line =
      HealthLine(Failed("gpu-gemm", std::string(500, 'x') + "\tend\r\nsecond line"), {});
  EXPECT_EQ(line.size(), kMaxReasonLength);
  EXPECT_TRUE(line.ends_with("..."));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const std::string tab = HealthLine(Failed("gpu-gemm", "a\tb"), {});
  EXPECT_EQ(tab, "vigil: gpu-gemm failed: a b");
}

TEST(ReasonTest, RangesReadAsTheTablesPrintThem) {
  Finding f = Fleet(Severity::kMinor);
  EXPECT_EQ(ExpectedRange(f), "700..820");
  f.expected_high = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ExpectedRange(f), ">= 700");
  f.test = FindingTest::kMissing;
  EXPECT_EQ(ExpectedRange(f), "present");
}

}  // namespace
}  // namespace vigil::learned
