#include "vigil/eval/fleet_gen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace vigil::eval {
namespace {

TEST(FleetGenTest, ReproducibleWithTruthAndClasses) {
  FleetGenOptions o;
  o.nodes = 300;
  o.seed = 7;
  const GeneratedFleet a = *GenerateFleet(o);
  const GeneratedFleet b = *GenerateFleet(o);
  ASSERT_EQ(a.rows.size(), 300u);
  EXPECT_EQ(FormatFleetRow(a.rows[17]), FormatFleetRow(b.rows[17]));
  EXPECT_EQ(FormatTruth(a.truth), FormatTruth(b.truth));
  EXPECT_FALSE(a.truth.empty());
  size_t h100 = 0;
  for (const FleetRow& r : a.rows) h100 += r.hardware.find("H100") != std::string::npos;
  EXPECT_GT(h100, 20u);
  EXPECT_LT(h100, 80u);
  // 9 GEMM types x 8 GPUs, 2 x 8 mem-bw, 2 x 8 kernel-launch, 8 NICs x 8 sizes, 8 NCCL sizes,
  // 2 GPT figures, 6 return codes.
  size_t widest = 0;
  for (const FleetRow& r : a.rows) widest = std::max(widest, r.values.size());
  EXPECT_EQ(widest, 72u + 16 + 16 + 64 + 8 + 2 + 6);
  Result<std::vector<PlantedDefect>> back = ParseTruth(FormatTruth(a.truth), "t.csv");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->size(), a.truth.size());
  EXPECT_FALSE(GenerateFleet(FleetGenOptions{.nodes = 0}).ok());
}

TEST(FleetGenTest, TruthErrorsNameTheLine) {
  EXPECT_FALSE(ParseTruth("", "t.csv").ok());
  Result<std::vector<PlantedDefect>> r = ParseTruth("node,component,kind,size\na,b,c\n", "t.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "t.csv:2: expected 4 fields, found 3");
  r = ParseTruth("node,component,kind,size\na,b,c,x\n", "t.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("t.csv:2: field size", 0), 0u);
}

TEST(FleetGenTest, RefusesAFleetLargerThanItsLimit) {
  FleetGenOptions o;
  o.nodes = 200000;
  const Result<GeneratedFleet> r = GenerateFleet(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("values, more than the 2e+07"), std::string::npos)
      << r.status().message();
}

TEST(FleetGenTest, DefectKindsParseBackAndOthersAreNamed) {
  for (const DefectKind k :
       {DefectKind::kGpu, DefectKind::kPcie, DefectKind::kNic, DefectKind::kNicLarge,
        DefectKind::kNvlink, DefectKind::kFail, DefectKind::kMissing}) {
    EXPECT_EQ(*ParseDefectKind(DefectKindName(k)), k) << DefectKindName(k);
  }
  EXPECT_EQ(DefectKindName(DefectKind::kNicLarge), "nic-large");
  const Result<std::vector<PlantedDefect>> r =
      ParseTruth("node,component,kind,size\na,GPU 1,gpu,0.05\nb,GPU 2,slow,0.1\n", "t.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "t.csv:3: field kind: expected gpu, pcie, nic, nic-large, nvlink, fail or missing, got "
            "\"slow\"");
}

}  // namespace
}  // namespace vigil::eval
