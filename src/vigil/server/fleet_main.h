// `vigil serve` from its options to its stop: the store opened, the fleet service started (with
// its remediation policy), the API and the HTTP server listening, the logs reopened on request,
// and a clean stop. The CLI parses flags into FleetServiceOptions and calls RunFleetService.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::server {

struct FleetServiceOptions {
  std::string db = "vigil.db";
  std::string host = "127.0.0.1";  // --listen's host
  int port = 8080;                 // --listen's port; 0: any free port
  std::string token_file;
  bool insecure_allow_writes = false;
  int threads = 32;
  double max_body_mb = 64;
  std::string sync = "full";  // the store's: full or normal
  std::string port_file;      // the port bound, written here once listening
  std::string remediation;    // the remediation policy (YAML); "" for none
  bool token_for_reads = false;
  std::vector<std::string> allowed_hosts;  // besides the defaults for `host`
  std::string tls_cert, tls_key, tls_client_ca;
  int max_connections = 4096;
  double header_timeout_s = 10;
  double idle_timeout_s = 30;
  std::string access_log;
  std::string error_log;
};

// Serves until `stop` is set (SIGINT, SIGTERM), then stops cleanly; reopens the access and
// error logs each time `reopen_logs` is set (SIGHUP), clearing it. Errors before listening:
// InvalidArgument naming the flag (a policy that cannot be read, --token-for-reads without
// --token-file, a bad token file), the store's (a damaged or newer database), the HTTP server's
// (an address in use).
Status RunFleetService(const FleetServiceOptions& options, const std::atomic<bool>& stop,
                       std::atomic<bool>& reopen_logs);

}  // namespace vigil::server
