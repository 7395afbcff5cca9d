// vigil diagnose and vigil baseline: SuperBench-compatible rule-based diagnosis of a fleet's
// results, and baselines for it (docs/validate.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/common.h"

namespace vigil::cli {

struct DiagnoseCliOptions {
  std::string data;              // fleet summary JSONL (SuperBench's results-summary.jsonl)
  std::string rules;             // SuperBench rule YAML
  std::string baseline;          // SuperBench baseline JSON (needed by variance rules)
  std::string output_dir = ".";  // writes diagnosis_summary.<format> there
  std::string format = "json";   // json, jsonl, md, html
  bool output_all = false;
  int decimals = 2;
  bool strict_missing = true;
  bool strict = false;  // a rule that selects nothing is an error, not a warning
  bool json = false;    // a machine-readable summary on stdout
};

struct BaselineCliOptions {
  std::string data;
  std::string rules;  // with rules: SuperBench's fix_threshold; without: the mean
  std::string out;
  int digits = 2;
};

CLI::App* SetupDiagnose(CLI::App& app, DiagnoseCliOptions& options);
CommandResult RunDiagnose(const DiagnoseCliOptions& options);

CLI::App* SetupBaseline(CLI::App& app, BaselineCliOptions& options);
CommandResult RunBaseline(const BaselineCliOptions& options);

}  // namespace vigil::cli
