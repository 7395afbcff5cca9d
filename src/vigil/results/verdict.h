// A node's verdict, as the fleet service, `vigil run` and `vigil validate` name it.
#pragma once

#include <string_view>

#include "vigil/core/status.h"

namespace vigil {

enum class Verdict {
  kHealthy,    // judged by criteria (or the fixed rules) and nothing found
  kDefective,  // a finding names a defective component
  kUnjudged,   // no criteria for the node's hardware class, and the fixed rules found nothing
};

// "healthy", "defective" or "unjudged": the text of every output (JSON, HTML, metrics, the store).
std::string_view VerdictName(Verdict verdict);

// The inverse of VerdictName. InvalidArgument "expected healthy, defective or unjudged, got
// \"<text>\"" for anything else.
Result<Verdict> ParseVerdict(std::string_view text);

}  // namespace vigil
