// Writes a Diagnosis as SuperBench's `sb result diagnosis` writes diagnosis_summary.<format>:
// the same columns, order, number formatting (pandas' and Python's) and "N/A" for missing values.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "vigil/core/status.h"
#include "vigil/results/summary.h"
#include "vigil/superbench/diagnose.h"

namespace vigil::superbench {

enum class ReportFormat { kJson, kJsonl, kMd, kHtml };

// "json", "jsonl", "md" or "html".
Result<ReportFormat> ParseReportFormat(std::string_view name);
std::string_view ReportExtension(ReportFormat format);

struct ReportOptions {
  ReportFormat format = ReportFormat::kJson;
  // Every node with its raw values and diagnosis/accept, diagnosis/issue_num; otherwise only the
  // defective nodes with the values the rules computed (the variance for variance rules).
  bool output_all = false;
  // md and html: variance columns as percentages rounded to this many decimals (0: as they are).
  int decimals = 2;
};

// Receives the report in pieces of a few megabytes (a report of a whole fleet with --output-all
// can run to gigabytes); an error stops the writing and is returned.
using ReportSink = std::function<Status(std::string_view piece)>;

Status WriteDiagnosisReport(const FleetTable& table, const Diagnosis& diagnosis,
                            const ReportOptions& options, const ReportSink& sink);

// The whole report as one string (for tests and small fleets).
std::string FormatDiagnosisReport(const FleetTable& table, const Diagnosis& diagnosis,
                                  const ReportOptions& options);

// Python's repr() of a float: the shortest string that reads back to it, in fixed notation from
// 1e-4 to 1e16 ("0.0", "1577.85") and scientific outside ("1e-05", "1.5e+16").
std::string PythonRepr(double v);

}  // namespace vigil::superbench
