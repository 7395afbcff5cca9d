#include "vigil/server/limits.h"

#include <gtest/gtest.h>

namespace vigil::server {
namespace {

learned::FamilyModel Family(std::string name, Direction d, double centre, double spread) {
  learned::FamilyModel f;
  f.family = std::move(name);
  f.direction = d;
  f.limit = 5;
  f.modes.push_back(learned::Mode{centre, spread, centre, spread, 10});
  return f;
}

// Two classes, so that a node of neither gets no criteria (with one, ClassFor takes it).
learned::LearnedCriteria Criteria() {
  learned::ClassModel h100;
  h100.hardware = "8x H100";
  h100.families.push_back(Family("gemm-flops/fp16_flops", Direction::kHigher, 100, 1));
  h100.families.push_back(Family("kernel-launch/event_time", Direction::kLower, 0.01, 0.0001));
  h100.families.push_back(Family("gemm-flops/return_code", Direction::kZero, 0, 0));
  learned::ClassModel a100 = h100;
  a100.hardware = "8x A100";
  a100.families[0].modes[0].centre = 50;
  learned::LearnedCriteria c;
  c.classes = {h100, a100};
  return c;
}

TEST(LimitsTest, ABandIsJudgedOnTheWorseSideOnly) {
  const learned::FamilyModel higher = Family("gemm-flops/fp16_flops", Direction::kHigher, 100, 2);
  const Band b = BandOf(higher, "gemm-flops/fp16_flops:3", 99);
  EXPECT_EQ(b.centre, 100);
  EXPECT_EQ(b.low, 90);
  EXPECT_TRUE(std::isinf(b.high));
  EXPECT_EQ(UsedOfBand(b, 100), 0);
  EXPECT_EQ(UsedOfBand(b, 120), 0);  // better than the centre: nothing used
  EXPECT_DOUBLE_EQ(UsedOfBand(b, 95), 0.5);
  EXPECT_DOUBLE_EQ(UsedOfBand(b, 90), 1);
  EXPECT_DOUBLE_EQ(UsedOfBand(b, 80), 2);

  const Band either = BandOf(Family("x/temp", Direction::kEither, 10, 1), "x/temp", 10);
  EXPECT_EQ(either.low, 5);
  EXPECT_EQ(either.high, 15);
  EXPECT_DOUBLE_EQ(UsedOfBand(either, 13), 0.6);
  EXPECT_DOUBLE_EQ(UsedOfBand(either, 7), 0.6);

  const Band flat{3, 3, 3};
  EXPECT_EQ(UsedOfBand(flat, 3), 0);
  EXPECT_TRUE(std::isinf(UsedOfBand(flat, 3.5)));
}

TEST(LimitsTest, AMemberWithAFactorHasItsBandScaled) {
  learned::FamilyModel f = Family("gpu-copy-bw/d2h_bw", Direction::kHigher, 100, 1);
  f.members = {"gpu-copy-bw/d2h_bw:0", "gpu-copy-bw/d2h_bw:1"};
  f.factors = {1.0, 0.5};
  const Band b = BandOf(f, "gpu-copy-bw/d2h_bw:1", 50);
  EXPECT_EQ(b.centre, 50);
  EXPECT_EQ(b.low, 47.5);
}

TEST(LimitsTest, TheNearestValueIsTheOneUsingMostOfItsBand) {
  const learned::LearnedCriteria c = Criteria();
  const LimitIndex index(c);
  FleetRow row{"n1",
               {{"gemm-flops/fp16_flops:0", 99},
                {"gemm-flops/fp16_flops:1", 97},
                {"kernel-launch/event_time", 0.0102},
                {"gemm-flops/return_code", 0},
                {"unknown/metric", 1e9}},
               "8x H100"};
  NearestLimit n = index.Nearest(row);
  ASSERT_TRUE(n.known());
  EXPECT_EQ(n.metric, "gemm-flops/fp16_flops:1");
  EXPECT_NEAR(n.used, 0.6, 1e-9);
  EXPECT_EQ(n.value, 97);

  row.values[2].second = 0.0104;  // launch time 0.8 of the way to its limit
  EXPECT_EQ(index.Nearest(row).metric, "kernel-launch/event_time");

  row.values[3].second = 1;  // the benchmark failed: as far from healthy as it gets
  n = index.Nearest(row);
  EXPECT_EQ(n.metric, "gemm-flops/return_code");
  EXPECT_TRUE(std::isinf(n.used));

  // Another class judges by its own centres; a class the criteria do not know, not at all.
  row.hardware = "8x A100";
  row.values[3].second = 0;
  n = index.Nearest(row);
  EXPECT_EQ(n.metric, "kernel-launch/event_time");  // its GEMM is far above the A100s' centre
  EXPECT_NEAR(n.used, 0.8, 1e-9);
  row.hardware = "8x B200";
  EXPECT_FALSE(index.Nearest(row).known());
}

TEST(LimitsTest, MembersAndOtherKeysOfAFamilyAreFoundAlike) {
  learned::LearnedCriteria c = Criteria();
  c.classes[0].families[0].members = {"gemm-flops/fp16_flops:0"};
  const LimitIndex index(c);
  const FleetRow row{
      "n1", {{"gemm-flops/fp16_flops:0", 97}, {"gemm-flops/fp16_flops:9", 96}}, "8x H100"};
  const NearestLimit n = index.Nearest(row);  // :9 is no member, and still judged
  EXPECT_EQ(n.metric, "gemm-flops/fp16_flops:9");
  EXPECT_NEAR(n.used, 0.8, 1e-9);
  EXPECT_EQ(index.BandFor("8x H100", "gemm-flops/fp16_flops:0", 97)->low, 95);
}

TEST(LimitsTest, BandsAreFoundForLearnedMetricsOnly) {
  const learned::LearnedCriteria c = Criteria();
  const LimitIndex index(c);
  const std::optional<Band> b = index.BandFor("8x H100", "gemm-flops/fp16_flops:5", 98);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->low, 95);
  EXPECT_FALSE(index.BandFor("8x H100", "gemm-flops/return_code", 0).has_value());
  EXPECT_FALSE(index.BandFor("8x H100", "cpu-stream/triad_gbps", 1).has_value());
  EXPECT_FALSE(index.BandFor("8x B200", "gemm-flops/fp16_flops:5", 98).has_value());
}

}  // namespace
}  // namespace vigil::server
