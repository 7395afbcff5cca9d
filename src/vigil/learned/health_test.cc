#include "vigil/learned/health.h"

#include <gtest/gtest.h>

#include <cmath>

#include "vigil/learned/criteria.h"
#include "vigil/learned/judge.h"

namespace vigil::learned {
namespace {

FleetTable OneNode(std::vector<std::pair<std::string, double>> values,
                   std::string hardware = "8x NVIDIA H100 80GB HBM3") {
  return TableOfRows({FleetRow{"gpu-017", std::move(values), std::move(hardware)}}, "test");
}

// Without any criteria, each reading with a fixed meaning that is not 0 names its component; the
// readings kept for people (corrected errors, tested GiB), those judged by the fleet (TFLOP/s),
// a 0 and a missing value are not findings.
TEST(HealthTest, FixedMeaningsNameTheComponentWithoutAFleet) {
  const NodeFindings nf = JudgeHealth(OneNode({{"gpu-presence/missing:0", 0},
                                               {"gpu-presence/missing:3", 1},
                                               {"gpu-presence/pcie_lanes_missing:5", 8},
                                               {"gpu-stress/miscompares:2", 4},
                                               {"gpu-stress/throttled:1", std::nan("")},
                                               {"gpu-memtest/errors:6", 17},
                                               {"gpu-memtest/tested_gib:6", 71},
                                               {"gpu-health/ecc_uncorrected_volatile:7", 2},
                                               {"gpu-health/ecc_corrected_volatile:7", 900},
                                               {"gpu-health/row_remap_failure:4", 1},
                                               {"gpu-gemm/bf16_tflops:0", 1.0},
                                               {"disk/return_code", 1}}));
  ASSERT_TRUE(nf.defective);
  std::vector<std::pair<std::string, std::string>> named;
  for (const Finding& f : nf.findings) {
    EXPECT_EQ(FindingTestName(f.test), "health") << f.metric;
    EXPECT_EQ(f.severity, Severity::kCritical) << f.metric;
    named.emplace_back(ComponentName(f.component), f.metric);
  }
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"GPU 3", "gpu-presence/missing:3"},
      {"GPU 5", "gpu-presence/pcie_lanes_missing:5"},
      {"GPU 2", "gpu-stress/miscompares:2"},
      {"GPU 6", "gpu-memtest/errors:6"},
      {"GPU 7", "gpu-health/ecc_uncorrected_volatile:7"},
      {"GPU 4", "gpu-health/row_remap_failure:4"}};
  EXPECT_EQ(named, expected);
  EXPECT_FALSE(
      JudgeHealth(OneNode({{"gpu-presence/missing:0", 0}, {"disk/return_code", 1}})).defective);
  EXPECT_FALSE(JudgeHealth(FleetTable()).defective);
}

// Learned criteria judge a node of another hardware class with a "class" finding; the fixed
// rules still name what they see, so a node that lost a GPU (a class of its own, "7x ...") is
// defective with the reason, not only an unknown class.
TEST(HealthTest, JudgeAppliesTheRulesWhateverTheClass) {
  LearnedCriteria c;  // two classes: ClassFor judges any node by the only class there is
  c.classes.emplace_back().hardware = "8x NVIDIA H100 80GB HBM3";
  c.classes.emplace_back().hardware = "8x NVIDIA A100-SXM4-80GB";
  const std::vector<NodeFindings> v =
      Judge(OneNode({{"gpu-presence/missing:7", 1}}, "7x NVIDIA H100 80GB HBM3"), c);
  ASSERT_EQ(v.size(), 1u);
  ASSERT_TRUE(v[0].defective);
  ASSERT_EQ(v[0].findings.size(), 2u);
  EXPECT_EQ(FindingTestName(v[0].findings[0].test), "class");
  EXPECT_EQ(ComponentName(v[0].findings[1].component), "GPU 7");
  EXPECT_EQ(FindingTestName(v[0].findings[1].test), "health");
  // Of its own class, the rule alone names it.
  const std::vector<NodeFindings> own = Judge(OneNode({{"gpu-stress/miscompares:1", 3}}), c);
  ASSERT_EQ(own[0].findings.size(), 1u);
  EXPECT_EQ(own[0].findings[0].metric, "gpu-stress/miscompares:1");
}

}  // namespace
}  // namespace vigil::learned
