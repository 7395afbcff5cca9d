// Ranges of numeric inputs. Every number Vigil reads from a flag or a file has one (documented in
// docs/formats.md and with each command): a value outside is bad input, reported with the flag or
// the file, line and field that held it, never an overflow, a hang or an allocation without limit
// further in.
#pragma once

#include <string>
#include <string_view>

#include "vigil/core/status.h"

namespace vigil {

// A closed or half-open interval of numbers. NaN lies in no interval.
struct Bounds {
  double lo = 0;
  double hi = 0;
  bool lo_open = false;        // (lo, ...: lo itself is outside
  bool hi_open = false;        // ..., hi): hi itself is outside
  bool seconds = false;        // a duration: the ends are written as 90s, 5m, 30d
  std::string_view note = "";  // said after the interval, e.g. "years 1970 to 2200"

  bool Contains(double v) const {
    return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  }
  // "[1, 1048576]", "(0, 1)", "[10ms, 1h]", "[0, 7258118400] (years 1970 to 2200)".
  std::string ToString() const;
};

// OK when `bounds` contains `value`; else InvalidArgument "<what>: <shown> is outside <bounds>",
// where <shown> is `text` when given (what the user wrote, e.g. "1e9d") and else the value.
Status CheckBounds(std::string_view what, double value, const Bounds& bounds,
                   std::string_view text = "");

// "<shown> is outside <bounds>", the message of CheckBounds without its subject (for CLI11,
// which names the flag itself).
std::string DescribeOutside(double value, const Bounds& bounds, std::string_view text = "");

// A number as the messages write it: integers in full up to 2^53, others in the shortest form
// that reads back ("0.001", "1e+100").
std::string FormatBound(double v);

// Unix time from 1970-01-01 up to 2200-01-01 UTC. Telemetry frame indexes (time / step, with a
// step of at least 10 ms) stay below 2^40 and differences of two times stay exact to 1 us.
inline constexpr Bounds kUnixTimeBounds{
    .lo = 0, .hi = 7258118400, .note = "Unix seconds, years 1970 to 2200"};

// A measured figure (metric value, telemetry sample, criteria centre): finite and at most 1e100
// in size, so that sums of squares over any fleet stay finite. NaN ("missing") is handled by each
// reader before this check.
inline constexpr Bounds kMetricValueBounds{.lo = -1e100, .hi = 1e100};

}  // namespace vigil
