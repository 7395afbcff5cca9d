#include "vigil/core/csv.h"

#include <fmt/format.h>

#include "vigil/core/text.h"

namespace vigil {
Result<CsvColumns> CsvColumns::Parse(std::string_view header,
                                     std::span<const std::string_view> known, size_t required,
                                     std::string_view source) {
  CsvColumns c;
  c.source_ = source;
  c.position_.assign(known.size(), -1);
  Status error;
  c.columns_ = ForEachField(Trim(header), ',', [&](size_t i, std::string_view name) {
    if (!error.ok()) return;
    for (size_t k = 0; k < known.size(); ++k) {
      if (known[k] != name) continue;
      if (c.position_[k] >= 0) {
        error = Status::InvalidArgument(
            fmt::format("{}:1: header: column {} named twice", source, Quote(name)));
      }
      c.position_[k] = static_cast<int>(i);
      return;
    }
    std::string names;
    for (std::string_view k : known) names += fmt::format("{}{}", names.empty() ? "" : ", ", k);
    error = Status::InvalidArgument(fmt::format(
        "{}:1: header: unknown column {} (the columns are {})", source, Quote(name), names));
  });
  VIGIL_RETURN_IF_ERROR(error);
  for (size_t k = 0; k < required && k < known.size(); ++k) {
    if (c.position_[k] < 0) {
      return Status::InvalidArgument(fmt::format("{}:1: header: no {} column", source, known[k]));
    }
  }
  return c;
}

Status CsvColumns::Split(std::string_view line, int64_t line_no,
                         std::vector<std::string_view>* fields) const {
  fields->assign(position_.size(), {});
  const size_t n = ForEachField(line, ',', [&](size_t i, std::string_view field) {
    for (size_t k = 0; k < position_.size(); ++k) {
      if (position_[k] == static_cast<int>(i)) (*fields)[k] = field;
    }
  });
  if (n != columns_) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: {} fields, the header has {}", source_, line_no, n, columns_));
  }
  return Status::Ok();
}

}  // namespace vigil
