// Where a detector's points come from: files read to their end (file_source.h), or a Prometheus
// server polled as data arrives (prometheus_source.h). Either hands normalised points over in
// time order, in batches.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "vigil/core/status.h"
#include "vigil/telemetry/series.h"

namespace vigil::telemetry {

// Takes one batch of points, in time order (equal times in the order read), none earlier than
// the batches before. `until`: a live source's data is complete before this time (steps that end
// before it may close); NaN for a source read to its end. An error stops the source.
using BatchSink = std::function<Status(std::span<const Point> points, double until)>;

class PointSource {
 public:
  virtual ~PointSource() = default;

  // Reads until the source ends (files), or until it stops or is interrupted (a live source),
  // handing each batch to `sink`. Stops at the first error, its own or the sink's.
  virtual Status Run(const BatchSink& sink) = 0;

  // The source in messages: the files, or the server's URL.
  virtual std::string name() const = 0;

  // Malformed lines skipped (lenient files), or series without a machine (Prometheus), so far.
  virtual int64_t skipped() const = 0;
};

}  // namespace vigil::telemetry
