// The streaming detector: fed one point at a time, it names the machine of a job that diverges
// from its peers, stops reporting, or trips a fast-path rule (docs/detect.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
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
  // A machine or component silent this long, and three of its own intervals between samples,
  // while its peers report.
  double missing_grace = 15;
  double gen_hold = 60;  // PCIe generation below its maximum this long (idle GPUs downclock)
  // De-duplication per cause (machine, kind, rule, component): a cause alerts again only once
  // it has been clear for this long. Causes never hide one another.
  double rearm = 600;
  std::vector<int> fatal_xids = {48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120, 140};
};

struct Evidence {
  std::string signal;  // a shared deviation's: "<signal> <stat>"
  std::string stat;    // mean, min or max over components; for rules, the component; for a
                       // shared deviation, the machine
  double value = 0;
  double peer_median = 0;  // the value its peers make expected (rules: 0)
  double deviation = 0;    // robust z against the peers (rules: 0)
  double effect = 0;       // relative effect: (value - expected) / expected (rules: 0)
  // A divergence's: what the expected value is, kPeersReference (what its peers make expected)
  // or kOwnPastReference (its own recent level against the peers' centre); empty for others.
  std::string reference = {};
};
inline constexpr std::string_view kPeersReference = "peers";
inline constexpr std::string_view kOwnPastReference = "own_past";

// What raised an alert.
enum class AlertKind {
  kRule,        // a fast-path rule on one point (an XID, an uncorrectable ECC error, a link down)
  kDivergence,  // a machine diverging from its peers
  kMissing,     // a machine or component silent while its peers report
  kJob,         // the whole job: a stall, or a deviation its machines share
};
// "rule", "divergence", "missing" or "job": the text of alerts JSON and the CLI's lines.
std::string_view AlertKindName(AlertKind kind);
// The inverse of AlertKindName; InvalidArgument naming the text for anything else.
Result<AlertKind> ParseAlertKind(std::string_view text);

struct Alert {
  std::string machine;  // "*" for a job-wide stall or a shared deviation
  AlertKind kind = AlertKind::kRule;
  std::string rule;       // which rule or what went missing: "xid 79", "ecc_uncorrectable",
                          // "pcie_width", "pcie_gen", "link_down", "machine", "component";
                          // a job alert's "stall" or "shared"
  std::string component;  // gpu3, ib0; empty when machine-wide; a job alert's group
  double onset = 0;       // estimated start of the fault
  double detected = 0;    // time of the data that raised the alert
  std::vector<Evidence> evidence;
};

