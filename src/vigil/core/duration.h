// Durations as people write them on a command line: "90s", "5m", "2h", "1.5d".
#pragma once

#include <string>
#include <string_view>

#include "vigil/core/status.h"

namespace vigil {

inline constexpr double kSecondsPerMinute = 60;
inline constexpr double kSecondsPerHour = 3600;
inline constexpr double kSecondsPerDay = 86400;

// Parses a non-negative, finite duration into seconds. Units: ms, s, m (or min), h, d, w; a bare
// number is seconds. InvalidArgument naming the text for anything else (negative, NaN, a unit it
// does not know, trailing text).
Result<double> ParseDuration(std::string_view text);

// A short readable form with about three significant digits in the largest fitting unit:
// "45 s", "9.14 min", "1.8 h", "2.5 d" (days from two days up).
std::string FormatDuration(double seconds);

}  // namespace vigil
