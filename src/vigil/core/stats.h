// Robust summary statistics over samples of doubles.
//
// Pure functions: no allocation beyond a scratch copy, no state, thread-safe.
// Every function returns NaN for an empty input; NaN inside the input is a precondition violation
// (callers filter missing values first, so that "missing" is never silently mixed into a figure).
#pragma once

#include <span>

namespace vigil::stats {

// The factor that turns a MAD into a consistent estimate of the standard deviation of a normal.
inline constexpr double kMadToSigma = 1.482602218505602;

double Mean(std::span<const double> x);
double Min(std::span<const double> x);
double Max(std::span<const double> x);

// Sample standard deviation (n - 1 in the denominator); 0 for a single sample.
double StdDev(std::span<const double> x);

// The middle value; the mean of the two middle values for an even count.
double Median(std::span<const double> x);

// The q-quantile, 0 <= q <= 1, interpolating linearly between order statistics (Hyndman and
// Fan's type 7, the default of R and NumPy). REQUIRES: 0 <= q <= 1.
double Quantile(std::span<const double> x, double q);

// Quantile of values already in ascending order: no copy, no sort (constant time).
// REQUIRES: `sorted` ascending, 0 <= q <= 1.
double QuantileOfSorted(std::span<const double> sorted, double q);

// Median absolute deviation from the median, unscaled. Multiply by kMadToSigma for a sigma.
double Mad(std::span<const double> x);

}  // namespace vigil::stats
