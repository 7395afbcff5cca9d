// Dense row-major tables that grow as new rows (machines) and columns (signals, components)
// appear, as the streaming telemetry code keeps them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace vigil {

// Re-lays `cells`, a `rows` x `cols` row-major table, out as `new_rows` x `new_cols`: each cell
// keeps its (row, column); new cells are `fill`. A table that only gains rows is resized in place.
template <typename T>
void ResizeRowMajor(std::vector<T>& cells, size_t rows, size_t cols, size_t new_rows,
                    size_t new_cols, const T& fill = T{}) {
  if (new_cols == cols) {
    cells.resize(new_rows * new_cols, fill);
    return;
  }
  std::vector<T> out(new_rows * new_cols, fill);
  const size_t keep = std::min(cols, new_cols);
  for (size_t r = 0; r < std::min(rows, new_rows); ++r) {
    std::copy_n(cells.begin() + static_cast<std::ptrdiff_t>(r * cols), keep,
                out.begin() + static_cast<std::ptrdiff_t>(r * new_cols));
  }
  cells = std::move(out);
}

}  // namespace vigil
