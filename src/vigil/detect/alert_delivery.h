// Alerts posted to a fleet service as they are raised (`vigil detect --report`), kept while the
// service cannot be reached and tried again after a back-off (docs/detect.md).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/clock.h"
#include "vigil/core/status.h"
#include "vigil/detect/detector.h"

namespace vigil::detect {

// Sends alerts as JSONL, one AlertToJson object per line. OK: the service took them;
// Unavailable: it cannot be reached now (worth trying again); any other error: it refused them
// (a wrong token), and trying again will not help. The caller adapts its client to this (`vigil
// detect` wraps server::ReportClient::PostAlerts).
using PostAlerts = std::function<Status(std::string_view jsonl)>;

// Not thread-safe.
class AlertDelivery {
 public:
  // After a failed post, the next waits this long, twice as long after each further failure, at
  // most kMaxRetrySeconds (a server that does not answer holds a poll for the client's time-out).
  static constexpr double kFirstRetrySeconds = 5;
  static constexpr double kMaxRetrySeconds = 300;

  // `destination` names the service in messages; `clock` times the waits and must outlive this.
  AlertDelivery(PostAlerts post, std::string destination, const Clock& clock);

  // Queues `alerts`, then posts the queue unless a failed post set a wait that has not passed.
  // `last` (the end of a run): posts even then, and a failure leaves the alerts queued. An error
  // only when the service refused them.
  Status Add(const std::vector<Alert>& alerts, bool last);

  // OK when the service took every alert; else Unavailable "<n> alerts not sent: <last error>",
  // with "; they are in <kept_in>" when `kept_in` (a file that has them) is not empty.
  Status Delivered(std::string_view kept_in) const;

  size_t unsent() const { return unsent_count_; }

 private:
  PostAlerts post_;
  std::string destination_;
  const Clock& clock_;
  Backoff retry_{kFirstRetrySeconds, kMaxRetrySeconds};
  double next_try_ = 0;  // monotonic seconds
  std::string unsent_;   // JSONL
  size_t unsent_count_ = 0;
  std::string last_error_;
};

}  // namespace vigil::detect
