// Peer comparison: how far each machine's value of each feature sits from the robust centre of
// its group, in robust spreads, one frame at a time (docs/detect.md, "Peer comparison").
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "vigil/telemetry/frame.h"
#include "vigil/telemetry/series.h"

namespace vigil::detect {

// A feature is one statistic of one signal over the machine's components.
enum class Stat : uint32_t { kMean = 0, kMin = 1, kMax = 2 };
inline constexpr uint32_t kStats = 3;
inline uint32_t FeatureOf(uint32_t signal, Stat stat) {
  return signal * kStats + static_cast<uint32_t>(stat);
}
inline uint32_t SignalOfFeature(uint32_t feature) { return feature / kStats; }
inline Stat StatOfFeature(uint32_t feature) { return static_cast<Stat>(feature % kStats); }
std::string_view StatName(Stat stat);

struct PeerOptions {
  int denoise = 3;               // median of the machine's last `denoise` values (1, 3 or 5)
  double relative_floor = 0.05;  // the spread is at least this share of |median| ...
  double level_floor = 0.05;     // ... and of the feature's typical level (|median| decayed)
  double level_half_life_s = 3600;
  int min_peers = 4;  // groups with fewer reporting machines are not judged
};

struct PeerScore {
  uint32_t machine;
  uint32_t feature;
  float value;   // denoised
  float median;  // of the group
  float z;       // (value - median) / spread
};

class PeerScorer {
 public:
  explicit PeerScorer(const PeerOptions& options) : o_(options) {}

  // Scores every machine and feature with data in `frame`, within groups (group_of[machine];
  // machines beyond its end are in group 0), for the signals whose role is kPeer. The span is
  // valid until the next call.
  std::span<const PeerScore> Score(const telemetry::Frame& frame,
                                   std::span<const uint32_t> group_of,
                                   std::span<const telemetry::SignalInfo> signals);

 private:
  struct History {
    float last[5];
    uint8_t filled = 0;
    uint8_t next = 0;
  };
  float Denoise(History& h, float value) const;

  PeerOptions o_;
  uint32_t machines_ = 0, features_ = 0;  // dimensions of history_
  std::vector<History> history_;
  std::vector<double> level_;  // per feature
  double last_time_ = 0;
  std::vector<PeerScore> scores_;
  std::vector<std::vector<uint32_t>> members_;  // per group, scratch
  std::vector<double> values_, scratch_;
  std::vector<uint32_t> who_;
};

}  // namespace vigil::detect
