#include "vigil/superbench/diagnose_files.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/results/fleet_files.h"

namespace vigil::superbench {

Result<DiagnosedFiles> DiagnoseFiles(const DiagnoseRequest& request) {
  VIGIL_RETURN_IF_ERROR(CreateDirectories(request.output_dir));  // as SuperBench does
  DiagnosedFiles d;
  d.out = (std::filesystem::path(request.output_dir) /
           fmt::format("diagnosis_summary.{}", ReportExtension(request.report.format)))
              .string();
  VIGIL_RETURN_IF_ERROR(CheckWritable(d.out));
  VIGIL_ASSIGN_OR_RETURN(const std::vector<Rule> rules, ReadRules(request.rules));
  d.rules = rules.size();
  Baseline baseline;
  if (!request.baseline.empty()) {
    VIGIL_ASSIGN_OR_RETURN(baseline, ReadBaseline(request.baseline));
  }
  VIGIL_ASSIGN_OR_RETURN(d.table, ReadFleetFiles({request.data}));
  Result<Diagnosis> diagnosis = Diagnose(d.table, rules, baseline, request.options);
  if (!diagnosis.ok()) {
    return Status::InvalidArgument(
        fmt::format("{}: {}", request.rules, diagnosis.status().message()));
  }
  d.diagnosis = std::move(*diagnosis);
  for (const std::string& w : d.diagnosis.warnings) {
    spdlog::warn("warning: {}: {}", request.rules, w);
  }
  VIGIL_ASSIGN_OR_RETURN(AtomicFile file, AtomicFile::Create(d.out));
  VIGIL_RETURN_IF_ERROR(
      WriteDiagnosisReport(d.table, d.diagnosis, request.report,
                           [&](std::string_view piece) { return file.Append(piece); }));
  VIGIL_RETURN_IF_ERROR(file.Commit());
  return d;
}

Result<BaselineFromFiles> BaselineFiles(const BaselineRequest& request) {
  VIGIL_RETURN_IF_ERROR(CheckWritable(request.out));
  std::vector<Rule> rules;
  if (!request.rules.empty()) {
    VIGIL_ASSIGN_OR_RETURN(rules, ReadRules(request.rules));
  }
  VIGIL_ASSIGN_OR_RETURN(const FleetTable table, ReadFleetFiles({request.data}));
  Result<BaselineResult> b = GenerateBaseline(table, request.rules.empty() ? nullptr : &rules);
  if (!b.ok()) {
    return Status::InvalidArgument(fmt::format("{}: {}", request.rules, b.status().message()));
  }
  VIGIL_RETURN_IF_ERROR(WriteFileAtomic(request.out, FormatBaseline(b->baseline, request.digits)));
  return BaselineFromFiles{std::move(*b), table.node_count()};
}

}  // namespace vigil::superbench
