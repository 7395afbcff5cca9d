#include "vigil/learned/reason.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "vigil/core/fault_line.h"
#include "vigil/core/figure.h"
#include "vigil/core/text.h"
#include "vigil/results/metric_key.h"

namespace vigil::learned {
namespace {

// A fixed reading names its metric without the benchmark and the index, which the component
// gives: "GPU 3 row_remap_failure=1".
std::string ShortMetric(const std::string& key) {
  const Result<MetricKey> parsed = MetricKey::Parse(key);
  return parsed.ok() ? parsed->metric : key;
}

std::string Describe(const Finding& f) {
  const std::string component = ComponentName(f.component);
  switch (f.test) {
    case FindingTest::kHealth:
    case FindingTest::kReturnCode:
      return fmt::format("{} {}={}", component, ShortMetric(f.metric), FormatFigure(f.value));
    case FindingTest::kMissing:
      return fmt::format("{} {} missing", component, f.metric);
    case FindingTest::kClass:
      return fmt::format("{} {}", component, f.metric);
    case FindingTest::kFleet:
    case FindingTest::kBalance:
    case FindingTest::kComponent:
      break;
  }
  // fmt, not " " + string: gcc 12's -Wrestrict misreads that concatenation at -O3 (bug 105329).
  const std::string value = std::isnan(f.value) ? "" : fmt::format(" {}", FormatFigure(f.value));
  return fmt::format("{} {}{} (expected {})", component, f.metric, value, ExpectedRange(f));
}

// The first line of a benchmark's error.
std::string FirstLine(std::string_view text) {
  return std::string(Trim(text.substr(0, text.find('\n'))));
}

// Faults in the order a reader needs them: fixed readings, failed benchmarks, then findings from
// critical to minor.
std::vector<std::string> Faults(const NodeResults& doc, const NodeFindings& judged) {
  std::vector<const Finding*> findings;
  for (const Finding& f : judged.findings) findings.push_back(&f);
  std::stable_sort(findings.begin(), findings.end(), [](const Finding* a, const Finding* b) {
    const bool ah = a->test == FindingTest::kHealth, bh = b->test == FindingTest::kHealth;
    if (ah != bh) return ah;
    return a->severity > b->severity;
  });
  std::vector<std::string> out;
  auto f = findings.begin();
  for (; f != findings.end() && (*f)->test == FindingTest::kHealth; ++f)
    out.push_back(Describe(**f));
  for (const BenchmarkRecord& r : doc.benchmarks) {
    if (r.status == BenchStatus::kFailed) {
      out.push_back(fmt::format("{} failed: {}", r.name, FirstLine(r.error)));
    }
  }
  for (; f != findings.end(); ++f) out.push_back(Describe(**f));
  return out;
}

}  // namespace

std::string ExpectedRange(const Finding& f) {
  if (f.test == FindingTest::kReturnCode || f.test == FindingTest::kHealth) return "0";
  if (f.test == FindingTest::kMissing) return "present";
  const std::string lo = std::isfinite(f.expected_low) ? FormatFigure(f.expected_low) : "";
  const std::string hi = std::isfinite(f.expected_high) ? FormatFigure(f.expected_high) : "";
  if (lo.empty()) return "<= " + hi;
  if (hi.empty()) return ">= " + lo;
  return lo + ".." + hi;
}

std::string HealthLine(const NodeResults& doc, const NodeFindings& judged) {
  const std::vector<std::string> faults = Faults(doc, judged);
  if (faults.empty()) return "OK";
  const std::string more =
      faults.size() > 1 ? fmt::format(" (+{} more)", faults.size() - 1) : std::string();
  std::string line = fmt::format("{} {}", kFaultLinePrefix, faults.front());
  // One line, whatever a benchmark's error held.
  std::replace_if(
      line.begin(), line.end(), [](char c) { return c == '\r' || c == '\t'; }, ' ');
  const size_t room = kMaxReasonLength - more.size();
  if (line.size() > room) line = line.substr(0, room - 3) + "...";
  return line + more;
}

}  // namespace vigil::learned
