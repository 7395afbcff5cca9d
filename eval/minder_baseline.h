// A Minder-style detector (Deng et al., NSDI'25), for the scenario suite's comparison only: every
// `period` it looks back over `window` of per-second peer deviations and names a machine that
// was the most deviant one, continuously, for at least `continuity`. It shares Vigil's peer
// model (robust z per feature), so the comparison isolates the decision procedure: batch
// windows with a continuity test against Vigil's streaming evidence.
#pragma once

#include <deque>
#include <vector>

#include "vigil/detect/detector.h"
#include "vigil/detect/peer.h"
#include "vigil/telemetry/frame.h"

namespace vigil::bench {

struct MinderOptions {
  double window = 900;      // 15 minutes
  double period = 480;      // every 8 minutes
  double continuity = 240;  // the same machine for 4 minutes
  double threshold = 4;     // |z| that makes a machine a candidate
};

class MinderBaseline {
 public:
  MinderBaseline(const MinderOptions& options, const telemetry::Normalizer& names);
  void Feed(const telemetry::Point& p);
  void Flush();
  std::vector<detect::Alert> TakeAlerts() { return std::exchange(alerts_, {}); }

 private:
  void OnFrame(const telemetry::Frame& frame);
  void Evaluate(double now);

  MinderOptions o_;
  const telemetry::Normalizer& names_;
  telemetry::FrameBuilder builder_;
  detect::PeerModel scorer_;
  std::vector<uint32_t> group_of_;
  struct Second {
    double time;
    int64_t top;  // the most deviant machine above the threshold, or -1
  };
  std::deque<Second> history_;
  double next_eval_ = -1;
  std::vector<double> alerted_until_;
  std::vector<double> deviation_;  // per machine, scratch
  std::vector<detect::Alert> alerts_;
};

}  // namespace vigil::bench
