// The agent side of the fleet service: `vigil run --report URL` uploads the node's results
// document, and keeps it in a spool directory when the server cannot be reached;
// `vigil report --spool DIR` sends what the spool holds later.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/env.h"
#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/select/history.h"
#include "vigil/telemetry/http_client.h"

namespace httplib {
class Client;
}

namespace vigil::server {

// What an agent sends to the fleet service. ReportClient is the one that speaks HTTP; tests of
// the callers (DrainSpool, alert delivery, `vigil run --report`) can give a fake instead.
class Reporter {
 public:
  virtual ~Reporter() = default;

  // Sends a node's results (a results document or summary lines) and returns the service's
  // answer. Unavailable when the service cannot be reached or fails: worth trying again later;
  // InvalidArgument with the service's message when it refuses the upload: trying again will not
  // help.
  virtual Result<Json> Upload(std::string_view body) = 0;
  // Sends detector alerts (JSONL, as `vigil detect --out` writes them); errors as Upload's.
  virtual Result<Json> PostAlerts(std::string_view body) = 0;
};

// One node's verdict in the server's answer to an upload.
struct UploadVerdict {
  std::string node;
  std::string verdict;  // healthy, defective or unjudged
  std::vector<std::string> failing;
  int64_t criteria_version = 0;
};

// The Reporter of a `vigil serve` at a URL. Not thread-safe (one connection).
class ReportClient final : public Reporter {
 public:
  // `url` is the server's base, http[s]://host:port; `token` may be empty (an insecure server).
  static Result<std::unique_ptr<ReportClient>> Create(const std::string& url, std::string token,
                                                      double timeout_s = 30,
                                                      const telemetry::TlsClientOptions& tls = {});
  ~ReportClient() override;

  // POSTs a body to /api/v1/results: Unavailable when the server cannot be reached or answers
  // 5xx, InvalidArgument with the server's message for 4xx.
  Result<Json> Upload(std::string_view body) override;
  // POSTs to /api/v1/alerts; errors as Upload's.
  Result<Json> PostAlerts(std::string_view body) override;
  // The latest verdict of `node` (GET /api/v1/nodes/{node}). NotFound when the service holds no
  // upload of it; otherwise errors as Upload's.
  Result<UploadVerdict> NodeVerdict(std::string_view node);
  // The fleet's history as JSON Lines (GET /api/v1/history, select's history format): `vigil
  // select --url`. InvalidArgument with the server's message when it has none (409: no node has
  // uploaded); otherwise errors as Upload's.
  Result<std::string> History();

 private:
  ReportClient(std::string url, std::string prefix, std::string token,
               std::unique_ptr<httplib::Client> client);
  Result<Json> Post(std::string_view endpoint, std::string_view what, std::string_view body);
  std::string url_, prefix_, token_;
  std::unique_ptr<httplib::Client> client_;
};

// The verdicts of an answer of POST /api/v1/results (fields it lacks stay empty).
std::vector<UploadVerdict> VerdictsOf(const Json& answer);

// Reads the token from a file (surrounding whitespace dropped). InvalidArgument when it is
// empty.
Result<std::string> ReadToken(const std::string& path, Env& env = Env::Default());

// The client of the --report URL, --token-file PATH (no PATH: no token) and TLS flags; nullptr
// when `url` is empty.
Result<std::unique_ptr<ReportClient>> ReporterOf(const std::string& url,
                                                 const std::string& token_file,
                                                 const telemetry::TlsClientOptions& tls = {},
                                                 double timeout_s = 30);

// The history of the fleet service at `url` (ReportClient::History), read as select reads a
// history file (the URL names it in errors): `vigil select --url`. Errors: ReporterOf's,
// History's, select::ParseHistory's.
Result<select::History> FetchFleetHistory(const std::string& url, const std::string& token_file,
                                          const telemetry::TlsClientOptions& tls = {});

// Keeps a document in the spool directory (made if missing) under a name that sorts by time:
// "<stamp>-<node>.json", or "<stamp>-<node>-<n>.json" (n = 2, 3, ...) when that is taken: a
// spooled file is never replaced, even by one whose node sanitises alike in the same second.
// Written atomically (complete or absent). The path written. Thread-safe.
Result<std::string> SpoolDocument(const std::string& dir, std::string_view node, double now,
                                  std::string_view text, Env& env = Env::Default());

struct DrainReport {
  std::vector<std::string> sent;      // files uploaded and removed
  std::vector<std::string> rejected;  // files the server refused, moved to <dir>/rejected/
  std::vector<Json> answers;          // the server's answer for each sent file
  Status stopped;                     // why draining stopped early (server unreachable), or OK
  std::vector<std::string> kept;      // files left in the spool because draining stopped early
};

// What `vigil report` did, for the line it ends with.
struct ReportTally {
  size_t sent = 0;       // documents the server took (files given and spooled ones)
  size_t defective = 0;  // nodes it judged defective in its answers
  size_t refused = 0;    // spooled documents it refused, moved to <spool>/rejected
  size_t kept = 0;       // spooled documents left for next time (the server stopped answering)
  std::string spool;     // --spool; "": none
};

// "Sent 3 documents (1 node defective); 1 refused (moved to vigil-spool/rejected); 2 kept in
// vigil-spool (the server stopped answering)." — the refused and kept parts only with a spool.
std::string ReportSummaryLine(const ReportTally& tally);

// Uploads every *.json file of the spool, oldest name first: sent files are removed, refused
// ones moved aside (with the server's message logged), and the first unreachable-server error
// stops the drain, leaving the rest for next time (`kept`). IoError when the directory cannot be
// read.
Result<DrainReport> DrainSpool(const std::string& dir, Reporter& client, Env& env = Env::Default());

}  // namespace vigil::server
