#include "vigil/core/clock.h"

#include <fmt/format.h>
#include <time.h>

#include <cmath>

namespace vigil {
namespace {

class RealClock : public Clock {
 public:
  double WallSeconds() const override { return Read(CLOCK_REALTIME); }
  double MonotonicSeconds() const override { return Read(CLOCK_MONOTONIC); }

 private:
  static double Read(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
};

struct tm ToUtc(double unix_seconds) {
  const auto whole = static_cast<time_t>(std::floor(unix_seconds));
  struct tm t {};
  gmtime_r(&whole, &t);
  return t;
}

}  // namespace

Clock& SystemClock() {
  static RealClock clock;
  return clock;
}

std::string FormatUtc(double unix_seconds) {
  const struct tm t = ToUtc(unix_seconds);
  auto millis = static_cast<int>((unix_seconds - std::floor(unix_seconds)) * 1000.0);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z", t.tm_year + 1900,
                     t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, millis);
}

std::string FormatUtcCompact(double unix_seconds) {
  const struct tm t = ToUtc(unix_seconds);
  return fmt::format("{:04d}{:02d}{:02d}T{:02d}{:02d}{:02d}Z", t.tm_year + 1900, t.tm_mon + 1,
                     t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec);
}

}  // namespace vigil
