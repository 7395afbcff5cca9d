// Test support: the parts of a node's results document that tests build by hand (a benchmark's
// record, one of its figures). Header-only.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "vigil/results/document.h"

namespace vigil::testing {

// A benchmark record with no figures yet.
inline BenchmarkRecord Record(std::string name, std::string component,
                              BenchStatus status = BenchStatus::kOk) {
  BenchmarkRecord r;
  r.name = std::move(name);
  r.component = std::move(component);
  r.status = status;
  return r;
}

// A figure under `key` ("<benchmark>/<metric>[:<index>]"; it must parse).
inline Metric Figure(std::string_view key, double value, std::string unit) {
  Metric m;
  m.key = *MetricKey::Parse(key);
  m.value = value;
  m.unit = std::move(unit);
  return m;
}

}  // namespace vigil::testing
