#include "vigil/plan/search.h"

#include <gtest/gtest.h>

namespace vigil::plan {
namespace {

SearchRequest Request(const ModelSpec& m, int64_t gpus, int64_t batch) {
  SearchRequest r;
  r.model = m;
  r.hw = *DatasheetProfile("h100");
  r.gpus = gpus;
  r.global_batch = batch;
  return r;
}

TEST(SearchLayoutsTest, RanksValidFittingLayoutsByThroughput) {
  SearchRequest r = Request(GptModel(32, 4096, 32), 64, 256);
  r.top = 20;
  Result<SearchResult> s = SearchLayouts(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->best.size(), 20u);
  EXPECT_GT(s->layouts, s->fitting);
  for (size_t i = 0; i < s->best.size(); ++i) {
    const Candidate& c = s->best[i];
    EXPECT_TRUE(CheckLayout(r.model, c.layout, r.hw).ok());
    EXPECT_TRUE(c.prediction.fits);
    const TrainPrediction again = PredictTrain(r.model, c.layout, r.hw);
    EXPECT_DOUBLE_EQ(again.tokens_per_s, c.prediction.tokens_per_s);
    if (i > 0) {
      EXPECT_GE(s->best[i - 1].prediction.tokens_per_s, c.prediction.tokens_per_s);
    }
  }
}

TEST(SearchLayoutsTest, NamesTheLeastMemoryWhenNothingFits) {
  SearchRequest r = Request(GptModel(128, 25600, 160), 8, 8);
  Result<SearchResult> s = SearchLayouts(r);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().message().starts_with(
      "the model fits nowhere: no layout of it on 8 GPUs fits in 80 GB per GPU (the least memory"))
      << s.status().message();
}

TEST(SearchLayoutsTest, SaysWhenNoLayoutIsValid) {
  SearchRequest r =
      Request(GptModel(7, 4096, 32), 7 * 3, 5);  // 21 GPUs, batch 5: DP x mb never fits
  Result<SearchResult> s = SearchLayouts(r);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().message().starts_with("no valid layout of the model on 21 GPUs"))
      << s.status().message();
}

// AMP: the slower type's stages get fewer blocks, which beats spreading them evenly.
TEST(SearchLayoutsTest, PlacesStagesBySpeedOnAMixedCluster) {
  SearchRequest r = Request(GptModel(48, 8192, 64), 128, 512);
  r.second = *DatasheetProfile("a100");
  r.second_gpus = 64;
  Result<SearchResult> s = SearchLayouts(r);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const Candidate& best = s->best.front();
  ASSERT_TRUE(best.even.has_value());
  EXPECT_GT(best.first.layers, best.second.layers);
  EXPECT_EQ(best.first.stages * best.first.layers + best.second.stages * best.second.layers, 48);
  EXPECT_EQ(best.second.stages * best.layout.tp * best.layout.dp * best.layout.cp, 64);
  EXPECT_GT(best.prediction.tokens_per_s, best.even->tokens_per_s);
}

TEST(BalanceStagesTest, EqualTypesSplitEvenly) {
  const ModelSpec m = GptModel(48, 8192, 64);
  Layout l;
  l.gpus = 64, l.tp = 8, l.pp = 4, l.dp = 2, l.global_batch = 64;
  const HardwareProfile h100 = *DatasheetProfile("h100");
  auto [f, s] = BalanceStages(m, l, h100, h100, 2);
  EXPECT_EQ(f.layers, 12);
  EXPECT_EQ(s.layers, 12);
}

TEST(SearchLayoutsTest, RefusesAMalformedRequest) {
  SearchRequest r = Request(GptModel(32, 4096, 32), 64, 256);
  r.second = *DatasheetProfile("a100");
  r.second_gpus = 64;
  EXPECT_EQ(SearchLayouts(r).status().message(),
            "the second GPU type's count (64) must be at least 1 and below all GPUs (64)");
}

}  // namespace
}  // namespace vigil::plan
