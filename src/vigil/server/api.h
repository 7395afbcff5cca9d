// The HTTP API of `vigil serve` (docs/serve.md), apart from sockets: a request in, a response
// out. http.h binds it to a listening socket; tests call Handle directly.
//
//   POST /api/v1/results         upload a results document or summary lines; answers verdicts
//   GET  /api/v1/nodes           latest state of every node (?verdict=, ?hardware=, ?retired=)
//   GET  /api/v1/nodes/{node}    one node's state and history (?limit=)
//   POST /api/v1/nodes/{node}/retire   take a node out of the fleet
//   POST /api/v1/nodes/{node}/rename   {"to": "new name"}
//   POST /api/v1/criteria/learn  learn criteria from every node's latest results
//   GET  /api/v1/criteria        the current criteria and every version
//   POST /api/v1/alerts          detector alerts (JSONL or an array)
//   GET  /api/v1/alerts          the newest alerts (?machine=, ?limit=)
//   GET  /api/v1/remediation     remediation's state and audit log, newest first (?node=,
//                                ?limit=, ?before=)
//   POST /api/v1/remediation/reset   a person closes the circuit breaker
//   GET  /metrics                Prometheus exposition
//   GET  /healthz                liveness, and the store's database file and readability
//   GET  /  and  /nodes/{node}   the dashboard (HTML); / takes ?verdict=, ?hardware=, ?q=,
//                                ?page=, ?per_page= and ?refresh=; see dashboard.h
//
// Writes need "Authorization: Bearer <token>"; without a configured token the API is
// read-only unless insecure writes are allowed. With token_for_reads, every read but /healthz
// needs it too. Errors are JSON: {"error": "...", "status": N}.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vigil/core/mutex.h"
#include "vigil/server/service.h"

namespace vigil::server {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // decoded, without the query
  std::map<std::string, std::string> query;
  std::string authorization;  // the Authorization header
  std::string body;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct ApiOptions {
  std::string token;                   // empty: no writes, unless allow_insecure_writes
  bool allow_insecure_writes = false;  // writes without a token (tests, a trusted loopback)
  size_t max_body = 64 << 20;          // bytes; larger uploads get 413
  bool token_for_reads = false;        // reads need the token too (all but /healthz)
};

// What the HTTP layer counts of its connections, exported in /metrics.
struct ConnectionCounters {
  std::atomic<int64_t> open{0};       // connections open now
  std::atomic<int64_t> refused{0};    // turned away with 503 at the connection cap
  std::atomic<int64_t> timed_out{0};  // closed for a slow head, body or TLS handshake, or idle
};

// One audit record as the API writes it.
Json AuditRecordJson(const remediate::AuditRecord& record);

// A JSON error response: {"error": message, "status": status}.
Response ErrorResponse(int status, std::string_view message);

// The Selector's cache (selection.h), held by pointer: its header brings Eigen, whose parameter
// names glibc's <resolv.h> (through httplib.h) turns into macros in files that include both.
class SelectionCache;

class Api {
 public:
  Api(FleetService& service, ApiOptions options);
  ~Api();

  // Never throws; every failure is a 4xx or 5xx response with a JSON body. Calls Admit first.
  Response Handle(const Request& request);

  // Whether a request may go on, judged on its method, path and Authorization header alone (the
  // body is not read yet): status 200 when it may, else the refusal (401, 403). Refusals are
  // counted in /metrics by reason.
  Response Admit(const Request& head);

  // Counts a response for /metrics; `route` is the endpoint's pattern, not the raw path.
  void Count(std::string_view route, int status);
  ConnectionCounters& connections() { return connections_; }

 private:
  Response Route(const Request& request, std::string& route);
  Response PostResults(const Request& request);
  Response GetNodes(const Request& request);
  Response GetNode(const Request& request, std::string_view node);
  Response Retire(std::string_view node);
  Response Rename(const Request& request, std::string_view node);
  Response Learn();
  Response GetCriteria();
  Response PostAlerts(const Request& request);
  Response GetAlerts(const Request& request);
  Response PostIncidents(const Request& request);
  Response GetIncidents(const Request& request);
  Response GetHistory();
  Response GetSelection(const Request& request);
  Response GetNetwork();
  Response GetRemediation(const Request& request);
  Response ResetRemediation();
  Response Metrics();
  Response Healthz();
  Response FleetPage(const Request& request);
  Response NodePage(std::string_view node);

  FleetService& service_;
  const ApiOptions options_;
  Mutex counts_mu_;
  // (route, status) -> responses
  std::map<std::pair<std::string, int>, int64_t> counts_ GUARDED_BY(counts_mu_);
  std::map<std::string, int64_t> auth_failures_ GUARDED_BY(counts_mu_);  // reason -> count
  ConnectionCounters connections_;
  std::unique_ptr<SelectionCache> selection_;
};

}  // namespace vigil::server
