#include "vigil/core/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace vigil::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> Sorted(std::span<const double> x) {
  std::vector<double> v(x.begin(), x.end());
  std::sort(v.begin(), v.end());
  return v;
}

// Median of a non-empty vector, which it reorders: selection, not a sort (linear time).
double SelectMedian(std::vector<double>& v) {
  const size_t n = v.size();
  const auto mid = v.begin() + static_cast<long>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return *mid;
  return 0.5 * (*std::max_element(v.begin(), mid) + *mid);
}

}  // namespace

double Mean(std::span<const double> x) {
  if (x.empty()) return kNaN;
  return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

double Min(std::span<const double> x) {
  return x.empty() ? kNaN : *std::min_element(x.begin(), x.end());
}

double Max(std::span<const double> x) {
  return x.empty() ? kNaN : *std::max_element(x.begin(), x.end());
}

double StdDev(std::span<const double> x) {
  if (x.empty()) return kNaN;
  if (x.size() == 1) return 0.0;
  const double m = Mean(x);
  double ss = 0.0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

double Median(std::span<const double> x) {
  if (x.empty()) return kNaN;
  std::vector<double> v(x.begin(), x.end());
  return SelectMedian(v);
}

double Quantile(std::span<const double> x, double q) { return QuantileOfSorted(Sorted(x), q); }

double QuantileOfSorted(std::span<const double> v, double q) {
  if (v.empty()) return kNaN;
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + frac * (v[hi] - v[lo]);
}

double Mad(std::span<const double> x) {
  if (x.empty()) return kNaN;
  const double m = Median(x);
  std::vector<double> dev;
  dev.reserve(x.size());
  for (double v : x) dev.push_back(std::fabs(v - m));
  return SelectMedian(dev);
}

}  // namespace vigil::stats
