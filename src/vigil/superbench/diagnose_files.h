// `vigil diagnose` and `vigil baseline`'s entry points: SuperBench's rule-based diagnosis of a
// fleet summary file into its report file, and a baseline from one (docs/validate.md).
#pragma once

#include <map>
#include <string>

#include "vigil/core/status.h"
#include "vigil/results/summary.h"
#include "vigil/superbench/diagnose.h"
#include "vigil/superbench/superbench_report.h"

namespace vigil::superbench {

struct DiagnoseRequest {
  std::string data;              // fleet summary JSONL (SuperBench's results-summary.jsonl)
  std::string rules;             // SuperBench rule YAML
  std::string baseline;          // SuperBench baseline JSON (needed by variance rules); "": none
  std::string output_dir = ".";  // the report goes there (created when missing, as SuperBench)
  ReportOptions report;          // its format, and what it holds
  DiagnoseOptions options;
};

struct DiagnosedFiles {
  FleetTable table;     // the fleet diagnosed
  Diagnosis diagnosis;  // its warnings were logged too
  size_t rules = 0;     // in the rule file
  std::string out;      // the report written: <output_dir>/diagnosis_summary.<extension>
};

// Creates output_dir, checks that the report can be written there, reads the rules, the baseline
// and the fleet (ReadFleetFiles), diagnoses the fleet (Diagnose; its warnings logged, naming the
// rule file) and writes the report atomically (WriteDiagnosisReport). Fails with the first error:
// InvalidArgument for bad input (a rule file that Diagnose refuses is named), the write's
// otherwise.
Result<DiagnosedFiles> DiagnoseFiles(const DiagnoseRequest& request);

struct BaselineRequest {
  std::string data;   // fleet summary JSONL
  std::string rules;  // with rules: SuperBench's fix_threshold; "": the mean
  std::string out;    // the baseline JSON to write
  int digits = 2;     // FormatBaseline's
};

struct BaselineFromFiles {
  BaselineResult result;
  size_t nodes = 0;  // in the fleet
};

// Checks that request.out can be written (before any work), reads the rules when given and the
// fleet (ReadFleetFiles), generates the baseline (GenerateBaseline) and writes it atomically
// (FormatBaseline). Fails with the first error: InvalidArgument for bad input (a rule file that
// GenerateBaseline refuses is named) or an unwritable out.
Result<BaselineFromFiles> BaselineFiles(const BaselineRequest& request);

}  // namespace vigil::superbench
