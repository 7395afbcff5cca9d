#include "vigil/core/clock.h"

#include <fmt/format.h>
#include <time.h>

#include <chrono>
#include <cmath>
#include <thread>

namespace vigil {
namespace {

class RealClock : public Clock {
 public:
  double WallSeconds() const override { return Read(CLOCK_REALTIME); }
  double MonotonicSeconds() const override { return Read(CLOCK_MONOTONIC); }
  void SleepFor(double seconds, const std::atomic<bool>* interrupted) override {
    constexpr double kSlice = 0.1;  // how soon an interruption is noticed
    for (double waited = 0; waited < seconds; waited += kSlice) {
      if (interrupted != nullptr && interrupted->load()) return;
      std::this_thread::sleep_for(
          std::chrono::duration<double>(std::min(kSlice, seconds - waited)));
    }
  }

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

std::string FormatIsoSeconds(int64_t unix_seconds) {
  using namespace std::chrono;
  const sys_seconds t{seconds{unix_seconds}};
  const sys_days day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count());
}

namespace {

// Reads exactly `n` digits at `s[pos]`.
std::optional<int> Digits(std::string_view s, size_t pos, size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<int64_t> ParseIsoSeconds(std::string_view s) {
  using namespace std::chrono;
  const auto y = Digits(s, 0, 4), mo = Digits(s, 5, 2), d = Digits(s, 8, 2), h = Digits(s, 11, 2),
             mi = Digits(s, 14, 2), se = Digits(s, 17, 2);
  if (!y || !mo || !d || !h || !mi || !se || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    const size_t digits_start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == digits_start) return std::nullopt;
  }
  if (pos < s.size() && s[pos] == 'Z') ++pos;
  if (pos != s.size()) return std::nullopt;
  const year_month_day ymd{year{*y}, month{static_cast<unsigned>(*mo)},
                           day{static_cast<unsigned>(*d)}};
  if (!ymd.ok() || *h > 23 || *mi > 59 || *se > 60) return std::nullopt;
  return sys_days{ymd}.time_since_epoch().count() * int64_t{86400} + *h * 3600 + *mi * 60 + *se;
}

}  // namespace vigil
