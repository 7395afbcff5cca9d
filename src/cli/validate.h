// vigil learn, vigil validate and vigil simulate fleet: criteria learned from the fleet, verdicts
// per node and component, and the generated fleet that evaluates them (docs/validate.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/common.h"
#include "vigil/learned/learn.h"
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

struct SimulateFleetOptions {
  int64_t nodes = 1000;
  double defect_rate = 0.05;
  double noisy_rate = 0.05;
  double missing_rate = 0.01;
  double second_class = 0.15;
  int sweep_points = 8;
  uint64_t seed = 1;
  std::string out;
  std::string truth;
};

// The findings of defective nodes as a table (the first 200 rows, and how many more).
std::string RenderFindings(const FleetTable& table,
                           const std::vector<learned::NodeFindings>& verdicts);

CLI::App* SetupLearn(CLI::App& app, LearnCliOptions& options);
CommandResult RunLearn(const LearnCliOptions& options);

CLI::App* SetupValidate(CLI::App& app, ValidateCliOptions& options);
CommandResult RunValidate(const ValidateCliOptions& options);

// Adds `fleet` to the `simulate` group.
CLI::App* SetupSimulateFleet(CLI::App& simulate, SimulateFleetOptions& options);
CommandResult RunSimulateFleet(const SimulateFleetOptions& options);

}  // namespace vigil::cli
