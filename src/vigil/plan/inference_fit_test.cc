#include "vigil/plan/inference_fit.h"

#include <gtest/gtest.h>

namespace vigil::plan {
namespace {

TEST(InferenceFitTest, RecoversTheParametersOfExactData) {
  std::vector<LatencySample> samples;
  for (int64_t p : {128, 1024, 4096}) {
    for (int64_t o : {1, 64, 512}) {
      samples.push_back(
          {p, o, 0.02 + 5e-5 * static_cast<double>(p) + 0.015 * static_cast<double>(o - 1)});
    }
  }
  Result<LatencyFit> fit = FitLatencies(samples);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_TRUE(fit->prompt_slope_fitted);
  EXPECT_NEAR(fit->prefill_base_s, 0.02, 1e-9);
  EXPECT_NEAR(fit->prefill_per_token_s, 5e-5, 1e-12);
  EXPECT_NEAR(fit->per_token_s, 0.015, 1e-12);
  EXPECT_LT(fit->rms_residual_s, 1e-9);
  EXPECT_NEAR(fit->LatencySeconds(2000, 101), 0.02 + 0.1 + 1.5, 1e-9);
  EXPECT_EQ(fit->samples, 9);
}

TEST(InferenceFitTest, OnePromptLengthFitsItsPrefillOnly) {
  const std::vector<LatencySample> samples = {{500, 10, 0.3}, {500, 110, 1.3}, {500, 60, 0.81}};
  Result<LatencyFit> fit = FitLatencies(samples);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_FALSE(fit->prompt_slope_fitted);
  EXPECT_NEAR(fit->per_token_s, 0.01, 1e-3);
  EXPECT_GT(fit->rms_residual_s, 0);
}

TEST(InferenceFitTest, RefusesSamplesThatCannotDetermineIt) {
  EXPECT_FALSE(FitLatencies({}).ok());
  const std::vector<LatencySample> same_output = {{100, 10, 1}, {200, 10, 2}};
  EXPECT_FALSE(FitLatencies(same_output).ok());
  // Prompt and output lengths move together: p = 100 o, so a_1 and b are not separable.
  const std::vector<LatencySample> collinear = {{100, 2, 1}, {200, 3, 2}, {300, 4, 3}};
  EXPECT_NE(FitLatencies(collinear).status().message().find("cannot separate"), std::string::npos);
  const std::vector<LatencySample> two = {{100, 2, 1}, {200, 3, 2}};
  EXPECT_FALSE(FitLatencies(two).ok());
}

TEST(InferenceFitTest, ReadsTheCsvInAnyColumnOrder) {
  Result<std::vector<LatencySample>> s = ParseLatencies(
      "latency_s,prompt_tokens,output_tokens\n1.5,128,64\n\n0.25,2048,1\r\n", "lat.csv");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[1].prompt_tokens, 2048);
  EXPECT_EQ((*s)[1].output_tokens, 1);
  EXPECT_DOUBLE_EQ((*s)[0].latency_s, 1.5);
}

TEST(InferenceFitTest, NamesFileLineAndFieldOfEachProblem) {
  auto error = [](std::string_view text) {
    return ParseLatencies(text, "lat.csv").status().message();
  };
  const std::string header = "prompt_tokens,output_tokens,latency_s\n";
  EXPECT_EQ(error(""), "lat.csv:1: header: empty file");
  EXPECT_EQ(error(header + "128,64,1\n128,x,1\n"),
            "lat.csv:3: output_tokens: \"x\" is not a whole number of tokens from 1 to 16777216");
  EXPECT_EQ(error(header + "12.5,64,1\n"),
            "lat.csv:2: prompt_tokens: \"12.5\" is not a whole number of tokens from 1 to "
            "16777216");
  EXPECT_EQ(error(header + "128,64,-1\n"),
            "lat.csv:2: latency_s: \"-1\" is not a positive number of seconds up to 3.1536e+07");
  EXPECT_EQ(error(header + "128,64,nan\n").rfind("lat.csv:2: latency_s:", 0), 0u);
  EXPECT_EQ(error(header + "128,64\n").rfind("lat.csv:2:", 0), 0u);
  EXPECT_EQ(error("prompt_tokens,latency_s\n").rfind("lat.csv:1:", 0), 0u);
}

}  // namespace
}  // namespace vigil::plan
