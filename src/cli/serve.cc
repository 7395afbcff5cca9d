#include "cli/serve.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <thread>

#include "vigil/core/clock.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/results/verdict.h"
#include "vigil/server/client.h"

namespace vigil::cli {
namespace {

// Ranges of serve's numeric flags (docs/serve.md). A body is held in memory whole: 4 GiB at most
// (and no size_t overflow on the way to bytes).
constexpr Bounds kThreadsBounds{.lo = 2, .hi = 1024};
constexpr Bounds kMaxBodyMbBounds{.lo = 0.01, .hi = 4096};
constexpr Bounds kMaxConnectionsBounds{.lo = 16, .hi = 1000000};
constexpr Bounds kHeaderTimeoutBounds{.lo = 0.1, .hi = 3600, .seconds = true};
constexpr Bounds kIdleTimeoutBounds{.lo = 0.1, .hi = 86400, .seconds = true};

}  // namespace

CLI::App* SetupServe(CLI::App& parent, ServeOptions& o) {
  CLI::App* c = parent.add_subcommand(
      "serve",
      "Run the fleet service: nodes upload results, it judges and keeps them (HTTP API, "
      "dashboard, /metrics)");
  c->add_option("--db", o.service.db, "SQLite database file (created if absent)")
      ->capture_default_str();
  c->add_option("--listen", o.listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  c->add_option("--token-file", o.service.token_file,
                "File holding the bearer token that writes (uploads, learning, alerts) need");
  c->add_flag("--insecure-allow-writes", o.service.insecure_allow_writes,
              "Accept writes without a token (without --token-file the server is read-only)");
  c->add_flag("--token-for-reads", o.service.token_for_reads,
              "Reads (API, dashboard, /metrics) need the token too; /healthz stays open");
  c->add_option("--allowed-host", o.service.allowed_hosts,
                "A name clients reach this server by (repeatable); IP literals, localhost and "
                "this machine's names are accepted without it, other Host headers get 421");
  c->add_option("--tls-cert", o.service.tls_cert, "PEM certificate chain: serve HTTPS")
      ->check(CLI::ExistingFile);
  c->add_option("--tls-key", o.service.tls_key, "PEM private key of --tls-cert")
      ->check(CLI::ExistingFile);
  c->add_option("--tls-client-ca", o.service.tls_client_ca,
                "PEM CA bundle: clients must present a certificate it signed (mutual TLS)")
      ->check(CLI::ExistingFile);
  c->add_option("--threads", o.service.threads,
                "Requests handled at once (connections themselves need no thread)")
      ->check(InBounds(kThreadsBounds))
      ->capture_default_str();
  c->add_option("--max-connections", o.service.max_connections,
                "Connections open at once; more are answered 503")
      ->check(InBounds(kMaxConnectionsBounds))
      ->capture_default_str();
  c->add_option("--header-timeout", o.service.header_timeout_s,
                "Seconds a client has for the TLS handshake and each request head")
      ->check(InBounds(kHeaderTimeoutBounds))
      ->capture_default_str();
  c->add_option("--idle-timeout", o.service.idle_timeout_s,
                "Seconds a kept-alive connection may wait for its next request")
      ->check(InBounds(kIdleTimeoutBounds))
      ->capture_default_str();
  c->add_option("--access-log", o.service.access_log,
                "Append one JSON line per request here ('-': standard output); reopened on SIGHUP");
  c->add_option("--error-log", o.service.error_log,
                "Write warnings and errors here instead of standard error; reopened on SIGHUP");
  c->add_option("--max-body-mb", o.service.max_body_mb, "Largest request body accepted, in MiB")
      ->check(InBounds(kMaxBodyMbBounds))
      ->capture_default_str();
  c->add_option("--sync", o.service.sync,
                "full: an acknowledged upload survives power loss; normal: a crash of the "
                "process only")
      ->check(CLI::IsMember({"full", "normal"}))
      ->capture_default_str();
  c->add_option("--port-file", o.service.port_file, "Write the port bound here once listening");
  c->add_option("--remediation", o.service.remediation,
                "Remediation policy (YAML): drain and resume nodes through Slurm or a command "
                "(dry-run unless it says enforce; docs/serve.md)");
  return c;
}

CommandResult RunServe(const ServeOptions& o) {
  VIGIL_ASSIGN_OR_RETURN(const auto host_port, ParseHostPort("--listen", o.listen));
  server::FleetServiceOptions service = o.service;
  service.host = host_port.first;
  service.port = host_port.second;
  const std::atomic<bool>& interrupted = InstallInterruptFlag();
  std::atomic<bool>& hangup = InstallHangupFlag();
  VIGIL_RETURN_IF_ERROR(server::RunFleetService(service, interrupted, hangup));
  return ExitCode::kHealthy;
}

CLI::App* SetupReport(CLI::App& parent, ReportOptions& o) {
  CLI::App* c = parent.add_subcommand(
      "report",
      "Send results documents to a fleet service (`vigil serve`): files given, and "
      "everything a spool directory kept while the server was unreachable");
  c->add_option("files", o.files, "Results documents or summary JSONL files to send");
  c->add_option("--spool", o.spool, "Spool directory of `vigil run --report` to empty");
  c->add_option("--report", o.url, "The server, http://host:port")->required();
  c->add_option("--token-file", o.token_file, "File holding the server's bearer token");
  AddTlsClientFlags(*c, "--report", o.tls);
  c->add_flag("--json", o.json, "Print the server's answers as JSON lines");
  return c;
}

namespace {

// "node: verdict (failing: GPU 3, NIC 5)" per result of one answer; how many are defective.
size_t PrintAnswer(const Json& answer, bool json) {
  if (json) fmt::print("{}\n", DumpJson(answer));
  size_t defective = 0;
  for (const server::UploadVerdict& v : server::VerdictsOf(answer)) {
    defective += v.verdict == VerdictName(Verdict::kDefective) ? 1 : 0;
    if (json) continue;
    fmt::print("{}: {}{}\n", v.node, v.verdict,
               v.failing.empty() ? "" : fmt::format(" (failing: {})", fmt::join(v.failing, ", ")));
  }
  return defective;
}

// The line `vigil report` ends with, whatever stopped it: on stdout, or with --json (whose stdout
// is the server's answers, one JSON line each) on stderr.
void PrintSummary(const server::ReportTally& tally, bool json) {
  if (json) {
    spdlog::info("{}", server::ReportSummaryLine(tally));
  } else {
    fmt::print("{}\n", server::ReportSummaryLine(tally));
  }
}

// Sends the files given, then the spool; stops at the first error, with what was done so far.
Status SendAll(const ReportOptions& o, server::ReportClient& client, server::ReportTally& tally) {
  for (const std::string& f : o.files) {
    VIGIL_ASSIGN_OR_RETURN(std::string body, ReadFile(f));
    Result<Json> answer = client.Upload(body);
    if (!answer.ok()) return answer.status().WithContext(f);
    ++tally.sent;
    tally.defective += PrintAnswer(*answer, o.json);
  }
  if (o.spool.empty()) return Status::Ok();
  VIGIL_ASSIGN_OR_RETURN(server::DrainReport report, server::DrainSpool(o.spool, client));
  for (const Json& a : report.answers) tally.defective += PrintAnswer(a, o.json);
  tally.sent += report.sent.size();
  tally.refused = report.rejected.size();
  tally.kept = report.kept.size();
  if (!report.stopped.ok()) return report.stopped.WithContext("stopped; the rest stays spooled");
  if (!report.rejected.empty()) {
    return Status::InvalidArgument(
        fmt::format("{} spooled file(s) refused by the server", report.rejected.size()));
  }
  return Status::Ok();
}

}  // namespace

CommandResult RunReport(const ReportOptions& o) {
  if (o.files.empty() && o.spool.empty()) {
    return Status::InvalidArgument("nothing to send: give files, --spool DIR, or both");
  }
  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<server::ReportClient> client,
                         server::ReporterOf(o.url, o.token_file, o.tls));  // --report is required
  server::ReportTally tally;
  tally.spool = o.spool;
  const Status sent = SendAll(o, *client, tally);
  PrintSummary(tally, o.json);
  VIGIL_RETURN_IF_ERROR(sent);
  return tally.defective > 0 ? ExitCode::kDefect : ExitCode::kHealthy;
}

}  // namespace vigil::cli
