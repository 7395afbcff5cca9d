// Comma-separated files with a header line that names the columns, in any order. Fields are plain
// (no quoting): the files Vigil reads this way hold names and numbers only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"

namespace vigil {

class CsvColumns {
 public:
  // Matches `header` against `known` column names, of which the first `required` must be present.
  // Errors (an unknown or repeated name, a required one missing) name `source`, line 1.
  static Result<CsvColumns> Parse(std::string_view header, std::span<const std::string_view> known,
                                  size_t required, std::string_view source);

  // Splits `line` into `fields`, indexed like `known` (empty for an absent column). Fails with
  // "<source>:<line_no>: ..." when the line has another number of fields than the header.
  Status Split(std::string_view line, int64_t line_no, std::vector<std::string_view>* fields) const;

  bool has(size_t known_index) const { return position_[known_index] >= 0; }

 private:
  std::vector<int> position_;  // per known name: its column, or -1
  size_t columns_ = 0;
  std::string source_;
};

}  // namespace vigil
