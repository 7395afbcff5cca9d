#include "vigil/telemetry/series.h"

#include <algorithm>
#include <cmath>

#include "vigil/core/matrix.h"

namespace vigil::telemetry {

uint32_t Dictionary::Intern(std::string_view name) {
  if (last_ != UINT32_MAX && names_[last_] == name) return last_;
  auto it = ids_.find(name);
  if (it != ids_.end()) return last_ = it->second;
  const auto id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(names_.back(), id);
  return last_ = id;
}

std::optional<uint32_t> Dictionary::Find(std::string_view name) const {
  auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

Normalizer::Normalizer(SignalMap map, bool passthrough)
    : map_(std::move(map)), passthrough_(passthrough) {}

uint32_t Normalizer::SignalId(std::string_view name, SignalRole role) {
  const uint32_t id = signal_names_.Intern(name);
  if (id == signals_.size()) signals_.push_back({std::string(name), role});
  return id;
}

uint32_t Normalizer::SignalId(const SignalMapping& m) {
  const uint32_t id = signal_names_.Intern(m.signal);
  if (id == signals_.size()) {
    signals_.push_back(
        {m.signal, m.role, m.worse, m.threshold, m.persistence, m.level_by_position, m.duration});
  }
  return id;
}

Normalizer::SeriesState& Normalizer::StateOf(uint32_t machine, uint32_t signal,
                                             uint32_t component) {
  if (machine >= series_.size()) series_.resize(machine + 1);
  MachineSeries& ms = series_[machine];
  if (signal >= ms.signals || component >= ms.components) {
    const uint32_t signals = std::max(ms.signals, signal + 1) + 4;
    const uint32_t components = std::max(ms.components, component + 1) + 4;
    ResizeRowMajor(ms.states, ms.signals, ms.components, signals, components);
    ms.signals = signals;
    ms.components = components;
  }
  return ms.states[static_cast<size_t>(signal) * ms.components + component];
}

bool Normalizer::Normalize(const RawSample& s, Point* out) {
  static const Labels kNoLabels;
  const SignalMapping* m = map_.Find(s.metric, s.labels ? *s.labels : kNoLabels);
  if (m == nullptr && (!passthrough_ || map_.Knows(s.metric))) {
    ++counts_.unmapped;
    return false;
  }
  if (!std::isfinite(s.value)) {
    ++counts_.not_finite;
    return false;
  }
  Point p;
  p.time = s.time;
  p.machine = machines_.Intern(s.machine);
  p.component = components_.Intern(s.component);
  p.group = groups_.Intern(s.group);
  p.signal = m ? SignalId(*m) : SignalId(s.metric);
  SeriesState& st = StateOf(p.machine, p.signal, p.component);
  if (st.seen && s.time <= st.last_time) {
    ++(s.time == st.last_time ? counts_.duplicate : counts_.out_of_order);
    return false;
  }
  const bool counter = m && m->counter;
  const double scale = m ? m->scale : 1.0;
  // A new sample (not held) of `value`, before the scale.
  const auto fresh = [&](double value) {
    st.last_value = value * scale;
    p.value = st.last_value;
    ++counts_.accepted;
    *out = p;
    return true;
  };
  if (!st.seen) {
    st = SeriesState{};
    st.seen = true;
    st.last_time = st.fresh_time = st.scrape_time = st.change_time = s.time;
    st.last_raw = st.fresh_raw = s.value;
    if (counter) {
      // A counter's first sample only sets its base.
      st.last_value = std::nan("");
      ++counts_.counter_bases;
      return false;
    }
    return fresh(s.value);
  }
  const bool same = s.value == st.last_raw;
  const double stood = same ? 0 : s.time - st.change_time;  // the value before this one
  if (!same) {
    st.change_gaps[st.next_gap] = static_cast<float>(stood);
    st.next_gap = static_cast<uint8_t>((st.next_gap + 1) % 4);
    st.change_time = s.time;
  }
  st.last_time = s.time;
  st.last_raw = s.value;
  // A repeat sooner than 1.5 times the shortest recent gap between changes: a grid's copy of
  // one scrape (a scrape's jitter moves the next change by a second or so).
  const float hold = std::min(
      kMaxHold, 1.5f * *std::min_element(std::begin(st.change_gaps), std::end(st.change_gaps)));
  // At least 15 in 16 fresh samples changed, and not whole numbers (a utilisation in percent or
  // a temperature in degrees rests at one value): a continuous quantity, which repeats a value
  // other than a fraction's bounds (an idle GPU's 0, a saturated engine's 1) only when its
  // exporter holds it.
  const bool frozen = !counter && st.fractional && s.value != 0 && s.value != 1 &&
                      st.fresh_samples >= kContinuousAfter &&
                      16 * st.changed >= 15 * st.fresh_samples;
  // The series' last value again, marked held (no new sample); a scrape of its own where
  // `rescraped`.
  const auto held = [&](bool rescraped) {
    if (std::isnan(st.last_value)) return false;  // a counter's base only: no rate yet
    p.value = st.last_value;
    p.span = 0;
    p.held = true;
    p.rescraped = rescraped;
    if (rescraped) st.scrape_time = s.time;
    *out = p;
    return true;
  };
  if (same && (frozen || s.time - st.fresh_time < hold)) {
    ++counts_.held;
    // A frozen value's repeats at the series' cadence are scrapes; a grid's copies between are not.
    return held(frozen && s.time - st.scrape_time >= hold);
  }
  double value = s.value;
  const double since = s.time - st.fresh_time;
  p.span = static_cast<float>(since);
  if (counter) {
    double increase = s.value - st.fresh_raw;
    if (increase < 0 && -increase * kStepBack < st.fresh_raw) {
      // Back by less than a kStepBack-th of its count: no reset, which starts again from zero, but
      // a sample that lags (a second scraper's, a Prometheus HA pair's; one out of order across
      // a federation), or a count that went back. Read as a reset, its increase would be the whole
      // count and its rate thousands of times any real one. It is no new sample: the next one's
      // increase counts from the highest count, over the time since it (VictoriaMetrics reads
      // such a step back the same way). Its exporter answered: a scrape for the series' presence.
      ++counts_.counter_steps_back;
      return held(/*rescraped=*/true);
    }
    if (increase < 0) {
      ++counts_.counter_resets;
      increase = s.value;
    }
    value = increase / since;
  }
  // One rest (a value repeated after the hold: a gauge at rest, or an exporter holding it before
  // the series was known to be continuous) counts once in the share of changes, however many of
  // its repeats were samples: a job that began with a hang of some minutes, its step time held,
  // would otherwise never have its step time counted as continuous, and each checkpoint's held
  // step time would be evidence (jobgen's seed 100,001).
  const bool change = s.value != st.fresh_raw;
  // A long rest (kLongRest holds or more: the job paused, a checkpoint or an evaluation, and every
  // rank's exporter held its step time) counts for nothing: a job that pauses every few minutes
  // otherwise keeps its step time under the share for long, and a value held through its next
  // pause is a fresh sample every other scrape (jobgen's seed 127,101 on 128 machines).
  if (change && st.resting && stood >= kLongRest * hold && st.fresh_samples > 1) {
    --st.fresh_samples;
  }
  if (change || !st.resting) {
    if (st.fresh_samples == 1024) {
      st.fresh_samples /= 2;
      st.changed /= 2;
    }
    ++st.fresh_samples;
    st.changed += change;
  }
  st.resting = !change;
  st.fractional = st.fractional || s.value != std::trunc(s.value);
  st.fresh_time = st.scrape_time = s.time;
  st.fresh_raw = s.value;
  return fresh(value);
}

}  // namespace vigil::telemetry
