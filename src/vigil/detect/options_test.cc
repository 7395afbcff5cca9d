#include "vigil/detect/options.h"

#include <gtest/gtest.h>

#include <limits>

namespace vigil::detect {
namespace {

TEST(DetectorOptionsTest, DefaultsAreValid) { EXPECT_TRUE(ValidateDetectorOptions({}).ok()); }

TEST(DetectorOptionsTest, EachOptionOutsideItsRangeIsNamed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const struct {
    void (*set)(DetectorOptions&);
    const char* message;
  } cases[] = {
      {[](DetectorOptions& o) { o.step = 0; }, "--step: 0s is outside [10ms, 1h]"},
      {[](DetectorOptions& o) { o.step = -1; }, "--step: -1s is outside [10ms, 1h]"},
      {[](DetectorOptions& o) { o.lateness = -1; }, "lateness: -1s is outside [0s, 1h]"},
      {[](DetectorOptions& o) { o.missing_grace = 8 * 86400.0; },
       "--grace: 8d is outside [0s, 7d]"},
      {[](DetectorOptions& o) { o.rearm = -5; }, "--rearm: -5s is outside [0s, 30d]"},
      {[](DetectorOptions& o) { o.peer.persistence_s = 0.5; },
       "--persistence: 500ms is outside [1s, 1h]"},
      {[](DetectorOptions& o) { o.peer.warmup_s = 7200; }, "--warmup: 2h is outside [0s, 1h]"},
      {[](DetectorOptions& o) { o.peer.z_min = 0.1; }, "--min-sd: 0.1 is outside [0.5, 1000]"},
      {[](DetectorOptions& o) { o.peer.effect_min = 0; },
       "--min-effect: 0 is outside [0.001, 100]"},
      {[](DetectorOptions& o) { o.peer.strong_effect = -0.1; },
       "--strong-effect: -0.1 is outside [0, 100]"},
  };
  for (const auto& c : cases) {
    DetectorOptions o;
    c.set(o);
    const Status s = ValidateDetectorOptions(o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), c.message);
  }
  DetectorOptions o;
  o.step = nan;
  EXPECT_FALSE(ValidateDetectorOptions(o).ok());
  o = {};
  o.peer.strong_effect = nan;
  EXPECT_FALSE(ValidateDetectorOptions(o).ok());
  o.peer.strong_effect = 0;  // off
  EXPECT_TRUE(ValidateDetectorOptions(o).ok());
}

TEST(DetectorOptionsTest, CreateRefusesOptionsOutOfRange) {
  const telemetry::Normalizer names(telemetry::SignalMap::Default(), true);
  DetectorOptions o;
  EXPECT_TRUE(Detector::Create(o, names).ok());
  o.step = 0;
  EXPECT_EQ(Detector::Create(o, names).status().message(), "--step: 0s is outside [10ms, 1h]");
}

}  // namespace
}  // namespace vigil::detect
