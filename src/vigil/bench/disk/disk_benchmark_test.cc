#include "vigil/bench/disk/disk_benchmark.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "vigil/bench/runner.h"
#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

class DiskTest : public ::testing::Test {
 protected:
  void SetUp() override { opts_.scratch_root = tmp_.path(); }
  vigil::testing::TempDir tmp_;  // under the build tree: /tmp may be a tmpfs without O_DIRECT
  const std::filesystem::path dir_ = tmp_.path();
  RunnerOptions opts_;
};

TEST_F(DiskTest, MeasuresAndCleansUp) {
  auto b = MakeDiskBenchmark();
  opts_.params["disk"] = {
      {"file_size", "8M"}, {"random_time", "0.1"}, {"repetitions", "1"}, {"random_jobs", "2"}};
  ASSERT_TRUE(ValidateParams({b.get()}, opts_).ok());
  BenchContext ctx = MakeContext(*b, opts_);
  Status avail = b->Available(ctx);
  if (!avail.ok()) GTEST_SKIP() << avail.message();
  Result<std::vector<Metric>> m = b->Run(ctx);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[0].key.ToString(), "disk/seq_write_mbps");
  EXPECT_EQ((*m)[1].key.ToString(), "disk/seq_read_mbps");
  EXPECT_EQ((*m)[2].key.ToString(), "disk/rand_read_iops");
  for (const Metric& x : *m) EXPECT_TRUE(std::isfinite(x.value) && x.value > 0) << x.key.ToString();
  EXPECT_TRUE(std::filesystem::is_empty(dir_));  // the test file is gone
}

TEST_F(DiskTest, NotEnoughSpaceIsAClearError) {
  auto b = MakeDiskBenchmark();
  opts_.params["disk"] = {{"file_size", "16T"}};
  BenchContext ctx = MakeContext(*b, opts_);
  if (!b->Available(ctx).ok()) GTEST_SKIP();
  Result<std::vector<Metric>> m = b->Run(ctx);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("not enough free space"), std::string::npos)
      << m.status().message();
}

TEST_F(DiskTest, BadBlockSizeIsRejected) {
  auto b = MakeDiskBenchmark();
  opts_.params["disk"] = {{"block_size", "1000"}};
  Result<std::vector<Metric>> m = b->Run(MakeContext(*b, opts_));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(DiskTest, UnavailableOnAMissingDirectory) {
  auto b = MakeDiskBenchmark();
  opts_.scratch_root = (dir_ / "missing").string();
  EXPECT_EQ(b->Available(MakeContext(*b, opts_)).code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace vigil
