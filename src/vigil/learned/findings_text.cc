#include "vigil/learned/findings_text.h"

#include <fmt/format.h>

#include <cmath>

#include "vigil/core/figure.h"
#include "vigil/core/text.h"
#include "vigil/core/text_table.h"
#include "vigil/learned/reason.h"

namespace vigil::learned {
namespace {

// The benchmarks of a component model's key, "gpu-gemm/*:3" or "gpu-copy+gpu-membw/*": what a
// reader knows them by.
std::string PoolOf(const std::string& key) {
  std::string pool = key.substr(0, key.find("/*"));
  for (size_t at = pool.find('+'); at != std::string::npos; at = pool.find('+', at)) {
    pool.replace(at, 1, " and ");
  }
  return pool;
}

std::string ClassSentence(const Finding& f) {
  // Judge gives a node no class applies to a finding whose metric is its hardware; a stranger to
  // its class (JudgeStranger) one whose metric counts the families it leaves.
  if (f.metric.find(" families") == std::string::npos) {
    return f.metric.empty()
               ? "it does not say its hardware class, and the criteria hold more than one: "
                 "judged by the fixed rules only"
               : fmt::format(
                     "no criteria were learned for its hardware class {}: judged by the fixed "
                     "rules only",
                     Quote(f.metric));
  }
  return fmt::format(
      "its values leave the healthy modes of {}: it is not the hardware class it says it is "
      "(or is misconfigured throughout), and its other fleet findings are left out",
      f.metric);
}

std::string ComponentSentence(const Finding& f) {
  return fmt::format(
      "{}: its {} metrics together lie {:.1f} robust sigmas on the worse side of the fleet's "
      "(healthy components reach {:.1f})",
      ComponentName(f.component), PoolOf(f.metric), f.value, f.expected_high);
}

}  // namespace

bool IsSentenceFinding(const Finding& f) {
  return f.test == FindingTest::kClass || f.test == FindingTest::kComponent;
}

std::string FindingSentence(const Finding& f) {
  if (!IsSentenceFinding(f)) return "";
  const std::string text = f.test == FindingTest::kClass ? ClassSentence(f) : ComponentSentence(f);
  return fmt::format("{} ({})", text, SeverityName(f.severity));
}

std::string RenderFindings(const FleetTable& table, const std::vector<NodeFindings>& verdicts) {
  Table t({"NODE", "COMPONENT", "METRIC", "VALUE", "EXPECTED", "DEVIATION", "SEVERITY", "TEST"});
  std::string sentences;
  size_t rows = 0;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    for (const Finding& f : verdicts[i].findings) {
      if (IsSentenceFinding(f)) {
        sentences += fmt::format("{}: {}\n", table.node(i), FindingSentence(f));
        continue;
      }
      if (++rows > kMaxFindingRows) continue;
      t.Add({table.node(i), ComponentName(f.component), f.metric,
             std::isnan(f.value) ? "-" : FormatFigure(f.value), ExpectedRange(f),
             // Only the fleet and balance tests measure a deviation from the fleet's centre
             // (none from a centre of 0).
             (f.test == FindingTest::kFleet || f.test == FindingTest::kBalance) && f.deviation != 0
                 ? fmt::format("{:+.1f}%", f.deviation * 100)
                 : "-",
             std::string(SeverityName(f.severity)), std::string(FindingTestName(f.test))});
    }
  }
  std::string out = rows == 0 ? "" : t.ToString();
  if (rows > kMaxFindingRows) {
    out +=
        fmt::format("... and {} more findings (--json lists them all)\n", rows - kMaxFindingRows);
  }
  if (!out.empty() && !sentences.empty()) out += "\n";
  return out + sentences;
}

}  // namespace vigil::learned
