// Figures as people read them in tables and messages.
#pragma once

#include <string>

namespace vigil {

// A figure with about four significant digits ("23.41", "123.4", "2048", "1.234e+06"); "-" for
// NaN and infinities. Thread-safe.
std::string FormatFigure(double value);

}  // namespace vigil
