// Findings as a person reads them (`vigil validate`, and `vigil run` under its table): a table of
// the findings that are one value against its expected range, and a sentence for each of those
// that are not — a node that is no class learned (or a stranger to the one it says), a
// component whose metrics lie beyond healthy together — where a table's cells ("node  0  0..0")
// would say nothing.
#pragma once

#include <string>
#include <vector>

#include "vigil/learned/judge.h"
#include "vigil/results/summary.h"

namespace vigil::learned {

// The rows of the table a finding list shows at most; the rest are counted under it.
inline constexpr size_t kMaxFindingRows = 200;

// One finding of the "class" or "component" test as a sentence, without its node:
//   no criteria were learned for its hardware class "8x H100" (judged by the fixed rules only)
//   its values leave the healthy modes of 7 of 12 families: not the hardware class it says
//   GPU 3: its gpu-gemm metrics together lie 5.3 robust sigmas on the worse side of the fleet's
//     (healthy components reach 3.1)
// ends with the severity in parentheses. "" for a finding of another test.
std::string FindingSentence(const Finding& finding);

// Whether a finding reads as a sentence (FindingSentence) rather than a table row.
bool IsSentenceFinding(const Finding& finding);

// The findings of every node of `table` (verdicts[i] is node i's): a table with NODE, COMPONENT,
// METRIC, VALUE, EXPECTED, DEVIATION, SEVERITY and TEST (at most kMaxFindingRows rows, then a
// line counting the rest), then one line per sentence finding, "<node>: <sentence>". "" when
// there is no finding. Pure; thread-safe.
std::string RenderFindings(const FleetTable& table, const std::vector<NodeFindings>& verdicts);

}  // namespace vigil::learned
