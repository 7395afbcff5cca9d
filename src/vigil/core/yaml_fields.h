// Reading a YAML file a user wrote (a policy, a model description): the document loaded with an
// error that names the source and line, and checked field by field, each error naming the source,
// the line and the field's dotted path ("retry.max"). One reader for every YAML file Vigil takes.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "vigil/core/status.h"

namespace vigil {

// The document of `text` (JSON is YAML too); "SOURCE:LINE: not valid YAML: ..." otherwise.
Result<YAML::Node> LoadYaml(std::string_view text, std::string_view source);

// The line of `node` for a message, counted from 1 (1 where yaml-cpp has no mark).
int YamlLine(const YAML::Node& node);

// Checks the fields of one document; every error is "SOURCE:LINE: FIELD: PROBLEM".
class YamlFields {
 public:
  // `top` names the whole document in errors about it ("policy", "model").
  YamlFields(std::string_view source, std::string_view top) : source_(source), top_(top) {}

  Status Error(const YAML::Node& at, std::string_view field, std::string_view problem) const;

  // A mapping whose keys are all among `known`; `field` is its dotted path ("" for the top).
  Status Map(const YAML::Node& node, std::string_view field,
             std::initializer_list<std::string_view> known) const;

  // "parent.key", or "key" at the top.
  static std::string Path(std::string_view parent, std::string_view key);

  Result<std::string> Text(const YAML::Node& node, std::string_view field) const;
  // One of `choices`.
  Result<std::string> Choice(const YAML::Node& node, std::string_view field,
                             std::initializer_list<std::string_view> choices) const;
  // A duration ("90s", "5m"; core/duration.h) within [lo, hi] seconds.
  Result<double> Seconds(const YAML::Node& node, std::string_view field, double lo,
                         double hi) const;
  // A finite number within [lo, hi].
  Result<double> Number(const YAML::Node& node, std::string_view field, double lo, double hi) const;
  // A whole number within [lo, hi].
  Result<int64_t> Whole(const YAML::Node& node, std::string_view field, int64_t lo,
                        int64_t hi) const;

 private:
  std::string source_;
  std::string top_;
};

}  // namespace vigil
