// Units and conversions that the plan module's models and answers share.
#pragma once

#include <cstdint>

namespace vigil::plan {

inline constexpr double kGiga = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kGib = 1024.0 * 1024 * 1024;

// A count as a double, for the models' arithmetic.
constexpr double D(int64_t v) { return static_cast<double>(v); }

}  // namespace vigil::plan
