// Samples as the readers see them (names and labels) and as the detector sees them (small integer
// ids, counters turned into rates), and the Normalizer between the two.
//
// What happens to awkward samples (docs/detect.md, "Telemetry"):
// - a NaN or infinite value is dropped and counted as missing;
// - a sample at or before the last accepted time of its series is dropped (a duplicate when the
//   time is equal, out of order when earlier): each series only moves forward;
// - a counter's first sample only sets its base; later ones give (increase / seconds); a counter
//   that goes down was reset, and its increase is its new value (as Prometheus' rate() does);
// - a metric the signal map does not know becomes a gauge signal of the same name when
//   `passthrough` is on (files of a job's own signals), and is dropped and counted when off.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vigil/core/text.h"
#include "vigil/telemetry/signals.h"

namespace vigil::telemetry {

// Names to dense ids 0, 1, 2, ... in order of first sight.
class Dictionary {
 public:
  // Consecutive lookups of one name (a reader's samples of one machine) skip the hash.
  uint32_t Intern(std::string_view name);
  std::optional<uint32_t> Find(std::string_view name) const;
  const std::string& Name(uint32_t id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> ids_;
  uint32_t last_ = UINT32_MAX;
};

// One sample as read: the reader has already chosen machine, component and group from the labels.
struct RawSample {
  double time = 0;             // Unix seconds
  std::string_view machine;    // the host
  std::string_view metric;     // the exporter's name
  std::string_view component;  // "gpu3", "ib0", "cpu7"; empty for a machine-wide metric
  std::string_view group;      // machines compared with each other; empty: the whole job
  double value = 0;
  const Labels* labels = nullptr;  // for label conditions of the signal map; may be null
};

// One normalised sample.
struct Point {
  double time = 0;
  uint32_t machine = 0;
  uint32_t signal = 0;
  uint32_t component = 0;
  uint32_t group = 0;
  double value = 0;
  // The series' previous value again, sooner than the series' own interval: a grid repeating a
  // scrape (a query_range answer at a step finer than the scrape interval). It shows that the
  // series still reports, and is no new evidence.
  bool held = false;
  // Held, but a new scrape of the series: its exporter repeats a value it holds (a continuous
  // gauge's frozen value), or a counter's stepped back by a little (no rate). It counts for the
  // series' cadence, not as evidence.
  bool rescraped = false;
  // The seconds since the series' previous fresh sample: what a counter's rate is the increase
  // over (value x span is the increase itself), and what a gauge that carries a rate already
  // (a file of normalised signals) covers. 0 at a series' first sample and for a held copy.
  float span = 0;
};
static_assert(sizeof(Point) == 40, "a Point stays 40 bytes: spill files and buffers hold millions");

struct SignalInfo {
  std::string name;
  SignalRole role = SignalRole::kPeer;
  Worse worse = Worse::kEither;
  double threshold = 0;            // SignalMapping::threshold
  double persistence = 0;          // SignalMapping::persistence
  bool level_by_position = false;  // SignalMapping::level_by_position
  bool duration = false;           // SignalMapping::duration
};

struct NormalizerCounts {
  int64_t accepted = 0;
  int64_t unmapped = 0;       // metric unknown to the map, passthrough off
  int64_t not_finite = 0;     // NaN or infinite value
  int64_t duplicate = 0;      // same time as the series' last sample
  int64_t out_of_order = 0;   // earlier than the series' last sample
  int64_t counter_bases = 0;  // first sample of a counter (no rate yet)
  int64_t counter_resets = 0;
  int64_t counter_steps_back = 0;  // a counter back by a little: no reset (held, no new sample)
  int64_t held = 0;  // repeats of a value within the series' interval (yielded, marked held)
};

class Normalizer {
 public:
  // A counter that goes back by less than this fraction's inverse of its count did not reset.
  static constexpr double kStepBack = 8;
  // A repeated value is held (no new sample) while younger than the shortest of the series'
  // last four gaps between changes of value, and at most this many seconds: a series that does
  // not change gives a new sample this often. A gauge whose fresh samples (at least
  // kContinuousAfter; one rest's repeats counted once, a long one's not at all) almost all
  // differ, and are not all whole numbers, measures a continuous quantity, which never repeats to
  // the last bit except at a fraction's bounds (an idle GPU's 0, a saturated engine's 1): an exact
  // repeat of another value is its exporter holding the last one (a trainer's step time through a
  // checkpoint), held however long.
  static constexpr float kMaxHold = 60;
  static constexpr uint16_t kContinuousAfter = 8;
  // A rest (one value repeated over fresh samples) that stood this many holds or more is the job's
  // pause, not the gauge's: it counts for nothing in that share.
  static constexpr float kLongRest = 3;

  Normalizer(SignalMap map, bool passthrough);

  // Fills *out and returns true when the sample yields a point.
  bool Normalize(const RawSample& sample, Point* out);

  const Dictionary& machines() const { return machines_; }
  const Dictionary& components() const { return components_; }
  const Dictionary& groups() const { return groups_; }
  const std::vector<SignalInfo>& signals() const { return signals_; }
  const NormalizerCounts& counts() const { return counts_; }

  // The id of the signal called `name`, interning it (as a peer signal) when new. For callers
  // that feed points without a reader (the simulator, benchmarks).
  uint32_t SignalId(std::string_view name, SignalRole role = SignalRole::kPeer);
  // The id of a mapping's signal, interning it with the mapping's role, direction, threshold
  // and persistence when new.
  uint32_t SignalId(const SignalMapping& mapping);

 private:
  struct SeriesState {
    double last_time = 0;
    double last_raw = 0;
    double fresh_time = 0;    // of the last sample not held
    double scrape_time = 0;   // of the last sample not held or rescraped
    double fresh_raw = 0;     // its raw value
    double last_value = 0;    // the last point's value (a counter's rate)
    double change_time = -1;  // when the raw value last changed
    float change_gaps[4] = {kMaxHold, kMaxHold, kMaxHold, kMaxHold};  // between changes
    // Samples not held (one rest's repeats counted once), halved with `changed` when they grow
    // large; `changed`: of which differed from the sample before.
    uint16_t fresh_samples = 0;
    uint16_t changed = 0;
    bool fractional = false;  // a fresh value was not a whole number
    bool resting = false;     // the last fresh sample repeated the one before
    uint8_t next_gap = 0;
    bool seen = false;
  };
  // Per machine, the states of its series by signal and component (dense: ids are small).
  struct MachineSeries {
    uint32_t signals = 0, components = 0;
    std::vector<SeriesState> states;
  };
  SeriesState& StateOf(uint32_t machine, uint32_t signal, uint32_t component);

  SignalMap map_;
  bool passthrough_;
  Dictionary machines_, components_, groups_, signal_names_;
  std::vector<SignalInfo> signals_;
  std::vector<MachineSeries> series_;
  NormalizerCounts counts_;
};

}  // namespace vigil::telemetry
