#include "cli/serve.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "vigil/core/clock.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/server/api.h"
#include "vigil/server/client.h"
#include "vigil/server/http.h"
#include "vigil/server/service.h"
#include "vigil/store/sqlite_store.h"

namespace vigil::cli {
namespace {

// Ranges of serve's numeric flags (docs/serve.md). A body is held in memory whole: 4 GiB at most
// (and no size_t overflow on the way to bytes).
constexpr Bounds kThreadsBounds{.lo = 2, .hi = 1024};
constexpr Bounds kMaxBodyMbBounds{.lo = 0.01, .hi = 4096};

}  // namespace

CLI::App* SetupServe(CLI::App& parent, ServeOptions& o) {
  CLI::App* c = parent.add_subcommand(
      "serve",
      "Run the fleet service: nodes upload results, it judges and keeps them (HTTP API, "
      "dashboard, /metrics)");
  c->add_option("--db", o.db, "SQLite database file (created if absent)")->capture_default_str();
  c->add_option("--listen", o.listen, "HOST:PORT to listen on (port 0: any free port)")
      ->capture_default_str();
  c->add_option("--token-file", o.token_file,
                "File holding the bearer token that writes (uploads, learning, alerts) need");
  c->add_flag("--insecure-allow-writes", o.insecure_allow_writes,
              "Accept writes without a token (without --token-file the server is read-only)");
  c->add_option("--threads", o.threads, "Connections served at once")
      ->check(InBounds(kThreadsBounds))
      ->capture_default_str();
  c->add_option("--max-body-mb", o.max_body_mb, "Largest request body accepted, in MiB")
      ->check(InBounds(kMaxBodyMbBounds))
      ->capture_default_str();
  c->add_option("--sync", o.sync,
                "full: an acknowledged upload survives power loss; normal: a crash of the "
                "process only")
      ->check(CLI::IsMember({"full", "normal"}))
      ->capture_default_str();
  c->add_option("--port-file", o.port_file, "Write the port bound here once listening");
  return c;
}

CommandResult RunServe(const ServeOptions& o) {
  VIGIL_ASSIGN_OR_RETURN(const auto host_port, ParseHostPort("--listen", o.listen));
  server::ApiOptions api_options;
  api_options.allow_insecure_writes = o.insecure_allow_writes;
  api_options.max_body = static_cast<size_t>(o.max_body_mb * (1 << 20));
  if (!o.token_file.empty()) {
    VIGIL_ASSIGN_OR_RETURN(api_options.token, server::ReadToken(o.token_file));
    struct stat st {};
    if (stat(o.token_file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
      spdlog::warn("{}: the token file is readable by others (chmod 600 it)", o.token_file);
    }
  }
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store,
                         store::OpenSqliteStore(o.db, {.sync_full = o.sync == "full"}));
  server::FleetService service(*store, SystemClock(), validate::LearnOptions{});
  VIGIL_RETURN_IF_ERROR(service.Start());
  server::Api api(service, api_options);
  server::HttpServer http(api,
                          {host_port.first, host_port.second, o.threads, api_options.max_body});
  VIGIL_ASSIGN_OR_RETURN(const int port, http.Bind());
  if (!o.port_file.empty()) {
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.port_file, fmt::format("{}\n", port)));
  }
  const char* writes = !api_options.token.empty() ? "writes need the token"
                       : o.insecure_allow_writes  ? "writes allowed WITHOUT a token"
                                                  : "read-only (no --token-file)";
  const std::shared_ptr<const server::ActiveCriteria> active = service.criteria();
  spdlog::info("serving {} at http://{}:{}/ ({}; criteria {})", o.db, host_port.first, port, writes,
               active ? fmt::format("version {}", active->version) : "not learned yet");
  std::thread listener([&] { http.Serve(); });
  const std::atomic<bool>& interrupted = InstallInterruptFlag();
  while (!interrupted.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  spdlog::info("stopping");
  http.Stop();
  listener.join();
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
  c->add_flag("--json", o.json, "Print the server's answers as JSON lines");
  return c;
}

namespace {

// "node: verdict (failing: GPU 3, NIC 5)" per result of one answer; true if any is defective.
bool PrintAnswer(const Json& answer, bool json) {
  if (json) fmt::print("{}\n", DumpJson(answer));
  bool defective = false;
  for (const server::UploadVerdict& v : server::VerdictsOf(answer)) {
    defective |= v.verdict == "defective";
    if (json) continue;
    fmt::print("{}: {}{}\n", v.node, v.verdict,
               v.failing.empty() ? "" : fmt::format(" (failing: {})", fmt::join(v.failing, ", ")));
  }
  return defective;
}

}  // namespace

CommandResult RunReport(const ReportOptions& o) {
  if (o.files.empty() && o.spool.empty()) {
    return Status::InvalidArgument("nothing to send: give files, --spool DIR, or both");
  }
  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<server::ReportClient> client,
                         server::ReporterOf(o.url, o.token_file));  // --report is required
  bool defective = false;
  for (const std::string& f : o.files) {
    VIGIL_ASSIGN_OR_RETURN(std::string body, ReadFile(f));
    Result<Json> answer = client->Upload(body);
    if (!answer.ok()) return answer.status().WithContext(f);
    defective |= PrintAnswer(*answer, o.json);
  }
  if (!o.spool.empty()) {
    VIGIL_ASSIGN_OR_RETURN(server::DrainReport report, server::DrainSpool(o.spool, *client));
    for (const Json& a : report.answers) defective |= PrintAnswer(a, o.json);
    spdlog::info("{}: {} sent, {} refused (moved to {}/rejected)", o.spool, report.sent.size(),
                 report.rejected.size(), o.spool);
    if (!report.stopped.ok()) return report.stopped.WithContext("stopped; the rest stays spooled");
    if (!report.rejected.empty()) {
      return Status::InvalidArgument(
          fmt::format("{} spooled file(s) refused by the server", report.rejected.size()));
    }
  }
  return defective ? ExitCode::kDefect : ExitCode::kHealthy;
}

}  // namespace vigil::cli
