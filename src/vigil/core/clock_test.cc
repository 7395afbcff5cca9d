#include "vigil/core/clock.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(ClockTest, FormatsUtc) {
  // 1700000000 is 2023-11-14 22:13:20 UTC.
  EXPECT_EQ(FormatUtc(1700000000.25), "2023-11-14T22:13:20.250Z");
  EXPECT_EQ(FormatUtcCompact(1700000000.9), "20231114T221320Z");
  EXPECT_EQ(FormatUtc(0), "1970-01-01T00:00:00.000Z");
}

TEST(ClockTest, FakeClockAdvancesBoth) {
  FakeClock c(100.0);
  c.Advance(2.5);
  EXPECT_DOUBLE_EQ(c.WallSeconds(), 102.5);
  EXPECT_DOUBLE_EQ(c.MonotonicSeconds(), 2.5);
}

TEST(ClockTest, SystemClockIsMonotonic) {
  const double a = SystemClock().MonotonicSeconds();
  const double b = SystemClock().MonotonicSeconds();
  EXPECT_LE(a, b);
  EXPECT_GT(SystemClock().WallSeconds(), 1.6e9);  // after 2020
}

TEST(ClockTest, SleepForMovesAFakeClockUnlessInterrupted) {
  FakeClock clock(100);
  std::atomic<bool> interrupted{false};
  clock.SleepFor(2.5, &interrupted);
  EXPECT_DOUBLE_EQ(clock.WallSeconds(), 102.5);
  interrupted = true;
  clock.SleepFor(10, &interrupted);
  EXPECT_DOUBLE_EQ(clock.WallSeconds(), 102.5);
}

TEST(ClockTest, SystemClockSleepStopsSoonAfterAnInterruption) {
  std::atomic<bool> interrupted{true};
  const double start = SystemClock().MonotonicSeconds();
  SystemClock().SleepFor(30, &interrupted);
  EXPECT_LT(SystemClock().MonotonicSeconds() - start, 1);
  SystemClock().SleepFor(0.05, nullptr);
  EXPECT_GE(SystemClock().MonotonicSeconds() - start, 0.05);
}

TEST(BackoffTest, DoublesUpToItsMostAndStartsOverAfterASuccess) {
  Backoff b(5, 30);
  EXPECT_EQ(b.Fail(), 5);
  EXPECT_EQ(b.Fail(), 10);
  EXPECT_EQ(b.Fail(), 20);
  EXPECT_EQ(b.Fail(), 30);
  EXPECT_EQ(b.Fail(), 30);
  b.Reset();
  EXPECT_EQ(b.Fail(), 5);
}

TEST(IsoSecondsTest, RoundTripsAndRejects) {
  EXPECT_EQ(FormatIsoSeconds(0), "1970-01-01T00:00:00");
  EXPECT_EQ(FormatIsoSeconds(1795339800), "2026-11-22T09:30:00");
  EXPECT_EQ(ParseIsoSeconds("2026-11-22T09:30:00"), 1795339800);
  EXPECT_EQ(ParseIsoSeconds("2026-11-22 09:30:00.75Z"), 1795339800);
  EXPECT_EQ(ParseIsoSeconds("2024-02-29T00:00:00"), 1709164800);
  EXPECT_EQ(FormatIsoSeconds(-1), "1969-12-31T23:59:59");
  for (const char* bad : {"", "Unknown", "2026-11-22", "2026-13-01T00:00:00", "2023-02-29T00:00:00",
                          "2026-11-22T24:00:00", "2026-11-22T09:30:00x", "2026-11-22T09:30:00.",
                          "2026/11/22T09:30:00"}) {
    EXPECT_FALSE(ParseIsoSeconds(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace vigil
