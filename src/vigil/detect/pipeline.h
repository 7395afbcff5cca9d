// A detection run, what `vigil detect` does: a job's telemetry from files or a Prometheus
// server, through the normaliser and the detector, to alerts that are handed to the caller as
// they are raised, written to a file, posted to a fleet service, and scored against fault labels
// (docs/detect.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vigil/core/clock.h"
#include "vigil/core/status.h"
#include "vigil/detect/alert_delivery.h"
#include "vigil/detect/detector.h"
#include "vigil/detect/evaluate.h"
#include "vigil/telemetry/file_source.h"
#include "vigil/telemetry/http_client.h"
#include "vigil/telemetry/prometheus_source.h"
#include "vigil/telemetry/series.h"
#include "vigil/telemetry/source.h"

namespace vigil::detect {

struct DetectionOptions {
  // The telemetry: files (files.paths), or a Prometheus server (prometheus); exactly one.
  telemetry::FileSourceOptions files;
  std::string prometheus;           // base URL, http[s]://host[:port][/prefix]
  telemetry::TlsClientOptions tls;  // how an https:// server is trusted
  // Selector, since, poll, follow and duration of the queries; their step is detector.step.
  telemetry::PollOptions poll;
  std::string signals;  // YAML that extends the metric-to-signal map; "": the default map
  // Metrics the map does not know become signals of their own name; unset: for files only (a
  // Prometheus server holds far more metrics than the job's).
  std::optional<bool> passthrough;
  DetectorOptions detector;
  std::string labels;  // fault labels CSV that the alerts are scored against; "": no score
  // Alerts JSONL; "": none. Under poll.follow each alert is appended as it is raised; otherwise
  // the file is written whole (atomically) at the end.
  std::string out;
  std::function<void(const Alert&)> on_alert;  // each alert as it is raised (may be empty)
  PostAlerts post;         // a fleet service that takes the alerts as raised; empty: none
  std::string post_to;     // names that service in messages
  Clock* clock = nullptr;  // null: SystemClock()
  const std::atomic<bool>* interrupted = nullptr;  // once set, a follow stops at its next wait
};

struct DetectionReport {
  std::vector<Alert> alerts;           // every alert raised, in order
  telemetry::NormalizerCounts counts;  // samples accepted and dropped
  size_t machines = 0;                 // that reported
  int64_t late_points = 0;             // dropped by the detector as late
  int64_t skipped = 0;                 // malformed lines skipped, series without a machine
  std::optional<Score> score;          // when labels were given
  // AlertDelivery::Delivered: OK, or Unavailable naming the alerts the service never took.
  Status delivery;
};

// OK when a run can be made of the options: files or a Prometheus server (InvalidArgument "give
// either --input FILE... or --prometheus URL"), a server with a selector, a follow of a server
// only, the detector's options (ValidateDetectorOptions) and a server's poll options
// (ValidatePollOptions, their step the detector's). Messages name the options as `vigil detect`
// names its flags.
Status ValidateDetectionOptions(const DetectionOptions& options);

// Checks the options (ValidateDetectionOptions, `out` writable), reads the labels and the signal
// map, opens the source, then Detect. Errors: InvalidArgument for options out of range, bad labels,
// signal map or input (naming file, line and field), and for no sample to judge; Unavailable for a
// Prometheus server that cannot be asked (a follow retries instead); the fleet service's refusal of
// the alerts; IoError for an output that cannot be written.
Result<DetectionReport> RunDetection(const DetectionOptions& options);

// The run itself, over a source the caller made (tests give fakes): every batch fed to the
// detector; a batch with a time it is complete to (a live source) closes the steps before it and
// hands over the alerts raised; at the end, every step is judged and the rest handed over. Uses
// the options' detector, out, on_alert, post, post_to, clock and poll.follow. `names` is the
// normaliser that the source fills; `labels` (may be null) what the alerts are scored against.
// InvalidArgument "<source>: no samples to judge (dropped: ...)" when no sample was accepted: an
// empty file, a header only, a selector that matches nothing, every sample dropped.
Result<DetectionReport> Detect(const DetectionOptions& options, telemetry::PointSource& source,
                               const telemetry::Normalizer& names,
                               const std::vector<FaultLabel>* labels);

}  // namespace vigil::detect
