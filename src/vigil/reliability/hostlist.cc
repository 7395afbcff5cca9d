#include "vigil/reliability/hostlist.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "vigil/core/text.h"

namespace vigil::reliability {
namespace {

struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;  // digits of the low end, for zero padding
};

// One item ("a[1-3]b[7,9]c") as literal pieces with a list of ranges between each pair.
struct Pattern {
  std::vector<std::string_view> literals;  // one more than groups
  std::vector<std::vector<Range>> groups;
};

Status BadList(std::string_view list, std::string_view why) {
  return Status::InvalidArgument(fmt::format("bad hostlist {}: {}", Quote(list), why));
}

Result<uint64_t> ParseNumber(std::string_view s, std::string_view list) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return BadList(list, fmt::format("{} is not a number", Quote(s)));
  }
  return v;
}

Result<std::vector<Range>> ParseGroup(std::string_view body, std::string_view list,
                                      int64_t& count) {
  std::vector<Range> ranges;
  int64_t total = 0;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string_view::npos) comma = body.size();
    const std::string_view part = body.substr(pos, comma - pos);
    const size_t dash = part.find('-');
    Range r;
    const std::string_view lo = dash == std::string_view::npos ? part : part.substr(0, dash);
    VIGIL_ASSIGN_OR_RETURN(r.lo, ParseNumber(lo, list));
    r.width = lo.size();
    r.hi = r.lo;
    if (dash != std::string_view::npos) {
      VIGIL_ASSIGN_OR_RETURN(r.hi, ParseNumber(part.substr(dash + 1), list));
    }
    if (r.hi < r.lo) return BadList(list, fmt::format("reversed range {}", Quote(part)));
    if (r.hi - r.lo >= static_cast<uint64_t>(kMaxHostlistNames)) {
      return BadList(list, "a range has too many names");
    }
    total += static_cast<int64_t>(r.hi - r.lo + 1);
    if (total > kMaxHostlistNames) return BadList(list, "too many names");
    ranges.push_back(r);
    pos = comma + 1;
  }
  if (count > kMaxHostlistNames / total) return BadList(list, "too many names");
  count *= total;
  return ranges;
}

Result<Pattern> ParsePattern(std::string_view item, std::string_view list, int64_t& count) {
  if (item.empty()) return BadList(list, "empty name");
  Pattern p;
  count = 1;
  size_t pos = 0;
  while (true) {
    const size_t open = item.find('[', pos);
    const size_t close_before = item.find(']', pos);
    if (open == std::string_view::npos) {
      if (close_before != std::string_view::npos) return BadList(list, "']' without '['");
      p.literals.push_back(item.substr(pos));
      return p;
    }
    if (close_before < open) return BadList(list, "']' without '['");
    const size_t close = item.find(']', open);
    if (close == std::string_view::npos) return BadList(list, "'[' without ']'");
    p.literals.push_back(item.substr(pos, open - pos));
    VIGIL_ASSIGN_OR_RETURN(std::vector<Range> group,
                           ParseGroup(item.substr(open + 1, close - open - 1), list, count));
    p.groups.push_back(std::move(group));
    pos = close + 1;
  }
}

void Emit(const Pattern& p, size_t group, std::string& name,
          const std::function<void(std::string_view)>& emit) {
  name.append(p.literals[group]);
  if (group == p.groups.size()) {
    emit(name);
    return;
  }
  const size_t base = name.size();
  for (const Range& r : p.groups[group]) {
    for (uint64_t v = r.lo;; ++v) {
      name.resize(base);
      fmt::format_to(std::back_inserter(name), "{:0{}}", v, r.width);
      Emit(p, group + 1, name, emit);
      if (v == r.hi) break;
    }
  }
  name.resize(base - p.literals[group].size());
}

// Splits "prefix0042" into ("prefix", 42, 4); no trailing digits gives width 0.
struct NumberedName {
  std::string_view prefix;
  uint64_t number = 0;
  size_t width = 0;
};

NumberedName SplitNumber(std::string_view name) {
  size_t start = name.size();
  while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
  NumberedName n{name.substr(0, start), 0, name.size() - start};
  if (n.width == 0 || n.width > 18) return {name, 0, 0};
  std::from_chars(name.data() + start, name.data() + name.size(), n.number);
  return n;
}

}  // namespace

Status ExpandHostlist(std::string_view list, const std::function<void(std::string_view)>& emit) {
  std::vector<std::pair<Pattern, int64_t>> items;
  int64_t total = 0;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size()) {
      if (list[i] == '[' && ++depth > 1) return BadList(list, "nested '['");
      if (list[i] == ']' && --depth < 0) return BadList(list, "']' without '['");
      if (list[i] != ',' || depth > 0) continue;
    }
    int64_t count = 0;
    VIGIL_ASSIGN_OR_RETURN(Pattern p, ParsePattern(list.substr(start, i - start), list, count));
    total += count;
    if (total > kMaxHostlistNames) return BadList(list, "too many names");
    items.emplace_back(std::move(p), count);
    start = i + 1;
  }
  if (depth != 0) return BadList(list, "'[' without ']'");
  std::string name;
  for (const auto& [pattern, count] : items) {
    name.clear();
    Emit(pattern, 0, name, emit);
  }
  return Status::Ok();
}

std::string CompressHostlist(std::span<const std::string> names) {
  std::vector<NumberedName> split(names.size());
  for (size_t i = 0; i < names.size(); ++i) split[i] = SplitNumber(names[i]);
  std::string out;
  size_t i = 0;
  while (i < names.size()) {
    if (!out.empty()) out += ',';
    const NumberedName& first = split[i];
    // The run of names sharing first's prefix and width.
    size_t j = i + 1;
    while (j < names.size() && first.width != 0 && split[j].width == first.width &&
           split[j].prefix == first.prefix) {
      ++j;
    }
    if (j == i + 1) {
      out += names[i];
      i = j;
      continue;
    }
    out.append(first.prefix);
    out += '[';
    for (size_t k = i; k < j;) {
      size_t m = k + 1;
      while (m < j && split[m].number == split[m - 1].number + 1) ++m;
      if (k > i) out += ',';
      fmt::format_to(std::back_inserter(out), "{:0{}}", split[k].number, first.width);
      if (m - k > 1) {
        fmt::format_to(std::back_inserter(out), "-{:0{}}", split[m - 1].number, first.width);
      }
      k = m;
    }
    out += ']';
    i = j;
  }
  return out;
}

}  // namespace vigil::reliability
