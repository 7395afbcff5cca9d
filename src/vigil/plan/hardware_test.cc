#include "vigil/plan/hardware.h"

#include <gtest/gtest.h>

namespace vigil::plan {
namespace {

TEST(DatasheetProfileTest, KnowsEachListedGpuInAnyCase) {
  for (std::string_view gpu : DatasheetGpus()) {
    Result<HardwareProfile> p = DatasheetProfile(gpu);
    ASSERT_TRUE(p.ok()) << gpu;
    EXPECT_EQ(p->gpu, gpu);
    EXPECT_EQ(p->source, "datasheet");
    EXPECT_GT(p->bf16_tflops, 0);
    EXPECT_GT(p->hbm_gbps, 0);
    EXPECT_GT(p->memory_gb, 0);
  }
  Result<HardwareProfile> h100 = DatasheetProfile("H100");
  ASSERT_TRUE(h100.ok());
  EXPECT_DOUBLE_EQ(h100->bf16_tflops, 989);
  EXPECT_DOUBLE_EQ(h100->fp8_tflops, 1979);
  EXPECT_DOUBLE_EQ(DatasheetProfile("a100")->fp8_tflops, 0);  // Ampere has no FP8 tensor cores
}

TEST(DatasheetProfileTest, NamesTheKnownGpusForAnUnknownOne) {
  Result<HardwareProfile> p = DatasheetProfile("v100");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "unknown GPU 'v100': the datasheet table knows a100, h100, h200, b200");
}

}  // namespace
}  // namespace vigil::plan
