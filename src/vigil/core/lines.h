// Line-by-line reading of text that came from outside, with line numbers for error messages.
#pragma once

#include <cstdint>
#include <string_view>

namespace vigil {

// Walks `text` line by line without copying. Lines end at '\n'; a '\r' before it (CRLF files) is
// not part of the line; a last line without '\n' counts. The viewed text must outlive the reader.
// A piece of a longer text (whole lines of a file read in chunks) is numbered on from
// `lines_before`, the lines of the pieces before it.
class LineReader {
 public:
  explicit LineReader(std::string_view text, int64_t lines_before = 0)
      : text_(text), line_no_(lines_before) {}

  // Sets `line` to the next line and returns true, or returns false at the end.
  bool Next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++line_no_;
    return true;
  }

  // The number of the line Next() returned last, from 1.
  int64_t line_no() const { return line_no_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int64_t line_no_;
};

}  // namespace vigil
