#include "vigil/detect/peer.h"

#include <algorithm>
#include <cmath>

#include "vigil/core/matrix.h"
#include "vigil/core/stats.h"

namespace vigil::detect {

std::string_view StatName(Stat stat) {
  switch (stat) {
    case Stat::kMean:
      return "mean";
    case Stat::kMin:
      return "min";
    case Stat::kMax:
      return "max";
  }
  return "mean";
}

float PeerScorer::Denoise(History& h, float value) const {
  const int n = std::clamp(o_.denoise, 1, 5);
  h.last[h.next] = value;
  h.next = static_cast<uint8_t>((h.next + 1) % n);
  if (h.filled < n) ++h.filled;
  float w[5];
  std::copy_n(h.last, h.filled, w);
  std::nth_element(w, w + h.filled / 2, w + h.filled);
  return w[h.filled / 2];
}

std::span<const PeerScore> PeerScorer::Score(const telemetry::Frame& frame,
                                             std::span<const uint32_t> group_of,
                                             std::span<const telemetry::SignalInfo> signals) {
  scores_.clear();
  const uint32_t features = static_cast<uint32_t>(signals.size()) * kStats;
  if (frame.machines > machines_ || features > features_) {
    const uint32_t m = std::max(frame.machines, machines_);
    const uint32_t f = std::max(features, features_);
    ResizeRowMajor(history_, machines_, features_, m, f);
    machines_ = m;
    features_ = f;
    level_.resize(f, 0.0);
  }
  const double decay =
      last_time_ == 0 ? 1.0
                      : std::exp2(-std::max(0.0, frame.time - last_time_) / o_.level_half_life_s);
  last_time_ = frame.time;

  for (auto& m : members_) m.clear();
  for (uint32_t m = 0; m < frame.machines; ++m) {
    const uint32_t g = m < group_of.size() ? group_of[m] : 0;
    if (g >= members_.size()) members_.resize(g + 1);
    members_[g].push_back(m);
  }
  const uint32_t nsignals =
      std::min<uint32_t>(frame.signals, static_cast<uint32_t>(signals.size()));
  for (const auto& members : members_) {
    if (members.size() < static_cast<size_t>(o_.min_peers)) continue;
    for (uint32_t s = 0; s < nsignals; ++s) {
      if (signals[s].role != telemetry::SignalRole::kPeer) continue;
      for (uint32_t st = 0; st < kStats; ++st) {
        const uint32_t f = s * kStats + st;
        values_.clear();
        who_.clear();
        for (uint32_t m : members) {
          const telemetry::Cell& c = frame.at(m, s);
          if (c.count == 0) continue;
          const double raw = st == 0 ? c.mean() : st == 1 ? c.min : c.max;
          History& h = history_[static_cast<size_t>(m) * features_ + f];
          values_.push_back(Denoise(h, static_cast<float>(raw)));
          who_.push_back(m);
        }
        if (values_.size() < static_cast<size_t>(o_.min_peers)) continue;
        scratch_.assign(values_.begin(), values_.end());
        const size_t mid = scratch_.size() / 2;
        std::nth_element(scratch_.begin(), scratch_.begin() + static_cast<ptrdiff_t>(mid),
                         scratch_.end());
        const double median = scratch_[mid];
        for (size_t i = 0; i < values_.size(); ++i) scratch_[i] = std::fabs(values_[i] - median);
        std::nth_element(scratch_.begin(), scratch_.begin() + static_cast<ptrdiff_t>(mid),
                         scratch_.end());
        const double mad = scratch_[mid];
        level_[f] = std::max(std::fabs(median), level_[f] * decay);
        const double spread =
            std::max({stats::kMadToSigma * mad, o_.relative_floor * std::fabs(median),
                      o_.level_floor * level_[f], 1e-9});
        for (size_t i = 0; i < values_.size(); ++i) {
          scores_.push_back({who_[i], f, static_cast<float>(values_[i]), static_cast<float>(median),
                             static_cast<float>((values_[i] - median) / spread)});
        }
      }
    }
  }
  return scores_;
}

}  // namespace vigil::detect
