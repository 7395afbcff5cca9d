#include "vigil/core/figure.h"

#include <fmt/format.h>

#include <cmath>

namespace vigil {

std::string FormatFigure(double value) {
  if (!std::isfinite(value)) return "-";
  const double mag = std::fabs(value);
  if (mag != 0 && (mag >= 1e6 || mag < 1e-3)) return fmt::format("{:.4g}", value);
  if (mag >= 1000 || value == std::trunc(value)) return fmt::format("{:.0f}", value);
  if (mag >= 100) return fmt::format("{:.1f}", value);
  if (mag >= 10) return fmt::format("{:.2f}", value);
  return fmt::format("{:.3f}", value);
}

}  // namespace vigil
