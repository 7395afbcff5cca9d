// A plain text table, as every command prints its results: the library makes a table's content
// (what a row says), so that the CLI only prints it.
#pragma once

#include <string>
#include <vector>

namespace vigil {

// A plain text table with left-aligned columns separated by two spaces. Not thread-safe.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Every row, the header first, each ended by a newline.
  std::string ToString() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace vigil
