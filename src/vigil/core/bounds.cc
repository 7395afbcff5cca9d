#include "vigil/core/bounds.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace vigil {
namespace {

// Durations as a user writes them, in the largest unit that holds the value whole: 10ms, 90s,
// 5m, 2h, 3650d; other values in seconds.
std::string FormatSecondsBound(double s) {
  struct Unit {
    const char* name;
    double seconds;
  };
  constexpr Unit kUnits[] = {{"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}, {"ms", 1e-3}};
  if (s == 0) return "0s";
  for (const Unit& u : kUnits) {
    const double n = s / u.seconds;  // 0.01 / 1e-3 is 10.000000000000002
    if (n >= 1 && std::fabs(n - std::round(n)) <= 1e-9 * n) {
      return FormatBound(std::round(n)) + u.name;
    }
  }
  return FormatBound(s) + "s";
}

}  // namespace

std::string FormatBound(double v) {
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) <= kExactIntegers) {
    return fmt::format("{}", static_cast<int64_t>(v));
  }
  return fmt::format("{}", v);
}

std::string Bounds::ToString() const {
  const auto end = [&](double v) { return seconds ? FormatSecondsBound(v) : FormatBound(v); };
  std::string out =
      fmt::format("{}{}, {}{}", lo_open ? '(' : '[', end(lo), end(hi), hi_open ? ')' : ']');
  if (!note.empty()) out += fmt::format(" ({})", note);
  return out;
}

std::string DescribeOutside(double value, const Bounds& bounds, std::string_view text) {
  const std::string shown = !text.empty()       ? std::string(text)
                            : std::isnan(value) ? std::string("NaN")
                            : bounds.seconds    ? FormatSecondsBound(value)
                                                : FormatBound(value);
  return fmt::format("{} is outside {}", shown, bounds.ToString());
}

Status CheckBounds(std::string_view what, double value, const Bounds& bounds,
                   std::string_view text) {
  if (bounds.Contains(value)) return Status::Ok();
  return Status::InvalidArgument(fmt::format("{}: {}", what, DescribeOutside(value, bounds, text)));
}

}  // namespace vigil