Json AlertToJson(const Alert& alert);
// One line of alerts JSONL (`vigil detect --out`, what ParseAlerts reads): AlertToJson and '\n',
// appended to `out`.
void AppendAlertJsonl(const Alert& alert, std::string* out);
// Reads what AlertToJson writes: "machine" a non-empty string, "kind" an AlertKindName,
// "detected" a number;
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
  // REQUIRES: ValidateDetectorOptions(options).ok() (options.h), which Create checks.
  Detector(const DetectorOptions& options, const telemetry::Normalizer& names);
  // A detector of options within their ranges; ValidateDetectorOptions' error if not (options.cc).
  static Result<std::unique_ptr<Detector>> Create(const DetectorOptions& options,
                                                  const telemetry::Normalizer& names);

  // A point whose value or time is not finite is dropped (the Normalizer drops them before).
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
    // Each error counter of the component's own (ECC, NVLink CRC, ...): its errors beyond its
    // threshold rate, a bucket that drains at `threshold` a second (docs/detect.md, "Fast-path
    // rules"), and its last increase that alerted or kept an alert on.
    struct ErrorBucket {
      uint32_t signal = 0;
      double excess = 0;
      double last_error = -1;
    };
    std::vector<ErrorBucket> errors;
    // Each fault of the component's own as one episode: when it was last named (FollowOwnFaults)
    // and, for Explains, first named and ended; a fault named again within the re-arm time of its
    // end (a NIC that flaps) continues it.
    struct Episode {
      double first = -1;  // named first
      double last = -1;   // named last
      double ended = -1;  // ended after that; -1 while under way
      void Named(double time, double rearm);
    };
    Episode xid_episode, width_episode, link_episode;
    // When a fault that ends the GPU's work (WorkStopped) was last named, and when the GPU
    // reported again after it (a silence's end; -1: not since).
    double stopped = -1, stopped_ended = -1;
    bool xid_fatal = false;  // the XID shown now is fatal
    bool width_alerted = false, gen_alerted = false, link_alerted = false;
  };
  // How often a series or a component is scraped (a grid's copies are not the source's cadence):
  // its interval rises at once with a longer gap and falls slowly (a missed scrape is no new
  // cadence, a slower exporter is). A long gap (more than Presence::kSilentIntervals of the
  // interval) of one that kept its cadence for kSteadyGaps gaps is silence (a restart, the machine
  // down and back): the next gap of the old cadence restores it (Follow).
  struct Cadence {
    float interval = 0;
    float before = 0;  // the interval before the last gap
    // The interval before the last gap, where that was a steady cadence's long gap, else 0; gaps
    // since its last long gap (up to kSteadyGaps).
    float before_long_gap = 0;
    uint8_t steady_gaps = 0;
    void Follow(double gap);
  };
  struct Presence {  // of a machine or of one of its components
    // Silent for this many of its own intervals (and the grace): named.
    static constexpr double kSilentIntervals = 3;
    double first = -1;
    double last = -1;        // its latest sample, held or not
    double last_fresh = -1;  // its latest scrape (a sample not held, or rescraped)
    // Its first sample after its latest pause longer than points are fed ahead of the frames
    // judged (Saw's `fed_ahead`): it has reported without a longer pause from then to `last`.
    double resumed = -1;
    Cadence cadence;  // of its scrapes
    bool alerted = false;
    // A silence as one episode with those it came back from less than `rearm` before (an
    // exporter that crash-loops; AlertSilentComponents): when it came back from the last silence
    // it was named for or that continued such an episode (`flapping`: the current one does), and
    // the longest silence it came back from in the episode.
    double back = -1;
    double back_from = -1;  // its last sample before it came back, at `back`
    float longest_silence = 0;
    bool flapping = false;
    bool named_alone = false;  // (a component) last named while a sibling reported
    // A component's first signal: components reporting the same one (a machine's GPUs, its
    // NICs) come from one exporter.
    uint32_t signal = 0;
    // The signals it reports, by signal id (those beyond 63 are not kept: none is explained).
    uint64_t reports = 0;
    void Reported(uint32_t s) {
      if (s < 64) reports |= uint64_t{1} << s;
    }
    bool Reports(uint32_t s) const { return s < 64 && ((reports >> s) & 1) != 0; }
    // Silent since when it is named: grace, or three of its own intervals (`own`, where given).
    double SilentAfter(double grace) const { return SilentAfter(grace, cadence.interval); }
    double SilentAfter(double grace, float own) const {
      // Its own interval once it has reported for the longest interval a series may have (its
      // slowest exporter seen at least once), before that the longest.
      constexpr double kLongest = telemetry::Normalizer::kMaxHold;
      return std::max(
          grace, kSilentIntervals * (own > 0 && last_fresh - first >= kLongest ? own : kLongest));
    }
    void Saw(double time, bool copy, double fed_ahead, double rearm);
  };
  // One series of a machine (a signal, over its components): its latest scrape and the cadence
  // of its scrapes, as a Presence's.
  struct Series {
    double last_fresh = -1;
    Cadence cadence;
    float value = 0;      // its latest fresh value
    bool varies = false;  // a fresh value has differed from the one before it
  };
  struct MachineState {
    Presence presence;
    // Its series by signal id, and the median of their intervals (the lower of two middle ones):
    // the machine's own interval. Exporters scraped at different moments interleave, and its
    // samples come more often than any one series' (two at 15 s, half a scrape apart: one every
    // 7.5 s); a series of a cadence of its own (a trainer's step time at each iteration, which
    // stops while the job waits) is one of many. Only series whose values vary count, where any
    // does: a value that never changes (an XID of 0, a link's width) is a fresh sample only every
    // Normalizer::kMaxHold, whatever its exporter's cadence. Nor does a series gone: the machine
    // has reported since it was Presence::kSilentIntervals of its own intervals overdue (an
    // exporter dead for good says nothing of how often the others report).
    std::vector<Series> series;
    void SawSeries(uint32_t signal, double time, double value);
    // The median, worked out again where a series' interval has changed, or the machine has
    // reported, since.
    float Interval(std::vector<float>& scratch);
    bool divergent = false;   // a divergence alert was raised and has not cleared
    double quiet_since = -1;  // no deviation under way since
    float interval = 0;       // the median of its series' intervals, as last worked out
    bool interval_stale = false;
  };

  // A closed step of every machine: the peer model scores it, then each rule that judges frames
  // raises its alerts (for the step that ends at `end`).
  void OnFrame(const telemetry::Frame& frame);
  void AlertDivergence(double end);
  void AlertShared(double end);
  void AlertStalls(double end);
  void AlertSilence(double end);
  void AlertSilentComponents(uint32_t m, double end);
  // When machine m came back from its last reboot (named missing, then back after a silence of
  // every exporter), or -1.
  double AfterReboot(uint32_t m) const;
  void Rule(const telemetry::Point& p);
  void Raise(Alert alert);
  // own_fault_since_[m]: since when machine m has a fault of its own under way, or -1
  // (PeerModel::Update).
  void FollowOwnFaults();
  // Whether a fault of one of machine m's components that a rule named (a fatal XID, a link
  // down, a PCIe link narrowed) explains deviation d: of a signal that component reports, in a run
  // that began within a persistence of the fault's episode being named (before its first naming,
  // after its last) and before it ended; or, where the fault ended the GPU's work (WorkStopped),
  // of any signal of the machine, in a run that began within a persistence of its latest naming
  // and before the GPU reported again. One cause, one alert: a NIC's traffic while its link is
  // down, a GPU's activity after it fell off the bus, the host's CPU that its dead rank left idle.
  bool Explains(uint32_t m, const Deviation& d) const;
  // Machine m's GPU (component) c's work has just ended: an XID after which the application on it
  // is terminated, or the GPU gone from its exporter's scrapes while a sibling GPU reports.
  void WorkStopped(uint32_t m, uint32_t c, double time);
  // Whether a component reports an XID series: a GPU of a DCGM exporter.
  bool ReportsXid(const Presence& p) const;
  void Grow(uint32_t machine, uint32_t component);
  RuleState& RuleOf(uint32_t machine, uint32_t component);
  std::string NameOfMachine(uint32_t m) const { return names_.machines().Name(m); }
  // One machine's deviation as an alert's evidence: its signal, its stat, and the rest.
  Evidence EvidenceOf(const Deviation& d) const;

  DetectorOptions o_;
  const telemetry::Normalizer& names_;
  telemetry::FrameBuilder builder_;
  PeerModel model_;
  std::vector<MachineState> machines_;
  std::vector<uint32_t> group_of_;
  std::vector<double> shared_alerted_;  // per group: when a shared deviation was last reported
  // Per machine x component: rule state and when the component reported.
  uint32_t components_ = 0;
  std::vector<RuleState> rules_;
  std::vector<Presence> component_seen_;
  std::vector<uint32_t> known_, reporting_;  // per group, scratch of OnFrame
  std::vector<float> intervals_;             // scratch of MachineState::Interval
  std::vector<Alert> alerts_;
  std::vector<double> own_fault_since_;
  int64_t frames_ = 0;
};

}  // namespace vigil::detect
