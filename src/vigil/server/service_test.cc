#include "vigil/server/service.h"

#include <gtest/gtest.h>

namespace vigil::server {
namespace {

validate::LearnedCriteria TwoBenchmarks() {
  validate::LearnedCriteria c;
  validate::ClassModel& m = c.classes.emplace_back();
  m.hardware = "8xH100";
  for (const char* family : {"cpu-stream/triad_gbps", "gpu-gemm/bf16_tflops"}) {
    m.families.emplace_back().family = family;
  }
  m.components.emplace_back().benchmark = "gpu-gemm";
  return c;
}

TEST(ActiveCriteriaTest, RestrictsOncePerSetOfBenchmarks) {
  const ActiveCriteria active(3, TwoBenchmarks());
  const auto gemm = active.For({"gpu-gemm"});
  ASSERT_EQ(gemm->classes.size(), 1u);
  ASSERT_EQ(gemm->classes[0].families.size(), 1u);
  EXPECT_EQ(gemm->classes[0].families[0].family, "gpu-gemm/bf16_tflops");
  EXPECT_EQ(gemm->classes[0].components.size(), 1u);
  // The same set in any order is the same restriction, made once.
  const auto both = active.For({"gpu-gemm", "cpu-stream"});
  EXPECT_EQ(active.For({"cpu-stream", "gpu-gemm"}), both);
  EXPECT_EQ(active.For({"gpu-gemm"}), gemm);
  EXPECT_EQ(both->classes[0].families.size(), 2u);
  const auto stream = active.For({"cpu-stream"});
  EXPECT_EQ(stream->classes[0].families.size(), 1u);
  EXPECT_TRUE(stream->classes[0].components.empty());
  // The criteria themselves are untouched.
  EXPECT_EQ(active.criteria.classes[0].families.size(), 2u);
}

}  // namespace
}  // namespace vigil::server
