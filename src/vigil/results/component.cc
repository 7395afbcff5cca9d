#include "vigil/results/component.h"

#include <charconv>

namespace vigil {
namespace {

// A non-negative number as ComponentIndex prints it (no sign, no leading zero).
std::optional<int> CanonicalNumber(std::string_view s) {
  if (s.empty() || s[0] < '0' || s[0] > '9' || (s.size() > 1 && s[0] == '0')) return {};
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return {};
  return v;
}

// "3" or "0-3" as ComponentIndex::ToString writes them; nullopt for any other text.
std::optional<ComponentIndex> CanonicalIndex(std::string_view s) {
  const size_t dash = s.find('-');
  const std::optional<int> first = CanonicalNumber(s.substr(0, dash));
  if (!first) return {};
  if (dash == std::string_view::npos) return ComponentIndex{*first, std::nullopt};
  const std::optional<int> second = CanonicalNumber(s.substr(dash + 1));
  if (!second) return {};
  return ComponentIndex{*first, second};
}

}  // namespace

std::string ComponentName(const ComponentId& component) {
  if (!component.index) return component.kind;
  return component.kind + ' ' + component.index->ToString();
}

ComponentId ParseComponent(std::string_view text) {
  const size_t space = text.rfind(' ');
  if (space != std::string_view::npos && space > 0) {
    if (std::optional<ComponentIndex> index = CanonicalIndex(text.substr(space + 1))) {
      return ComponentId{std::string(text.substr(0, space)), index};
    }
  }
  return ComponentId{std::string(text), std::nullopt};
}

}  // namespace vigil
