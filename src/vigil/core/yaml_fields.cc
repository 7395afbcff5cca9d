#include "vigil/core/yaml_fields.h"

#include <fmt/format.h>

#include <cmath>

#include "vigil/core/duration.h"
#include "vigil/core/text.h"

namespace vigil {

Result<YAML::Node> LoadYaml(std::string_view text, std::string_view source) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}:{}: not valid YAML: {}", source,
                                               e.mark.line < 0 ? 1 : e.mark.line + 1, e.msg));
  }
}

int YamlLine(const YAML::Node& node) {
  const int line = node.Mark().line;
  return line < 0 ? 1 : line + 1;
}

Status YamlFields::Error(const YAML::Node& at, std::string_view field,
                         std::string_view problem) const {
  return Status::InvalidArgument(
      fmt::format("{}:{}: {}: {}", source_, YamlLine(at), field, problem));
}

Status YamlFields::Map(const YAML::Node& node, std::string_view field,
                       std::initializer_list<std::string_view> known) const {
  if (!node.IsMap()) {
    return Error(node, field.empty() ? std::string_view(top_) : field,
                 "expected a mapping of keys to values");
  }
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
    bool ok = false;
    std::string names;
    for (std::string_view k : known) {
      ok |= k == key;
      names += names.empty() ? "" : ", ";
      names += k;
    }
    if (!ok) {
      return Error(kv.first, Path(field, key),
                   fmt::format("unknown key (expected one of {})", names));
    }
  }
  return Status::Ok();
}

std::string YamlFields::Path(std::string_view parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

Result<std::string> YamlFields::Text(const YAML::Node& node, std::string_view field) const {
  if (!node.IsScalar()) return Error(node, field, "expected a text");
  return node.Scalar();
}

Result<std::string> YamlFields::Choice(const YAML::Node& node, std::string_view field,
                                       std::initializer_list<std::string_view> choices) const {
  VIGIL_ASSIGN_OR_RETURN(std::string text, Text(node, field));
  std::string names;
  for (std::string_view c : choices) {
    if (c == text) return text;
    names += names.empty() ? "" : ", ";
    names += c;
  }
  return Error(node, field, fmt::format("{} is not one of {}", Quote(text), names));
}

Result<double> YamlFields::Seconds(const YAML::Node& node, std::string_view field, double lo,
                                   double hi) const {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, Text(node, field));
  Result<double> s = ParseDuration(text);
  if (!s.ok()) return Error(node, field, s.status().message());
  if (*s < lo || *s > hi) {
    return Error(node, field,
                 fmt::format("{} is out of range ({} to {})", Quote(text), FormatDuration(lo),
                             FormatDuration(hi)));
  }
  return *s;
}

Result<double> YamlFields::Number(const YAML::Node& node, std::string_view field, double lo,
                                  double hi) const {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, Text(node, field));
  double v = 0;
  if (!YAML::convert<double>::decode(node, v) || !std::isfinite(v)) {
    return Error(node, field, fmt::format("expected a number, got {}", Quote(text)));
  }
  if (v < lo || v > hi) {
    return Error(node, field, fmt::format("{} is out of range ({} to {})", text, lo, hi));
  }
  return v;
}

Result<int64_t> YamlFields::Whole(const YAML::Node& node, std::string_view field, int64_t lo,
                                  int64_t hi) const {
  VIGIL_ASSIGN_OR_RETURN(const double v,
                         Number(node, field, static_cast<double>(lo), static_cast<double>(hi)));
  if (v != std::floor(v)) {
    return Error(node, field, fmt::format("expected a whole number, got {}", node.Scalar()));
  }
  return static_cast<int64_t>(v);
}

}  // namespace vigil
