#include "vigil/telemetry/frame.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vigil::telemetry {
namespace {

Point At(double t, uint32_t machine, uint32_t signal, double v) {
  Point p;
  p.time = t;
  p.machine = machine;
  p.signal = signal;
  p.value = v;
  return p;
}

TEST(FrameBuilderTest, AggregatesComponentsAndEmitsStepsInOrder) {
  std::vector<Frame> frames;
  FrameBuilder b(1.0, 1.0, [&](const Frame& f) { frames.push_back(f); });
  b.Add(At(10.0, 0, 0, 1));
  b.Add(At(10.2, 0, 0, 3));
  b.Add(At(10.5, 1, 1, 7));
  b.Add(At(11.0, 0, 0, 5));
  EXPECT_TRUE(frames.empty());  // step 10 waits one step for late points
  b.Add(At(10.9, 1, 0, 2));     // late but within the lateness
  b.Add(At(12.0, 0, 0, 5));
  ASSERT_EQ(frames.size(), 1u);
  const Frame& f = frames[0];
  EXPECT_DOUBLE_EQ(f.time, 10);
  EXPECT_EQ(f.at(0, 0).count, 2u);
  EXPECT_DOUBLE_EQ(f.at(0, 0).mean(), 2);
  EXPECT_DOUBLE_EQ(f.at(0, 0).min, 1);
  EXPECT_DOUBLE_EQ(f.at(0, 0).max, 3);
  EXPECT_DOUBLE_EQ(f.at(1, 1).mean(), 7);
  EXPECT_DOUBLE_EQ(f.at(1, 0).mean(), 2);
  b.Add(At(10.5, 0, 0, 9));  // its step is gone
  EXPECT_EQ(b.late(), 1);
  b.Flush();
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_DOUBLE_EQ(frames[1].time, 11);
  EXPECT_DOUBLE_EQ(frames[2].time, 12);
}

TEST(FrameBuilderTest, GapsAndAdvanceTo) {
  std::vector<double> times;
  FrameBuilder b(1.0, 2.0, [&](const Frame& f) { times.push_back(f.time); });
  b.Add(At(0, 0, 0, 1));
  b.Add(At(1000, 0, 0, 1));  // a long gap does not emit a thousand empty frames
  EXPECT_LE(times.size(), 4u);
  EXPECT_DOUBLE_EQ(times.front(), 0);
  b.AdvanceTo(1010);
  EXPECT_DOUBLE_EQ(times.back(), 1000);
  const size_t n = times.size();
  b.Flush();
  EXPECT_EQ(times.size(), n);
}

// A telemetry timestamp near 9.2e18 s overflowed the frame index (time / step into int64), and a
// span from -9e18 to 9e18 opened frames without limit. Such points are dropped as late.
TEST(FrameBuilderTest, TimesOutsideTheUnixRangeNeitherOverflowNorAllocate) {
  std::vector<Frame> frames;
  FrameBuilder b(1.0, 2.0, [&](const Frame& f) { frames.push_back(f); });
  b.Add(At(-9.2e18, 0, 0, 1));
  b.Add(At(9.2e18, 0, 0, 1));
  b.Add(At(9.3e18, 0, 0, 1));
  b.Add(At(1e300, 0, 0, 1));
  b.Add(At(std::nan(""), 0, 0, 1));
  b.Add(At(-0.5, 0, 0, 1));
  EXPECT_EQ(b.late(), 6);
  b.Add(At(7258118400.0, 0, 0, 1));  // 2200-01-01, the last time accepted
  b.Add(At(0, 0, 0, 1));             // late: before the open step
  EXPECT_EQ(b.late(), 7);
  b.AdvanceTo(1e300);
  b.AdvanceTo(std::nan(""));
  b.Flush();
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_DOUBLE_EQ(frames[0].time, 7258118400.0);
}

TEST(FrameBuilderTest, AStepBelowTheMinimumIsTheMinimum) {
  FrameBuilder b(1e-300, 2.0, [](const Frame&) {});
  EXPECT_DOUBLE_EQ(b.step(), kMinFrameStep);
  b.Add(At(7258118399.0, 0, 0, 1));
  b.Add(At(1.0, 0, 0, 1));
  EXPECT_EQ(b.late(), 1);
}

}  // namespace
}  // namespace vigil::telemetry
