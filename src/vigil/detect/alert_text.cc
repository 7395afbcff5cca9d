#include "vigil/detect/alert_text.h"

#include <fmt/format.h>

#include "vigil/core/clock.h"
#include "vigil/core/figure.h"

namespace vigil::detect {
namespace {

std::string EvidenceText(const Alert& a) {
  std::string out;
  for (const Evidence& e : a.evidence) {
    if (!out.empty()) out += ", ";
    // A deviation: a divergence's, or one a job alert gives (a stall's machine, a shared one's).
    if (a.kind == AlertKind::kDivergence || !e.reference.empty()) {
      out += fmt::format("{} {} {} vs {} ({}{:+.1f} sd)", e.signal, e.stat, FormatFigure(e.value),
                         FormatFigure(e.peer_median),
                         e.reference == kOwnPastReference ? "its own past, " : "", e.deviation);
    } else {
      out += fmt::format("{} = {}", e.signal, FormatFigure(e.value));
    }
  }
  return out;
}

}  // namespace

std::string AlertLine(const Alert& a) {
  return fmt::format("ALERT {} {} {}{} onset {} detected {} (+{:.0f} s): {}", a.machine,
                     AlertKindName(a.kind), a.rule, a.component.empty() ? "" : " " + a.component,
                     FormatUtc(a.onset), FormatUtc(a.detected), a.detected - a.onset,
                     EvidenceText(a));
}

}  // namespace vigil::detect
