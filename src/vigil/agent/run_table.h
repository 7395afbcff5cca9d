// `vigil run`'s table (docs/run.md, "The table"): one row per metric the node measured, and what
// its figure is read against, so that no row says a bare "ok" that a reader takes for "healthy":
// with criteria, the row's verdict against the range learned for the node's hardware class;
// without, the row's reference. Then why benchmarks were skipped or failed, one line per reason.
#pragma once

#include <string>
#include <string_view>

#include "vigil/learned/criteria.h"
#include "vigil/learned/judge.h"
#include "vigil/results/document.h"

namespace vigil::agent {

// What the reading of a metric with no learned range and no datasheet figure says. No benchmark
// knows its hardware's datasheet peak today (bench/cuda measures, it does not look figures up).
inline constexpr std::string_view kNoReference = "no reference";

// The table of `doc`'s benchmarks. `criteria`, when given, is what the node was judged by
// (restricted to the benchmarks it ran) and `judged` its findings: each row's last column, VERDICT,
// says "within 700..820", "below 700..820" or "above 700..820" (the healthy range learned for the
// family of the metric, for the node's class, of the mode nearest the node's level; "above floor
// 700" or "below ceiling 3.5" where only one side is worse), "fault: below 700..820" where the
// judgement found the value at fault, or "no learned range". Without
// criteria the column is REFERENCE: "no reference" for a measured figure, "must be 0" for a
// reading with a fixed meaning, "for information" for a reading kept for people. The STATUS
// column is RUN: "ran", "skipped" or "failed". Pure; thread-safe.
std::string RenderRunTable(const NodeResults& doc, const learned::NodeFindings& judged,
                           const learned::LearnedCriteria* criteria);

// The verdict or reference of one metric (the table's last column); `model` is the node's class
// (nullptr: none applies, or no criteria when `with_criteria` is false). Exposed for its tests.
std::string MetricReading(const std::string& key, double value, double level,
                          const learned::NodeFindings& judged, const learned::ClassModel* model,
                          bool with_criteria);

}  // namespace vigil::agent
