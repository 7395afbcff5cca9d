#include "vigil/core/duration.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "vigil/core/text.h"

namespace vigil {
namespace {

struct Unit {
  std::string_view name;
  double seconds;
};

constexpr Unit kUnits[] = {{"ms", 1e-3},
                           {"s", 1},
                           {"m", kSecondsPerMinute},
                           {"min", kSecondsPerMinute},
                           {"h", kSecondsPerHour},
                           {"d", kSecondsPerDay},
                           {"w", 7 * kSecondsPerDay}};

}  // namespace

Result<double> ParseDuration(std::string_view text) {
  const std::string_view s = Trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || !std::isfinite(value) || value < 0) {
    return Status::InvalidArgument(
        fmt::format("bad duration {}: expected a non-negative number with a unit such as 90s, "
                    "5m, 2h or 1d",
                    Quote(text)));
  }
  const std::string_view unit = Trim(std::string_view(end, s.data() + s.size() - end));
  if (unit.empty()) return value;
  for (const Unit& u : kUnits) {
    if (u.name == unit) return value * u.seconds;
  }
  return Status::InvalidArgument(fmt::format(
      "bad duration {}: unknown unit {} (use ms, s, m, h, d or w)", Quote(text), Quote(unit)));
}

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds)) return fmt::format("{}", seconds);
  const double a = std::fabs(seconds);
  if (a >= 2 * kSecondsPerDay) return fmt::format("{:.3g} d", seconds / kSecondsPerDay);
  if (a >= kSecondsPerHour) return fmt::format("{:.3g} h", seconds / kSecondsPerHour);
  if (a >= kSecondsPerMinute) return fmt::format("{:.3g} min", seconds / kSecondsPerMinute);
  return fmt::format("{:.3g} s", seconds);
}

}  // namespace vigil
