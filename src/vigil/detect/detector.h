// The streaming detector: fed one point at a time, it names the machine of a job that diverges
// from its peers, stops reporting, or trips a fast-path rule (docs/detect.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/detect/peer.h"
#include "vigil/telemetry/frame.h"
#include "vigil/telemetry/series.h"

namespace vigil::detect {

struct DetectorOptions {
  double step = 1.0;      // seconds per frame
  double lateness = 2.0;  // how long a step waits for late points
  PeerOptions peer;
  // Evidence per machine and feature: S = max(0, S + min(|z|, cap) - allowance); an alert when
  // S > threshold. A persistent |z| >= cap is named in threshold / (cap - allowance) steps; a
  // spike shorter than that never is.
  double allowance = 4;
  double cap = 12;
  double threshold = 80;
  double missing_grace = 15;  // a machine or component silent this long while its peers report
  double gen_hold = 60;       // PCIe generation below its maximum this long (idle GPUs downclock)
  double cooldown = 1800;     // no second alert for a machine within this time
  std::vector<int> fatal_xids = {48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120, 140};
};

struct Evidence {
  std::string signal;
  std::string stat;  // mean, min or max over components; for rules, the component
  double value = 0;
  double peer_median = 0;
  double deviation = 0;  // robust z against the peers (rules: 0)
};

struct Alert {
  std::string machine;
  std::string kind;       // "rule", "divergence" or "missing"
  std::string rule;       // which rule or what went missing: "xid 79", "ecc_uncorrectable",
                          // "pcie_width", "pcie_gen", "link_down", "machine", "component"
  std::string component;  // gpu3, ib0; empty when machine-wide
  double onset = 0;       // estimated start of the fault
  double detected = 0;    // time of the data that raised the alert
  std::vector<Evidence> evidence;
};

Json AlertToJson(const Alert& alert);
// Reads what AlertToJson writes: "machine" and "kind" non-empty strings, "detected" a number;
// "onset" (default: detected), "rule", "component" and "evidence" optional. InvalidArgument
// "<where>: <field>: <problem>".
Result<Alert> AlertFromJson(const Json& json, std::string_view where);
// Reads alerts as `vigil detect --out` writes them (one JSON object per line; blank lines skipped)
// or as a JSON array of them. InvalidArgument "<source>:<line>: ..." for a bad line,
// "<source>: alert <n>: ..." for a bad element of an array, "<source>: no alert" for none.
Result<std::vector<Alert>> ParseAlerts(std::string_view text, std::string_view source);

class Detector {
 public:
  // `names` gives names and roles of the ids in the points, and must outlive the detector.
  Detector(const DetectorOptions& options, const telemetry::Normalizer& names);

  void Feed(const telemetry::Point& p);
  // Live use: time has reached `now` (steps that end before now - lateness close).
  void AdvanceTo(double now);
  // End of input: every open step is judged.
  void Flush();

  // Alerts raised since the last call, in the order they were raised.
  std::vector<Alert> TakeAlerts();

  int64_t frames() const { return frames_; }
  int64_t late_points() const { return builder_.late(); }

 private:
  struct RuleState {
    double xid = 0;
    double width = 0, width_max = 0, gen = 0, gen_max = 0;
    double gen_low_since = -1;
    double link_up = -1;
  };
  struct FeatureEvidence {
    float s = 0;  // the CUSUM
    float z = 0;  // the latest deviation, value and peer median
    float value = 0;
    float median = 0;
    double start = -1;  // when s last left zero
  };
  struct MachineState {
    double first_seen = -1;
    double last_seen = -1;
    double quiet_until = -1;  // cooldown after an alert
    bool missing_alerted = false;
  };

  void OnFrame(const telemetry::Frame& frame);
  void Rule(const telemetry::Point& p);
  void Raise(uint32_t machine, Alert alert);
  void Grow(uint32_t machine, uint32_t component);
  RuleState& RuleOf(uint32_t machine, uint32_t component);
  std::string NameOfMachine(uint32_t m) const { return names_.machines().Name(m); }

  DetectorOptions o_;
  const telemetry::Normalizer& names_;
  telemetry::FrameBuilder builder_;
  PeerScorer scorer_;
  std::vector<MachineState> machines_;
  std::vector<uint32_t> group_of_;
  // Per machine x component: rule state and when the component last reported.
  uint32_t components_ = 0;
  std::vector<RuleState> rules_;
  std::vector<double> component_seen_;
  // Per machine x feature: the evidence.
  uint32_t evidence_rows_ = 0, features_ = 0;
  std::vector<FeatureEvidence> evidence_;
  std::vector<uint32_t> triggered_;          // scratch of OnFrame
  std::vector<uint32_t> known_, reporting_;  // per group, scratch of OnFrame
  std::vector<Alert> alerts_;
  int64_t frames_ = 0;
};

}  // namespace vigil::detect
