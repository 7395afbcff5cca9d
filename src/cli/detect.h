// vigil detect: the streaming detector over a job's telemetry, from files or a Prometheus server
// (docs/detect.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.h"

namespace vigil::cli {

struct DetectOptions {
  std::vector<std::string> inputs;
  std::string format = "auto";  // csv, jsonl, prom; auto: by extension
  std::string prometheus;       // base URL
  std::string selector;         // PromQL series selector
  bool follow = false;
  std::string since = "15m";  // how far back the first query reaches
  std::string step = "1s";
  std::string poll = "5s";
  std::string duration;  // --follow: stop after this long
  std::string labels;
  std::string out;
  std::string signals;  // YAML that extends the signal map
  std::string passthrough = "auto";
  bool lenient = false;
  std::string persistence = "60s";  // a deviation alerts once it has lasted this long
  std::string warmup = "5m";        // a group is learned, not judged, over its first minutes
  double min_sd = 4;                // ... by at least this many of the peers' spreads
  double min_effect = 0.1;          // ... and this share of the expected value
  double strong_effect = 0.4;       // from this share, evidence accrues faster (0: never)
  std::string grace = "15s";
  std::string rearm = "10m";
  bool json = false;
  std::string report;               // fleet service (vigil serve) to post alerts to
  std::string token_file;           // --report: its bearer token
  telemetry::TlsClientOptions tls;  // https:// --prometheus and --report
};

CLI::App* SetupDetect(CLI::App& app, DetectOptions& options);
CommandResult RunDetect(const DetectOptions& options);

}  // namespace vigil::cli
