#include "vigil/telemetry/frame.h"

#include <algorithm>
#include <cmath>

#include "vigil/core/bounds.h"
#include "vigil/core/matrix.h"

namespace vigil::telemetry {

FrameBuilder::FrameBuilder(double step, double lateness, Emit emit)
    : step_(step >= kMinFrameStep ? step : kMinFrameStep),  // NaN too
      lateness_steps_(
          static_cast<int64_t>(std::ceil(std::clamp(lateness, 0.0, kUnixTimeBounds.hi) / step_))),
      emit_(std::move(emit)) {}

void FrameBuilder::Grow(uint32_t machines, uint32_t signals) {
  machines = std::max(machines, machines_);
  signals = std::max(signals, signals_);
  if (machines == machines_ && signals == signals_) return;
  // Grow in jumps so that a stream of new machines costs amortised constant time.
  if (machines > machines_) machines = std::max(machines, machines_ + machines_ / 2);
  if (signals > signals_) signals = std::max(signals, signals_ + signals_ / 2);
  for (Frame& f : open_) {
    ResizeRowMajor(f.cells, f.machines, f.signals, machines, signals);
    f.machines = machines;
    f.signals = signals;
  }
  machines_ = machines;
  signals_ = signals;
}

void FrameBuilder::Open(int64_t index) {
  Frame f;
  if (!spare_.empty()) {
    f = std::move(spare_.back());
    spare_.pop_back();
  }
  f.time = static_cast<double>(index) * step_;
  f.machines = machines_;
  f.signals = signals_;
  f.cells.assign(static_cast<size_t>(machines_) * signals_, Cell{});
  open_.push_back(std::move(f));
}

void FrameBuilder::EmitOldest() {
  emit_(open_.front());
  spare_.push_back(std::move(open_.front()));
  open_.pop_front();
  ++first_index_;
}

void FrameBuilder::Add(const Point& p) {
  if (!kUnixTimeBounds.Contains(p.time)) {
    ++late_;
    return;
  }
  const auto index = static_cast<int64_t>(std::floor(p.time / step_));
  if (!started_) {
    started_ = true;
    first_index_ = index;
  }
  if (index < first_index_) {
    ++late_;
    return;
  }
  if (p.machine >= machines_ || p.signal >= signals_) Grow(p.machine + 1, p.signal + 1);
  // A jump far ahead (a gap in the data) emits what is open and starts again there.
  if (index - first_index_ > static_cast<int64_t>(open_.size()) + lateness_steps_ + 1) {
    while (!open_.empty()) EmitOldest();
    first_index_ = index;
  }
  while (first_index_ + static_cast<int64_t>(open_.size()) <= index) {
    Open(first_index_ + static_cast<int64_t>(open_.size()));
  }
  while (index - first_index_ > lateness_steps_) EmitOldest();
  Frame& f = open_[static_cast<size_t>(index - first_index_)];
  Cell& c = f.cells[static_cast<size_t>(p.machine) * f.signals + p.signal];
  if (c.count == 0) {
    c.min = c.max = p.value;
  } else {
    c.min = std::min(c.min, p.value);
    c.max = std::max(c.max, p.value);
  }
  c.sum += p.value;
  ++c.count;
  if (!p.held) ++c.fresh;
}

void FrameBuilder::AdvanceTo(double time) {
  if (!started_ || std::isnan(time)) return;
  time = std::min(time, kUnixTimeBounds.hi + 2 * step_);  // the index stays representable
  const auto index = static_cast<int64_t>(std::floor(time / step_));
  while (!open_.empty() && index - first_index_ > lateness_steps_) EmitOldest();
  if (open_.empty()) first_index_ = std::max(first_index_, index - lateness_steps_);
}

void FrameBuilder::Flush() {
  while (!open_.empty()) EmitOldest();
}

}  // namespace vigil::telemetry
