// The criteria expression language reads lambdas from rule files: any text either parses or is
// rejected with a position, and whatever parses evaluates on any number and any stored labels
// without crashing.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "vigil/superbench/expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vigil::Result<vigil::superbench::Criteria> c = vigil::superbench::Criteria::Parse(text);
  if (!c.ok()) return 0;
  for (double x : {0.0, -1.0, 0.5, 1e300, std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::infinity()}) {
    (*c)(x);
  }
  vigil::superbench::Labels labels;
  labels["rule1"] = {true, 0, {{"a/b:0", 1.0}, {"a/b:1", std::nan("")}}};
  labels["rule2"] = {false, 3, {}};
  labels["r"] = {true, 0, {}};
  (*c)(labels);
  return 0;
}
