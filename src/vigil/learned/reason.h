// The one line a scheduler is told about a node: "OK", or "vigil: <component> <finding>", the
// reason a node is drained with and that `sinfo -R` shows (docs/slurm.md). Short, one line,
// worst first: a reading with a fixed meaning (an uncorrectable ECC error, a GPU the driver lost,
// a full filesystem), then a benchmark that failed (a product computed wrong, a time-out), then
// the other findings by severity. More than one fault ends with "(+N more)".
#pragma once

#include <string>

#include "vigil/learned/judge.h"
#include "vigil/results/document.h"

namespace vigil::learned {

// The longest line: Slurm keeps longer reasons, but `sinfo -R` and dashboards cut them.
inline constexpr size_t kMaxReasonLength = 160;

// "OK" when `doc` has no failed benchmark and `judged` no finding; otherwise the fault line.
std::string HealthLine(const NodeResults& doc, const NodeFindings& judged);

// The range a finding expected, as the tables print it: "0" for a return code or a fixed
// reading, "present" for a missing metric, "700..820", ">= 700" or "<= 3.5" otherwise.
std::string ExpectedRange(const Finding& finding);

}  // namespace vigil::learned
