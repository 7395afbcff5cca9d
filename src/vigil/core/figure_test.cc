#include "vigil/core/figure.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vigil {
namespace {

TEST(FigureTest, FourSignificantDigits) {
  EXPECT_EQ(FormatFigure(23.4149), "23.41");
  EXPECT_EQ(FormatFigure(123.44), "123.4");
  EXPECT_EQ(FormatFigure(4.56789), "4.568");
  EXPECT_EQ(FormatFigure(2048), "2048");
  EXPECT_EQ(FormatFigure(512), "512");
  EXPECT_EQ(FormatFigure(1234567), "1.235e+06");
  EXPECT_EQ(FormatFigure(0.0001234), "0.0001234");
  EXPECT_EQ(FormatFigure(0), "0");
  EXPECT_EQ(FormatFigure(std::nan("")), "-");
}

}  // namespace
}  // namespace vigil
