#include "vigil/learned/findings_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vigil::learned {
namespace {

FleetTable TwoNodes() {
  FleetRow n1, n2;
  n1.node = "n1";
  n1.values = {{"gpu-gemm/bf16_tflops:3", 700}};
  n2.node = "n2";
  n2.values = {{"gpu-gemm/bf16_tflops:3", 800}};
  return TableOfRows({n1, n2}, "test");
}

Finding ClassFinding(std::string metric, double value) {
  return Finding{ComponentId{"node", std::nullopt},
                 std::move(metric),
                 FindingTest::kClass,
                 value,
                 0,
                 0,
                 0,
                 INFINITY,
                 Severity::kCritical};
}

// The class findings read as sentences, not "node  0  0..0  critical".
TEST(FindingsTextTest, ClassFindingsAreSentences) {
  EXPECT_EQ(FindingSentence(ClassFinding("8x NVIDIA A100", 0)),
            "no criteria were learned for its hardware class \"8x NVIDIA A100\": judged by the "
            "fixed rules only (critical)");
  EXPECT_EQ(FindingSentence(ClassFinding("", 0)),
            "it does not say its hardware class, and the criteria hold more than one: judged by "
            "the fixed rules only (critical)");
  EXPECT_EQ(FindingSentence(ClassFinding("7 of 12 families", 7.0 / 12)),
            "its values leave the healthy modes of 7 of 12 families: it is not the hardware class "
            "it says it is (or is misconfigured throughout), and its other fleet findings are left "
            "out (critical)");
}

TEST(FindingsTextTest, ComponentFindingsAreSentences) {
  Finding f{
      ParseComponent("GPU 3"), "gpu-gemm/*:3", FindingTest::kComponent, 5.26, -INFINITY, 3.1, 0, 7,
      Severity::kMinor};
  EXPECT_EQ(FindingSentence(f),
            "GPU 3: its gpu-gemm metrics together lie 5.3 robust sigmas on the worse side of the "
            "fleet's (healthy components reach 3.1) (minor)");
  f.metric = "gpu-copy+gpu-membw/*";
  EXPECT_NE(FindingSentence(f).find("its gpu-copy and gpu-membw metrics"), std::string::npos);
  f.test = FindingTest::kFleet;
  EXPECT_EQ(FindingSentence(f), "");
}

// Value findings stay in the table; sentence findings follow it, one line each with the node.
TEST(FindingsTextTest, RenderPutsSentencesUnderTheTable) {
  std::vector<NodeFindings> verdicts(2);
  verdicts[0].findings.push_back(Finding{ParseComponent("GPU 3"), "gpu-gemm/bf16_tflops:3",
                                         FindingTest::kFleet, 700, 760, 840, -0.125, 5,
                                         Severity::kMajor});
  verdicts[1].findings.push_back(ClassFinding("8x NVIDIA A100", 0));
  const std::string text = RenderFindings(TwoNodes(), verdicts);
  EXPECT_EQ(text.rfind("NODE  COMPONENT  METRIC", 0), 0u) << text;
  EXPECT_NE(text.find("n1    GPU 3      gpu-gemm/bf16_tflops:3  700    760..840  -12.5%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n\nn2: no criteria were learned"), std::string::npos) << text;
  EXPECT_EQ(text.find("0..0"), std::string::npos) << text;
  // Only sentences: no table at all.
  verdicts[0].findings.clear();
  EXPECT_EQ(RenderFindings(TwoNodes(), verdicts).rfind("n2: no criteria", 0), 0u);
  verdicts[1].findings.clear();
  EXPECT_EQ(RenderFindings(TwoNodes(), verdicts), "");
}

}  // namespace
}  // namespace vigil::learned
