#include "vigil/results/metric_key.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(MetricKeyTest, PlainKey) {
  Result<MetricKey> k = MetricKey::Parse("cpu-stream/triad_gbps");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->benchmark, "cpu-stream");
  EXPECT_EQ(k->metric, "triad_gbps");
  EXPECT_FALSE(k->index.has_value());
  EXPECT_EQ(k->ToString(), "cpu-stream/triad_gbps");
}

TEST(MetricKeyTest, ComponentIndex) {
  Result<MetricKey> k = MetricKey::Parse("gpu-gemm/bf16_tflops:3");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->metric, "bf16_tflops");
  ASSERT_TRUE(k->index.has_value());
  EXPECT_EQ(k->index->first, 3);
  EXPECT_FALSE(k->index->second.has_value());
  EXPECT_EQ(k->BaseName(), "gpu-gemm/bf16_tflops");
  EXPECT_EQ(k->ToString(), "gpu-gemm/bf16_tflops:3");
}

TEST(MetricKeyTest, LinkIndex) {
  Result<MetricKey> k = MetricKey::Parse("gpu-copy/p2p_gbps:0-3");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->index, (ComponentIndex{0, 3}));
  EXPECT_EQ(k->ToString(), "gpu-copy/p2p_gbps:0-3");
}

TEST(MetricKeyTest, SuperBenchShapes) {
  Result<MetricKey> k = MetricKey::Parse("bert_models/pytorch-bert-base/steptime_train_float32");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->benchmark, "bert_models");
  EXPECT_EQ(k->metric, "pytorch-bert-base/steptime_train_float32");

  Result<MetricKey> a = MetricKey::Parse("nccl-bw:ib/allreduce_8589934592_busbw:0");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->benchmark, "nccl-bw:ib");
  EXPECT_EQ(a->BenchmarkName(), "nccl-bw");
  EXPECT_EQ(a->index->first, 0);
}

TEST(MetricKeyTest, NonNumericSuffixStaysInMetric) {
  Result<MetricKey> k = MetricKey::Parse("x/a:b");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->metric, "a:b");
  EXPECT_FALSE(k->index.has_value());
  EXPECT_EQ(MetricKey::Parse("x/a:1-")->metric, "a:1-");
}

TEST(MetricKeyTest, RoundTripsEveryShape) {
  for (const char* s : {"a/b", "a/b:0", "a/b:12-7", "a:x/b/c:4", "a/b:c:5"}) {
    Result<MetricKey> k = MetricKey::Parse(s);
    ASSERT_TRUE(k.ok()) << s;
    EXPECT_EQ(k->ToString(), s);
  }
}

TEST(MetricKeyTest, LeadingZerosAreCanonicalised) {
  Result<MetricKey> k = MetricKey::Parse("b/m:007-010");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->index, (ComponentIndex{7, 10}));
  EXPECT_EQ(k->ToString(), "b/m:7-10");
}

TEST(MetricKeyTest, RejectsMalformed) {
  for (const char* s : {"", "node", "/metric", "bench/", "bench/:3", "b/m:99999999999",
                        "b/m:1-99999999999", "b/m\n"}) {
    Result<MetricKey> k = MetricKey::Parse(s);
    ASSERT_FALSE(k.ok()) << s;
    EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace vigil
