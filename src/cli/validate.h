// vigil learn and vigil validate: criteria learned from the fleet, and verdicts per node and
// component (docs/validate.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/common.h"
#include "vigil/learned/judge.h"
#include "vigil/results/summary.h"

namespace vigil::cli {

struct LearnCliOptions {
  std::vector<std::string> data;  // fleet summaries; several files are one training set
  std::string out;
  double budget = 0.005;
  bool json = false;
};

struct ValidateCliOptions {
  std::vector<std::string> data;
  std::string criteria;
  std::string truth;  // planted defects: print precision and recall, and SuperBench's for contrast
  bool json = false;
};

CLI::App* SetupLearn(CLI::App& app, LearnCliOptions& options);
CommandResult RunLearn(const LearnCliOptions& options);

CLI::App* SetupValidate(CLI::App& app, ValidateCliOptions& options);
CommandResult RunValidate(const ValidateCliOptions& options);

}  // namespace vigil::cli
