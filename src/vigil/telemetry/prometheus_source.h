// A job's telemetry from a Prometheus server: query_range polled as data arrives
// (docs/detect.md, "Telemetry").
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/bounds.h"
#include "vigil/core/clock.h"
#include "vigil/core/status.h"
#include "vigil/telemetry/http_client.h"
#include "vigil/telemetry/prometheus_client.h"
#include "vigil/telemetry/readers.h"
#include "vigil/telemetry/series.h"
#include "vigil/telemetry/source.h"

namespace vigil::telemetry {

// Ranges of the poll's options (`vigil detect --since`, `--poll`, `--duration`).
inline constexpr Bounds kSinceBounds{.lo = 0, .hi = 365 * 86400.0, .seconds = true};
inline constexpr Bounds kPollBounds{.lo = 0.1, .hi = 3600, .seconds = true};
inline constexpr Bounds kFollowDurationBounds{.lo = 1, .hi = 3650 * 86400.0, .seconds = true};

struct PollOptions {
  std::string selector;  // PromQL series selector of the job, e.g. {job="train"}
  double since = 900;    // how far back the first query reaches (kSinceBounds)
  double step = 1;       // query resolution, the detector's step (kStepBounds)
  double poll = 5;       // follow: seconds between queries (kPollBounds)
  bool follow = false;   // keep polling as data arrives; false: one query
  double duration = 0;   // follow: stop after this long (kFollowDurationBounds); 0: never
};

// InvalidArgument "<flag>: <value> is outside <range>" for the first option outside its range, or
// "--selector: empty"; options are named as `vigil detect` names its flags (--since, --step,
// --poll, --duration).
Status ValidatePollOptions(const PollOptions& options);

class PrometheusSource : public PointSource {
 public:
  // Polls `server` (PrometheusApi::QueryRange); `name` names it in messages. `server`, `names`
  // and `clock` must outlive the source; `interrupted` (may be null) ends a follow at the next
  // wait.
  // REQUIRES: ValidatePollOptions(options).ok().
  PrometheusSource(PollOptions options, std::string name, PrometheusApi& server, Normalizer& names,
                   Clock& clock, const std::atomic<bool>* interrupted);

  // A source that asks the server at `url` (PrometheusClient, 10 s time-out). InvalidArgument for
  // options out of range or a URL that is not http[s]://host[:port][/prefix].
  static Result<std::unique_ptr<PrometheusSource>> Connect(const std::string& url,
                                                           const TlsClientOptions& tls,
                                                           PollOptions options, Normalizer& names,
                                                           Clock& clock,
                                                           const std::atomic<bool>* interrupted);

  // The first query reaches back `since`; with `follow`, a query every `poll` then fetches what
  // arrived, leaving the newest kSettleSeconds for scrapes still in flight, until `duration` has
  // passed or `*interrupted` is set. Each answer is one batch, sorted by time, with until = the
  // end of what was asked plus a step. A failed query ends a single query with its error; under
  // `follow` it is logged and retried after a wait that doubles from `poll` up to a minute.
  // Unavailable "no samples to judge; the last query failed: ..." when no sample was ever
  // accepted and the last query failed: a server that never answered judged nothing.
  Status Run(const BatchSink& sink) override;

  std::string name() const override { return name_; }
  int64_t skipped() const override { return skipped_; }

  // Prometheus stamps a scrape when it starts: the newest seconds may still be filling.
  static constexpr double kSettleSeconds = 2;
  // The longest wait between retries of a failed query (at least `poll`).
  static constexpr double kMaxRetrySeconds = 60;

 private:
  PollOptions o_;
  std::string name_;
  PrometheusApi& server_;
  Normalizer& names_;
  Clock& clock_;
  const std::atomic<bool>* interrupted_;
  std::unique_ptr<PrometheusClient> client_;  // server_, when made by Connect
  int64_t skipped_ = 0;
  std::vector<Point> batch_;
};

}  // namespace vigil::telemetry
