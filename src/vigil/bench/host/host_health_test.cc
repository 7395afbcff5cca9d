#include "vigil/bench/host/host_health.h"

#include <gtest/gtest.h>

#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

constexpr std::string_view kMeminfo =
    "MemTotal:       16322436 kB\n"
    "MemFree:          512000 kB\n"
    "MemAvailable:    8161218 kB\n"
    "Buffers:          100000 kB\n";

TEST(HostHealthTest, MeminfoGivesTotalAndAvailable) {
  HostReading r;
  ASSERT_TRUE(ParseMeminfo(kMeminfo, r).ok());
  EXPECT_DOUBLE_EQ(r.memory_total_bytes, 16322436.0 * 1024);
  EXPECT_DOUBLE_EQ(r.memory_available_bytes, 8161218.0 * 1024);
}

TEST(HostHealthTest, ABadMeminfoNamesTheField) {
  HostReading r;
  EXPECT_EQ(ParseMeminfo("MemTotal: 12 kB\n", r).message(), "meminfo: no MemAvailable field");
  EXPECT_EQ(ParseMeminfo("MemTotal: x kB\nMemAvailable: 1 kB\n", r).message(),
            "meminfo MemTotal: \"x\" is not a number");
  EXPECT_EQ(ParseMeminfo("MemTotal: 12 MB\n", r).message(),
            "meminfo MemTotal: \"12 MB\" is not in kB");
  EXPECT_FALSE(ParseMeminfo("", r).ok());
}

TEST(HostHealthTest, AFilesystemBelowTheMinimumIsFull) {
  HostReading r;
  r.memory_total_bytes = 64.0 * (1 << 30);
  r.root_free_bytes = 0.5 * (1 << 30);
  r.scratch_free_bytes = 100.0 * (1 << 30);
  const std::vector<Metric> m = HostHealthMetrics(r, 1 << 30);
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0].key.ToString(), "host-health/memory_total_gib");
  EXPECT_DOUBLE_EQ(m[0].value, 64);
  EXPECT_EQ(m[4].key.ToString(), "host-health/root_full");
  EXPECT_EQ(m[4].value, 1);
  EXPECT_EQ(m[5].key.ToString(), "host-health/scratch_full");
  EXPECT_EQ(m[5].value, 0);
}

TEST(HostHealthTest, ReadsThisHost) {
  testing::TempDir dir;
  const Result<HostReading> r = ReadHost("/proc", dir.path());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->memory_total_bytes, 0);
  EXPECT_GT(r->scratch_free_bytes, 0);
  EXPECT_EQ(ReadHost("/nonexistent", dir.path()).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(ReadHost("/proc", "/nonexistent/dir").ok());
}

}  // namespace
}  // namespace vigil
