#include "vigil/reliability/models.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vigil/core/duration.h"

namespace vigil::reliability {
namespace {

constexpr double kGpusPerNode = 8;
constexpr double kMetaRate = 6.5;  // failures per 1000 node-days, RSC-1 (Kokolis et al. 2024)

// Meta's projections: 1.8 h for 16,384 A100 GPUs and 0.23 h for 131,072.
TEST(JobMttfTest, ReproducesMetasProjections) {
  EXPECT_NEAR(*JobMttfSeconds(16384 / kGpusPerNode, kMetaRate) / kSecondsPerHour, 1.8, 0.005);
  EXPECT_NEAR(*JobMttfSeconds(131072 / kGpusPerNode, kMetaRate) / kSecondsPerHour, 0.23, 0.005);
  EXPECT_DOUBLE_EQ(*JobMttfSeconds(1000, 1) / kSecondsPerDay, 1);
}

TEST(JobMttfTest, RejectsNonPositiveInput) {
  EXPECT_FALSE(JobMttfSeconds(0, kMetaRate).ok());
  EXPECT_FALSE(JobMttfSeconds(8, 0).ok());
  EXPECT_FALSE(JobMttfSeconds(8, -1).ok());
  EXPECT_FALSE(JobMttfSeconds(NAN, 1).ok());
}

// Daly (2006): a 5-minute dump at MTBF 24 h, 6 h and 15 min gives about 117, 57 and 9.1 min.
TEST(CheckpointIntervalTest, ReproducesDalysFigures) {
  const double dump = 5 * kSecondsPerMinute;
  EXPECT_NEAR(DalyInterval(dump, 24 * kSecondsPerHour) / kSecondsPerMinute, 116.7, 0.1);
  EXPECT_NEAR(DalyInterval(dump, 6 * kSecondsPerHour) / kSecondsPerMinute, 56.7, 0.1);
  EXPECT_NEAR(DalyInterval(dump, 15 * kSecondsPerMinute) / kSecondsPerMinute, 9.14, 0.01);
  EXPECT_NEAR(YoungInterval(dump, 24 * kSecondsPerHour) / kSecondsPerMinute, 120, 1e-9);
  // Past delta >= 2M Daly's estimate is M itself.
  EXPECT_DOUBLE_EQ(DalyInterval(100, 40), 40);
}

TEST(ExpectedEttrTest, MatchesTheFormulaByHand) {
  EttrParams p;
  p.nodes = 1000;
  p.failures_per_1000_node_days = 1;  // one failure a day for the job
  p.restart_s = 0.01 * kSecondsPerDay;
  p.queue_s = 0.01 * kSecondsPerDay;
  p.interval_s = 0.02 * kSecondsPerDay;
  p.write_s = 0.002 * kSecondsPerDay;
  const EttrEstimate e = *ExpectedEttr(p);
  EXPECT_NEAR(e.failure_loss, 0.03, 1e-12);
  EXPECT_NEAR(e.checkpoint_overhead, 0.1, 1e-12);
  EXPECT_NEAR(e.ettr, 0.97 / 1.1, 1e-12);
  EXPECT_TRUE(e.in_domain);
  EXPECT_NEAR(e.optimal_interval_s, std::sqrt(2 * 0.002) * kSecondsPerDay, 1e-6);
  // The optimum is a maximum of the formula.
  for (double f : {0.5, 0.9, 1.1, 2.0}) {
    p.interval_s = e.optimal_interval_s * f;
    EXPECT_LT(ExpectedEttr(p)->ettr, e.ettr_at_optimal);
  }
}

TEST(ExpectedEttrTest, SaysWhenOutsideItsDomain) {
  EttrParams p;
  p.nodes = 131072 / kGpusPerNode;
  p.restart_s = 30 * kSecondsPerMinute;
  const EttrEstimate e = *ExpectedEttr(p);
  EXPECT_GT(e.failure_loss, kEttrDomainLimit);
  EXPECT_FALSE(e.in_domain);
}

TEST(ExpectedEttrTest, ValidateNamesTheField) {
  EttrParams p;
  p.interval_s = 0;
  EXPECT_NE(Validate(p).message().find("--interval"), std::string::npos);
  p = EttrParams();
  p.queue_s = -1;
  EXPECT_NE(Validate(p).message().find("--queue"), std::string::npos);
  EXPECT_FALSE(ExpectedEttr(p).ok());
}

TEST(ExpectedEttrTest, EachRejectedFieldIsNamedByItsFlag) {
  const struct {
    void (*set)(EttrParams&);
    const char* message;
  } cases[] = {
      {[](EttrParams& p) { p.nodes = 0; }, "--nodes must be a positive number, got 0"},
      {[](EttrParams& p) { p.failures_per_1000_node_days = -1; },
       "--rate must be a positive number, got -1"},
      {[](EttrParams& p) { p.restart_s = -1; }, "--restart must be zero or more, got -1"},
      {[](EttrParams& p) { p.queue_s = -1; }, "--queue must be zero or more, got -1"},
      {[](EttrParams& p) { p.interval_s = 0; }, "--interval must be a positive number, got 0"},
      {[](EttrParams& p) { p.write_s = -1; }, "--write must be zero or more, got -1"},
  };
  for (const auto& c : cases) {
    EttrParams p;
    c.set(p);
    EXPECT_EQ(Validate(p).message(), c.message);
    EXPECT_EQ(ExpectedEttr(p).status().message(), c.message);
  }
}

TEST(MttfBySizeTest, OneRowPerSizeInOrder) {
  const auto rows = MttfBySize({16384, 8}, 8, kMetaRate);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].gpus, 16384);
  EXPECT_EQ((*rows)[0].nodes, 2048);
  EXPECT_EQ((*rows)[0].mttf_s, *JobMttfSeconds(2048, kMetaRate));
  EXPECT_EQ((*rows)[1].nodes, 1);
  EXPECT_EQ(MttfBySize({8}, 0, kMetaRate).status().message(),
            "--gpus-per-node must be a positive number, got 0");
  EXPECT_EQ(MttfBySize({8, -8}, 8, kMetaRate).status().message(),
            "--gpus must be a positive number, got -8");
  EXPECT_EQ(MttfBySize({8}, 8, 0).status().message(), "--rate must be a positive number, got 0");
}

TEST(ExpectedEttrBySizeTest, EachRowIsTheEstimateOfItsSize) {
  EttrParams p;
  const auto rows = ExpectedEttrBySize(p, {64, 1024});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  for (const EttrRow& r : *rows) {
    EXPECT_EQ(r.estimate.ettr, ExpectedEttr(r.params)->ettr);
    EXPECT_EQ(r.mttf_s, *JobMttfSeconds(r.params.nodes, p.failures_per_1000_node_days));
    EXPECT_EQ(r.params.interval_s, p.interval_s);
  }
  EXPECT_EQ((*rows)[1].params.nodes, 1024);
  EXPECT_EQ(ExpectedEttrBySize(p, {64, 0}).status().message(),
            "--nodes must be a positive number, got 0");
}

TEST(CheckpointIntervalTest, BothIntervalsOrTheFieldNamed) {
  const auto i = OptimalCheckpointIntervals(300, 86400);
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(i->young_s, YoungInterval(300, 86400));
  EXPECT_EQ(i->daly_s, DalyInterval(300, 86400));
  EXPECT_EQ(OptimalCheckpointIntervals(0, 86400).status().message(),
            "--write must be a positive number, got 0");
  EXPECT_EQ(OptimalCheckpointIntervals(300, 0).status().message(),
            "--mtbf must be a positive number, got 0");
}

}  // namespace
}  // namespace vigil::reliability
