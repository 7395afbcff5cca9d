#include "vigil/core/matrix.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(ResizeRowMajorTest, CellsKeepTheirRowAndColumn) {
  std::vector<int> t = {1, 2, 3, 4, 5, 6};  // 2 x 3
  ResizeRowMajor(t, 2, 3, 3, 4, -1);
  EXPECT_EQ(t, (std::vector<int>{1, 2, 3, -1, 4, 5, 6, -1, -1, -1, -1, -1}));
  ResizeRowMajor(t, 3, 4, 4, 4, 0);  // rows only: in place
  EXPECT_EQ(t.size(), 16u);
  EXPECT_EQ(t[5], 5);
  EXPECT_EQ(t[15], 0);
  std::vector<int> empty;
  ResizeRowMajor(empty, 0, 0, 2, 2, 7);
  EXPECT_EQ(empty, (std::vector<int>{7, 7, 7, 7}));
}

}  // namespace
}  // namespace vigil
