#include "vigil/results/verdict.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "vigil/core/text.h"

namespace vigil {
namespace {

constexpr std::array<std::pair<Verdict, std::string_view>, 3> kNames = {
    {{Verdict::kHealthy, "healthy"},
     {Verdict::kDefective, "defective"},
     {Verdict::kUnjudged, "unjudged"}}};

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  for (const auto& [v, name] : kNames) {
    if (v == verdict) return name;
  }
  return "unjudged";  // not reached: every enumerator is in kNames
}

Result<Verdict> ParseVerdict(std::string_view text) {
  for (const auto& [v, name] : kNames) {
    if (name == text) return v;
  }
  return Status::InvalidArgument(
      fmt::format("expected healthy, defective or unjudged, got {}", Quote(text)));
}

}  // namespace vigil
