#include "minder_baseline.h"

#include <algorithm>
#include <cmath>

namespace vigil::bench {

MinderBaseline::MinderBaseline(const MinderOptions& options, const telemetry::Normalizer& names)
    : o_(options),
      names_(names),
      builder_(1.0, 2.0, [this](const telemetry::Frame& f) { OnFrame(f); }),
      scorer_(detect::PeerOptions{}) {}

void MinderBaseline::Feed(const telemetry::Point& p) {
  if (p.machine >= group_of_.size()) group_of_.resize(p.machine + 1, 0);
  group_of_[p.machine] = p.group;
  builder_.Add(p);
}

void MinderBaseline::Flush() { builder_.Flush(); }

void MinderBaseline::OnFrame(const telemetry::Frame& frame) {
  if (next_eval_ < 0) next_eval_ = frame.time + o_.period;
  deviation_.assign(frame.machines, 0.0);
  scorer_.Update(frame, group_of_, names_.signals());
  for (const detect::PeerModel::Scored& s : scorer_.scored()) {
    deviation_[s.machine] = std::max<double>(deviation_[s.machine], std::fabs(s.z));
  }
  int64_t top = -1;
  double best = o_.threshold;
  for (size_t m = 0; m < deviation_.size(); ++m) {
    if (deviation_[m] > best) {
      best = deviation_[m];
      top = static_cast<int64_t>(m);
    }
  }
  history_.push_back({frame.time, top});
  while (!history_.empty() && history_.front().time < frame.time - o_.window) history_.pop_front();
  if (frame.time + 1 >= next_eval_) {
    Evaluate(frame.time + 1);
    next_eval_ += o_.period;
  }
}

void MinderBaseline::Evaluate(double now) {
  if (alerted_until_.size() < names_.machines().size()) {
    alerted_until_.resize(names_.machines().size(), -1);
  }
  size_t i = 0;
  while (i < history_.size()) {
    size_t j = i;
    while (j + 1 < history_.size() && history_[j + 1].top == history_[i].top &&
           history_[j + 1].time - history_[j].time <= 1.5) {
      ++j;
    }
    const int64_t m = history_[i].top;
    const double length = history_[j].time + 1 - history_[i].time;
    if (m >= 0 && length >= o_.continuity && now >= alerted_until_[static_cast<size_t>(m)]) {
      alerted_until_[static_cast<size_t>(m)] = now + 1800;
      detect::Alert a;
      a.machine = names_.machines().Name(static_cast<uint32_t>(m));
      a.kind = detect::AlertKind::kDivergence;
      a.rule = "minder";
      a.onset = history_[i].time;
      a.detected = now;
      alerts_.push_back(std::move(a));
    }
    i = j + 1;
  }
}

}  // namespace vigil::bench
