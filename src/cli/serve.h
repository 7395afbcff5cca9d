// vigil serve: the fleet service (HTTP API, dashboard, /metrics) over a SQLite store; and
// vigil report: send results documents (and a spool of them) to it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/common.h"

namespace vigil::cli {

struct ServeOptions {
  std::string db = "vigil.db";
  std::string listen = "127.0.0.1:8080";
  std::string token_file;
  bool insecure_allow_writes = false;
  int threads = 32;
  double max_body_mb = 64;
  std::string sync = "full";
  std::string port_file;
  std::string remediation;  // the remediation policy (YAML); "" for none
  bool token_for_reads = false;
  std::vector<std::string> allowed_hosts;
  std::string tls_cert, tls_key, tls_client_ca;
  int max_connections = 4096;
  double header_timeout_s = 10;
  double idle_timeout_s = 30;
  std::string access_log;
  std::string error_log;
};

CLI::App* SetupServe(CLI::App& parent, ServeOptions& options);
CommandResult RunServe(const ServeOptions& options);

struct ReportOptions {
  std::vector<std::string> files;
  std::string spool;
  std::string url;
  std::string token_file;
  telemetry::TlsClientOptions tls;
  bool json = false;
};

CLI::App* SetupReport(CLI::App& parent, ReportOptions& options);
CommandResult RunReport(const ReportOptions& options);

}  // namespace vigil::cli
