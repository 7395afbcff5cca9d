#include "vigil/server/fleet_main.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "vigil/core/clock.h"
#include "vigil/core/file.h"
#include "vigil/core/log.h"
#include "vigil/remediate/backend.h"
#include "vigil/remediate/policy.h"
#include "vigil/server/access_log.h"
#include "vigil/server/api.h"
#include "vigil/server/client.h"
#include "vigil/server/http.h"
#include "vigil/server/service.h"
#include "vigil/store/sqlite_store.h"

namespace vigil::server {

Status RunFleetService(const FleetServiceOptions& o, const std::atomic<bool>& stop,
                       std::atomic<bool>& reopen_logs) {
  std::optional<remediate::Policy> policy;
  if (!o.remediation.empty()) {
    Result<remediate::Policy> read = remediate::ReadPolicy(o.remediation);
    // Any policy that cannot be read is bad input (exit 2), found before anything starts.
    if (!read.ok()) {
      return Status::InvalidArgument(fmt::format("--remediation: {}", read.status().message()));
    }
    policy = std::move(read).value();
  }
  if (!o.error_log.empty()) VIGIL_RETURN_IF_ERROR(LogToFile(o.error_log));
  ApiOptions api_options;
  api_options.allow_insecure_writes = o.insecure_allow_writes;
  api_options.max_body = static_cast<size_t>(o.max_body_mb * (1 << 20));
  api_options.token_for_reads = o.token_for_reads;
  if (!o.token_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(api_options.token, ReadToken(o.token_file));
    struct stat st {};
    if (stat(o.token_file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
      spdlog::warn("{}: the token file is readable by others (chmod 600 it)", o.token_file);
    }
  }
  if (o.token_for_reads && api_options.token.empty()) {
    return Status::InvalidArgument("--token-for-reads needs --token-file");
  }
  std::unique_ptr<AccessLog> access_log;
  if (!o.access_log.empty()) {
    VIGIL_ASSIGN_OR_RETURN(access_log, AccessLog::Open(o.access_log));
  }
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store,
                         store::OpenSqliteStore(o.db, {.sync_full = o.sync == "full"}));
  FleetService service(*store, SystemClock(), learned::LearnOptions{});
  VIGIL_RETURN_IF_ERROR(service.Start());
  if (policy) {
    const remediate::Policy& p = *policy;
    spdlog::info("remediation: {} through {} ({}; breaker at {} of the fleet)",
                 remediate::ModeName(p.mode), remediate::BackendKindName(p.backend), o.remediation,
                 p.max_drained_share);
    VIGIL_RETURN_IF_ERROR(service.EnableRemediation(p, remediate::MakeBackend(p)));
  }
  Api api(service, api_options);
  HttpOptions http_options{.host = o.host,
                           .port = o.port,
                           .threads = o.threads,
                           .max_body = api_options.max_body,
                           .max_connections = static_cast<size_t>(o.max_connections),
                           .header_timeout_s = o.header_timeout_s,
                           .idle_timeout_s = o.idle_timeout_s,
                           .allowed_hosts = DefaultAllowedHosts(o.host),
                           .tls = {o.tls_cert, o.tls_key, o.tls_client_ca},
                           .access_log = access_log.get()};
  for (const std::string& h : o.allowed_hosts) http_options.allowed_hosts.push_back(h);
  HttpServer http(api, http_options);
  VIGIL_ASSIGN_OR_RETURN(const int port, http.Bind());
  if (!o.port_file.empty()) {
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.port_file, fmt::format("{}\n", port)));
  }
  const bool tls = !o.tls_cert.empty();
  const char* writes = !api_options.token.empty() ? "writes need the token"
                       : o.insecure_allow_writes  ? "writes allowed WITHOUT a token"
                                                  : "read-only (no --token-file)";
  if (!tls && !api_options.token.empty() && !IsLoopback(o.host)) {
    spdlog::warn(
        "listening on {} without TLS: the token crosses the network in cleartext (give "
        "--tls-cert and --tls-key)",
        o.host);
  }
  const std::shared_ptr<const ActiveCriteria> active = service.criteria();
  spdlog::info("serving {} at {}://{}:{}/ ({}{}; criteria {})", o.db, tls ? "https" : "http",
               o.host, port, writes, o.token_for_reads ? ", reads too" : "",
               active ? fmt::format("version {}", active->version) : "not learned yet");
  std::thread listener([&] { http.Serve(); });
  while (!stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!reopen_logs.exchange(false)) continue;
    if (access_log) {
      if (Status s = access_log->Reopen(); !s.ok()) spdlog::error("{}", s.message());
    }
    if (!o.error_log.empty()) {
      if (Status s = LogToFile(o.error_log); !s.ok()) spdlog::error("{}", s.message());
    }
  }
  spdlog::info("stopping");
  http.Stop();
  listener.join();
  return Status::Ok();
}

}  // namespace vigil::server
