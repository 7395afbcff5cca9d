#include "vigil/bench/cuda/batch_timing.h"

#include <gtest/gtest.h>

#include <functional>

namespace vigil::gpu {
namespace {

TEST(BatchTimingTest, ABatchLastsAboutOneSample) {
  EXPECT_EQ(OpsPerBatch(1e-3), 30);    // 30 ms of 1 ms products
  EXPECT_EQ(OpsPerBatch(0.7e-3), 43);  // rounded to the nearest
  EXPECT_EQ(OpsPerBatch(0.1), 1);      // longer than a sample: one at a time
  EXPECT_EQ(OpsPerBatch(5.0), 1);
  EXPECT_EQ(OpsPerBatch(1e-12), 1 << 20);  // near-empty: capped
  EXPECT_EQ(OpsPerBatch(0.0), 1 << 20);    // below the timer's resolution
  BatchTiming t;
  t.sample_s = 0.05;
  t.max_ops = 10;
  EXPECT_EQ(OpsPerBatch(1e-3, t), 10);
  EXPECT_EQ(OpsPerBatch(10e-3, t), 5);
}

// A fake operation: `op_s` a run, and `cold_s` more for the very first (loading kernels).
struct FakeOp {
  double cold_s = 0, op_s = 1e-3;
  std::vector<int> batches;
  Result<double> operator()(int n) {
    const double s = n * op_s + (batches.empty() ? cold_s : 0);
    batches.push_back(n);
    return s;
  }
};

TEST(BatchTimingTest, WarmsUpInDoublingBatchesThenTimesWholeBatches) {
  FakeOp op;
  Result<std::vector<double>> s = TimePerOp(3, std::ref(op));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // Warm-up: 1, 2, 4, 8, 16, 30 (a sample's worth), then 30s until 200 ms have passed:
  // 31 + 30 * 6 = 211 ms. Then three timed batches of 30.
  const std::vector<int> want = {1, 2, 4, 8, 16, 30, 30, 30, 30, 30, 30, 30, 30, 30};
  EXPECT_EQ(op.batches, want);
  ASSERT_EQ(s->size(), 3u);
  for (const double x : *s) EXPECT_DOUBLE_EQ(x, 1e-3);  // seconds per operation
}

TEST(BatchTimingTest, ASlowColdStartDoesNotSizeTheBatches) {
  FakeOp op;
  op.cold_s = 0.5;  // the first call loads kernels
  Result<std::vector<double>> s = TimePerOp(2, std::ref(op));
  ASSERT_TRUE(s.ok());
  // 500 ms passed in one run; the second (at least two runs) shows 1 ms each: batches of 30.
  EXPECT_EQ(op.batches, (std::vector<int>{1, 1, 30, 30}));
}

TEST(BatchTimingTest, SlowOperationsRunOneAtATimeAfterTwoWarmUps) {
  FakeOp op;
  op.op_s = 0.4;
  Result<std::vector<double>> s = TimePerOp(2, std::ref(op));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(op.batches, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(*s, (std::vector<double>{0.4, 0.4}));
}

TEST(BatchTimingTest, AFailedBatchIsTheError) {
  int calls = 0;
  const auto fails_third = [&](int n) -> Result<double> {
    if (++calls == 3) return Status::Internal("cudaEventSynchronize: cudaErrorIllegalAddress");
    return n * 1e-3;
  };
  const Result<std::vector<double>> s = TimePerOp(5, fails_third);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(), "cudaEventSynchronize: cudaErrorIllegalAddress");
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace vigil::gpu
