#include "vigil/detect/pipeline.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <utility>

#include "vigil/core/file.h"
#include "vigil/detect/options.h"
#include "vigil/telemetry/signals.h"

namespace vigil::detect {
namespace {

// The poll options of a run: their step is the detector's.
telemetry::PollOptions PollOf(const DetectionOptions& o) {
  telemetry::PollOptions poll = o.poll;
  poll.step = o.detector.step;
  return poll;
}

// Where the alerts go as they are raised: the caller, the --out file of a follow, the fleet
// service; and the list of them all.
class AlertOutput {
 public:
  AlertOutput(const DetectionOptions& o, const Clock& clock) : o_(o) {
    if (o.post) delivery_.emplace(o.post, o.post_to, clock);
  }

  // `last`: the run's final alerts, posted even while a failed post says to wait.
  Status Add(std::vector<Alert> alerts, bool last) {
    for (const Alert& a : alerts) {
      if (o_.on_alert) o_.on_alert(a);
      if (o_.poll.follow && !o_.out.empty()) {
        std::string line;
        AppendAlertJsonl(a, &line);
        VIGIL_RETURN_IF_ERROR(AppendToFile(o_.out, line));
      }
    }
    if (delivery_) VIGIL_RETURN_IF_ERROR(delivery_->Add(alerts, last));
    for (Alert& a : alerts) all_.push_back(std::move(a));
    return Status::Ok();
  }

  std::vector<Alert>& all() { return all_; }
  Status Delivered() const { return delivery_ ? delivery_->Delivered(o_.out) : Status::Ok(); }

 private:
  const DetectionOptions& o_;
  std::optional<AlertDelivery> delivery_;
  std::vector<Alert> all_;
};

}  // namespace

Result<DetectionReport> Detect(const DetectionOptions& o, telemetry::PointSource& source,
                               const telemetry::Normalizer& names,
                               const std::vector<FaultLabel>* labels) {
  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<Detector> detector,
                         Detector::Create(o.detector, names));
  AlertOutput output(o, o.clock != nullptr ? *o.clock : SystemClock());
  VIGIL_RETURN_IF_ERROR(
      source.Run([&](std::span<const telemetry::Point> points, double until) -> Status {
        for (const telemetry::Point& p : points) detector->Feed(p);
        if (std::isnan(until)) return Status::Ok();  // read to its end: judged at the end
        detector->AdvanceTo(until);
        return output.Add(detector->TakeAlerts(), /*last=*/false);
      }));
  detector->Flush();
  VIGIL_RETURN_IF_ERROR(output.Add(detector->TakeAlerts(), /*last=*/true));
  const telemetry::NormalizerCounts& n = names.counts();
  if (n.accepted == 0) {
    return Status::InvalidArgument(fmt::format(
        "{}: no samples to judge (dropped: {} unmapped, {} missing values, {} duplicates, {} out "
        "of order, {} counter bases; {} malformed lines skipped)",
        source.name(), n.unmapped, n.not_finite, n.duplicate, n.out_of_order, n.counter_bases,
        source.skipped()));
  }
  DetectionReport report;
  report.alerts = std::move(output.all());
  if (!o.out.empty() && !o.poll.follow) {
    std::string jsonl;
    for (const Alert& a : report.alerts) AppendAlertJsonl(a, &jsonl);
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(o.out, jsonl));
  }
  report.counts = n;
  report.machines = names.machines().size();
  report.late_points = detector->late_points();
  report.skipped = source.skipped();
  if (labels != nullptr) report.score = ScoreAlerts(report.alerts, *labels);
  report.delivery = output.Delivered();
  return report;
}

Status ValidateDetectionOptions(const DetectionOptions& o) {
  if (o.files.paths.empty() == o.prometheus.empty()) {
    return Status::InvalidArgument("give either --input FILE... or --prometheus URL");
  }
  if (!o.prometheus.empty() && o.poll.selector.empty()) {
    return Status::InvalidArgument("--prometheus needs --selector, e.g. '{job=\"train\"}'");
  }
  if (o.poll.follow && o.prometheus.empty()) {
    return Status::InvalidArgument("--follow needs --prometheus");
  }
  VIGIL_RETURN_IF_ERROR(ValidateDetectorOptions(o.detector));
  if (!o.prometheus.empty()) VIGIL_RETURN_IF_ERROR(telemetry::ValidatePollOptions(PollOf(o)));
  return Status::Ok();
}

Result<DetectionReport> RunDetection(const DetectionOptions& o) {
  VIGIL_RETURN_IF_ERROR(ValidateDetectionOptions(o));
  if (!o.out.empty()) VIGIL_RETURN_IF_ERROR(CheckWritable(o.out));
  std::optional<std::vector<FaultLabel>> labels;
  if (!o.labels.empty()) {
    VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(o.labels));
    VIGIL_ASSIGN_OR_RETURN(labels, ParseLabels(text, o.labels));
  }
  telemetry::SignalMap map = telemetry::SignalMap::Default();
  if (!o.signals.empty()) VIGIL_RETURN_IF_ERROR(map.AddYamlFile(o.signals));
  telemetry::Normalizer names(std::move(map), o.passthrough.value_or(o.prometheus.empty()));
  std::unique_ptr<telemetry::PointSource> source;
  if (o.prometheus.empty()) {
    source = std::make_unique<telemetry::FileSource>(o.files, names);
  } else {
    VIGIL_ASSIGN_OR_RETURN(
        source, telemetry::PrometheusSource::Connect(o.prometheus, o.tls, PollOf(o), names,
                                                     o.clock != nullptr ? *o.clock : SystemClock(),
                                                     o.interrupted));
  }
  return Detect(o, *source, names, labels ? &*labels : nullptr);
}

}  // namespace vigil::detect
