// A time-aligned frame: for one step of time, each machine's value of each signal, aggregated
// over the machine's components (mean, lowest and highest component). FrameBuilder turns a
// stream of points into frames as the steps close.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "vigil/core/bounds.h"
#include "vigil/telemetry/series.h"

namespace vigil::telemetry {

struct Cell {
  double sum = 0;
  double min = 0;
  double max = 0;
  uint32_t count = 0;  // samples in the step; 0: the machine did not report the signal
  uint32_t fresh = 0;  // of which not held (Point::held): new evidence

  double mean() const { return sum / count; }
};

struct Frame {
  double time = 0;  // start of the step; it covers [time, time + step)
  uint32_t machines = 0;
  uint32_t signals = 0;
  std::vector<Cell> cells;  // machines x signals, by machine

  const Cell& at(uint32_t machine, uint32_t signal) const {
    return cells[static_cast<size_t>(machine) * signals + signal];
  }
};

// The shortest step: with times within kUnixTimeBounds, frame indexes stay below 2^40.
inline constexpr double kMinFrameStep = 0.01;
// The steps a detector and a query_range poll may use (`vigil detect --step`): 10 ms to an hour.
inline constexpr Bounds kStepBounds{.lo = kMinFrameStep, .hi = 3600, .seconds = true};

class FrameBuilder {
 public:
  using Emit = std::function<void(const Frame&)>;

  // Steps of `step` seconds; a step is emitted once a point `lateness` seconds past its end has
  // arrived (or AdvanceTo passes it). Points for a step already emitted are dropped as late.
  // REQUIRES: step >= kMinFrameStep (a smaller one is taken as kMinFrameStep), lateness >= 0.
  FrameBuilder(double step, double lateness, Emit emit);

  // A point whose time lies outside kUnixTimeBounds (the readers refuse those) is dropped and
  // counted as late: frame indexes stay below 2^40 and never overflow.
  void Add(const Point& p);
  // Emits the steps that end at or before `time - lateness` (live use: time passes without data).
  void AdvanceTo(double time);
  // Emits every open step.
  void Flush();

  int64_t late() const { return late_; }
  double step() const { return step_; }

 private:
  void Open(int64_t index);
  void EmitOldest();
  void Grow(uint32_t machines, uint32_t signals);

  double step_;
  int64_t lateness_steps_;
  Emit emit_;
  std::deque<Frame> open_;  // consecutive steps first_index_, first_index_ + 1, ...
  int64_t first_index_ = 0;
  bool started_ = false;
  uint32_t machines_ = 0, signals_ = 0;  // dimensions of every open frame
  std::vector<Frame> spare_;             // emitted frames, reused
  int64_t late_ = 0;
};

}  // namespace vigil::telemetry
