#include "vigil/bench/node_run.h"

#include <gtest/gtest.h>

#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

// A CPU benchmark that reports one figure.
class OneFigure : public Benchmark {
 public:
  std::string_view name() const override { return "one"; }
  std::string_view component() const override { return "cpu"; }
  std::string_view description() const override { return "one figure"; }
  std::vector<ParamSpec> params() const override { return {}; }
  double time_limit_s(Suite) const override { return 30; }
  Status Available(const BenchContext&) const override { return Status::Ok(); }
  Result<std::vector<Metric>> Run(const BenchContext&) const override {
    return std::vector<Metric>{Metric{MetricKey{"one", "value", std::nullopt}, 42, "", true, {42}}};
  }
};

TEST(NodeRunTest, TheDocumentCarriesTheNodeTheSuiteAndEachRecord) {
  testing::TempDir scratch, host;
  RunnerOptions runner;
  runner.scratch_root = scratch.path();
  runner.suite = Suite::kFull;
  const OneFigure one;
  const std::atomic<bool> interrupted{false};
  const Result<NodeResults> doc =
      RunNode({&one}, runner, {"node-7", "1.2.3", host.path()}, {}, interrupted, SystemClock());
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->node, "node-7");
  EXPECT_EQ(doc->vigil_version, "1.2.3");
  EXPECT_EQ(doc->suite, "full");
  EXPECT_FALSE(doc->start_time.empty());
  EXPECT_LE(doc->start_time, doc->end_time);
  // No GPU benchmark ran: no gpu-presence record.
  ASSERT_EQ(doc->benchmarks.size(), 1u);
  EXPECT_EQ(doc->benchmarks[0].name, "one");
  EXPECT_EQ(doc->benchmarks[0].status, BenchStatus::kOk);
  ASSERT_EQ(doc->benchmarks[0].metrics.size(), 1u);
  EXPECT_EQ(doc->benchmarks[0].metrics[0].value, 42);
}

TEST(NodeRunTest, AnInterruptedRunMakesNoDocument) {
  testing::TempDir scratch, host;
  RunnerOptions runner;
  runner.scratch_root = scratch.path();
  const OneFigure one;
  const std::atomic<bool> interrupted{true};
  const Result<NodeResults> doc =
      RunNode({&one}, runner, {"n", "v", host.path()}, {}, interrupted, SystemClock());
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace vigil
