#include "vigil/detect/peer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <tuple>
#include <utility>

#include <boost/math/distributions/students_t.hpp>

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

namespace {

// The median of `v` (reordered).
template <typename T>
double MedianOf(std::vector<T>& v) {
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid), v.end());
  return v[mid];
}

// The values of `sorted` within `tolerance` of x, as [first, last).
std::pair<std::vector<double>::const_iterator, std::vector<double>::const_iterator> Within(
    const std::vector<double>& sorted, double x, double tolerance) {
  const auto lo = std::lower_bound(sorted.begin(), sorted.end(), x - tolerance);
  return {lo, std::upper_bound(lo, sorted.end(), x + tolerance)};
}

// The median of the first n of `v` (reordered).
float MedianOfFirst(float* v, size_t n) {
  std::nth_element(v, v + n / 2, v + n);
  return v[n / 2];
}

// x as a float, those beyond a float's range at its largest (a median of them is no worse).
float Narrow(double x) {
  constexpr double kMax = std::numeric_limits<float>::max();
  return static_cast<float>(std::clamp(x, -kMax, kMax));
}

// How much of the way an average with this half-life moves in `dt` seconds.
double Weight(double dt, double half_life) { return 1 - std::exp2(-dt / half_life); }

// A gap longer than this (a pause in the data) counts as this much.
constexpr float kLongestGap = 120;
// The standard deviation of a normal sample over its mean absolute deviation: sqrt(pi / 2).
constexpr double kMeanDeviationToSigma = 1.2533;
// How fast the peers' spread follows when it rises (it falls with PeerOptions' half-life).
constexpr double kSpreadRiseHalfLife = 10;
// Placement is decided again this often, per group and feature.
constexpr double kPlaceEvery = 10;
// A placement (log) that moves by less than this moves its factor by exp's series to the square
// (the cube's term, under 2e-10, is below a float's precision).
constexpr double kSeriesStep = 1e-3;
// A placement is learned again (PeerModel::Relearn) only at a level whose factor a float holds.
constexpr double kMaxRelearnedLevel = 80;
// A machine first seen within this share of its group's warm-up joined it at its start
// (JudgeMachine).
constexpr double kJoinedAtStartShare = 0.25;
// The centre goes into a feature's level history this often.
constexpr double kLevelEvery = 10;
// How fast a machine's sampling interval follows the gaps between its fresh samples (the gain of
// an exponential average per sample).
constexpr float kIntervalGain = 0.2f;
// A machine's value is current while it reports (held or fresh) within this many of its own
// intervals, and within kCurrentMinSeconds at least.
constexpr double kCurrentIntervals = 3;
constexpr double kCurrentMinSeconds = 5;
// Over the warm-up its last minutes weigh most: its averages take the warm-up over this as their
// half-life (a job's first iterations may be anything).
constexpr double kWarmupHalfLives = 5;
// A warm-up lasts at most this many times --warmup, however long its centre keeps moving (a
// restart's too: a job-wide transition in its first minutes takes as long to cross).
constexpr double kMaxWarmups = 2;
// A restart's warm-up, after a job-level stall, is this share of --warmup: the placements from
// before it are known, and kept unless the job changed (KeepPlacementsFromBefore).
constexpr double kRestartWarmupShare = 0.5;
// The half-life of a feature's slow centre (Peers::slow_centre), seconds.
constexpr double kSlowCentreHalfLife = 30;
// The centre is moving while it lies more than this share of the level off its slow average.
constexpr double kMovingShare = 0.2;
// The centre holds still while it stays within this share of the level of where it stood when it
// last moved by more; once it has held still for as long as a machine's value stays current
// (CurrentWithin, the slowest machine's), its slow average is where it stands (Judge).
constexpr double kStillShare = kMovingShare / 4;
// A feature whose centre lies under this share of its level is stalled.
constexpr double kStalledShare = 0.2;
// The recent level (Peers::recent) is the median of the level's entries taken over the last this
// share of a warm-up's length: as long as the window its placements are learned from.
constexpr double kRecentShare = 0.5;
// A split of a group (FollowSplit) lies apart from the others by at least this many of the
// spreads of their own moves, from the nearest of them.
constexpr double kSplitGap = 2;
// ... and is no slowdown where the others have moved the better way since it began by this share
// of the members' move or more: the others gained what it lost.
constexpr double kRedistributedShare = 0.5;
// How far back, before a persistence time ago, where a group's others stood as a split began is
// read (FollowSplit): the median of the centre over these seconds. A job-wide dip shorter than
// half of it (a checkpoint) does not move it; a job-wide rise longer than half of it is in it.
constexpr double kSplitReferenceS = 300;
// The floor of the noise scale: relative to the level, and absolute (a feature at 0 everywhere).
constexpr double kRelativeSpreadFloor = 1e-6;
constexpr double kAbsoluteSpreadFloor = 1e-12;
// The effect of a deviation is relative to the expected value, or to this share of the machine's
// level where the expected value is smaller (a feature that swings through 0).
constexpr double kEffectLevelShare = 0.5;
// Evidence grows at full rate from this many times the threshold (z_min noise scales).
constexpr double kFullStrengthThresholds = 2;
// ... and faster where it is strong (PeerOptions::strong_effect), up to this rate.
constexpr double kMaxEvidenceRate = 2;
// A run ends when no deviating sample came for this many of the machine's intervals (at least 1 s).
constexpr float kRunGapIntervals = 3;

// The longest gap between a run's deviating samples of a machine sampled every `interval`.
double RunGap(float interval) { return kRunGapIntervals * std::max(interval, 1.0f); }

// A machine alone at its level from its first sample is odd (PeerModel::Place) at this false
// rate per group and feature whose healthy machines' levels scatter as a normal's.
constexpr double kOddFalseRate = 0.01;

// How many of the other machines' standard deviations (times sqrt(1 + 1 / m), a prediction from
// m of them) a machine of a group of n lies from their mean before it is odd: Student's t of m - 1
// degrees of freedom, m = n - 1, beyond kOddFalseRate / n both ways (any machine of the n may be
// the one). From seven others it is 5.7; from three, 20, since three levels say little of how
// far healthy levels scatter.
double OddCritical(size_t n) {
  if (n < 3) return std::numeric_limits<double>::infinity();
  const double m = static_cast<double>(n - 1);
  return boost::math::quantile(
      boost::math::complement(boost::math::students_t(m - 1), kOddFalseRate / (2 * (m + 1))));
}

// One of the machines an earlier stall could not tell apart is a weak candidate for a stall that
// began within this many warm-ups of the job's restart (PeerModel::TierOf).
constexpr double kCandidateWarmups = 2;

// A machine that has had no fresh sample for this many of its intervals is overdue: its job
// may have paused (PeerModel::FollowPause). The held-sample rule's factor (docs/detect.md,
// "Time, not samples"): a scrape late by jitter is not overdue.
constexpr double kOverdueIntervals = 1.5;

// Extends a run (its evidence in seconds, its deviating samples and the latest of them) by a
// deviating sample at `now`, the gap since the latest weighted by `strength`; the run's first
// sample, or one after a gap longer than RunGap, starts it again. Returns whether it started.
// `paused`: seconds of the gap in which the machine's job paused (PeerModel::FollowPause); they
// count only as far as the machine's latest fresh sample came `late` (beyond its own pace before
// it: it was overdue too), and neither as evidence nor as a break: a deviation that lasts across
// a checkpoint goes on after it (one of up to kLongestGap, where lateness and FollowPause's vote
// stop). A run's gap may span fresh samples whose own value did not deviate, each on time.
bool ExtendRun(float& evidence, uint16_t& samples, double& last, double now, float interval,
               double strength, double paused = 0, double late = 0) {
  const double gap = now - last;
  const double held = std::min({std::max(late, 0.0), std::max(paused, 0.0), gap});
  const bool starts = samples == 0 || gap - held > RunGap(interval);
  if (starts) {
    evidence = 0;
    samples = 0;
  } else {
    evidence += static_cast<float>((gap - held) * strength);
  }
  if (samples < UINT16_MAX) ++samples;
  last = now;
  return starts;
}

// Whether a residual lies the way that is worse for its signal.
bool WorseWay(telemetry::Worse worse, double residual) {
  return worse == telemetry::Worse::kEither ||
         (worse == telemetry::Worse::kHigher ? residual > 0 : residual < 0);
}

// Whether x (a level against the centre, log) lies beyond `tolerance` the worse way: either way
// on a signal worse either way.
bool BeyondTheWorseWay(telemetry::Worse worse, double x, double tolerance) {
  return WorseWay(worse, x) && std::fabs(x) > tolerance;
}

// ... on the worse side of a signal that has one (never for one worse either way).
bool BeyondOnWorseSide(telemetry::Worse worse, double x, double tolerance) {
  return worse != telemetry::Worse::kEither && BeyondTheWorseWay(worse, x, tolerance);
}

// The machine's placement factor on a feature: its usual level over the centre, 1 unless placed.
float Factor(bool placed, float a) { return placed ? a : 1.0f; }

// How recent a machine's latest sample must be to count as current: three of its intervals.
double CurrentWithin(float interval) {
  return std::max(kCurrentIntervals * interval, kCurrentMinSeconds);
}

// What an effect is measured against: the expected value, at least half the usual level (so
// that small noise about a stalled centre near 0 is no effect), at least the noise floor.
double EffectScale(double expected, double factor, float level, double floor) {
  return std::max({std::fabs(expected), kEffectLevelShare * factor * level, floor});
}

// The least noise scale of a feature: its resolution (`quantum`), and a sliver of its `level`.
double NoiseFloor(float quantum, float level) {
  return std::max(
      {static_cast<double>(quantum), kRelativeSpreadFloor * level, kAbsoluteSpreadFloor});
}

// Machine m's group: group_of's, 0 where it says none.
uint32_t GroupOf(std::span<const uint32_t> group_of, uint32_t m) {
  return m < group_of.size() ? group_of[m] : 0;
}

}  // namespace

double PeerModel::Weights::operator()(double dt, double half_life) {
  if (dt != dt_ || half_life != half_life_) {
    dt_ = dt;
    half_life_ = half_life;
    w_ = Weight(dt, half_life);
  }
  return w_;
}

void PeerModel::Update(const telemetry::Frame& frame, std::span<const uint32_t> group_of,
                       std::span<const telemetry::SignalInfo> signals,
                       std::span<const double> own_fault_since) {
  triggered_.clear();
  scored_.clear();
  stalls_.clear();
  shared_.clear();
  Grow(frame.machines, static_cast<uint32_t>(signals.size()) * kStats);
  fresh_.assign(static_cast<size_t>(stride_) * features_, 0);
  GroupMembers(group_of);
  // Group by group and signal, each signal's samples smoothed just before it is judged: its
  // machines' tracks are then still in cache.
  for (uint32_t g = 0; g < members_.size(); ++g) {
    for (uint32_t s = 0; s < features_ / kStats; ++s) {
      if (s >= signals.size() || signals[s].role != telemetry::SignalRole::kPeer) continue;
      // The pause clock (FollowPause starts it): a pause under way at the last frame lasted until
      // this one, whose samples may end it: no sample came between them (a frame holds every row
      // up to its time). A signal exported once an iteration, whose rows stop as the job pauses,
      // may leave no frame for several seconds before its first samples after the pause (a
      // reviewer's 20-s checkpoint: 7 s of it were evidence).
      if (Peers& p = peers_[g][s * kStats]; p.pausing) {
        p.paused += frame.time - p.pause_checked;
        p.pause_checked = frame.time;
      }
      SmoothSamples(frame, g, s);
      if (members_[g].size() < static_cast<size_t>(o_.min_peers)) continue;
      FollowPause(g, s, frame.time);
      // A signal's statistics share their samples: which are fresh, which current.
      const uint32_t first = s * kStats;
      const bool any = std::any_of(members_[g].begin(), members_[g].end(),
                                   [&](uint32_t m) { return fresh_[CellOf(m, first)] != 0; });
      if (!any) continue;
      CollectCurrent(g, first, frame.time);
      for (uint32_t f = first; f < first + kStats; ++f) Judge(g, f, frame.time, signals[s]);
    }
  }
  std::sort(triggered_.begin(), triggered_.end());
  triggered_.erase(std::unique(triggered_.begin(), triggered_.end()), triggered_.end());
  FollowStalls(frame.time, signals, own_fault_since);
}

bool PeerModel::JudgingStall() const {
  return std::any_of(group_stalls_.begin(), group_stalls_.end(),
                     [](const GroupStall& gs) { return gs.since >= 0 && !gs.reported; });
}

void PeerModel::Grow(uint32_t machines, uint32_t features) {
  if (machines <= machines_ && features <= features_) return;
  const uint32_t m = std::max(machines, machines_);
  const uint32_t f = std::max(features, features_);
  const uint32_t stride = m <= stride_ ? stride_ : std::max(m, 2 * stride_);
  ResizeRowMajor(tracks_, features_, stride_, f, stride);
  ResizeRowMajor(warm_, features_, stride_, f, stride);
  stride_ = stride;
  machines_ = m;
  features_ = f;
  for (auto& g : peers_) g.resize(f);
}

void PeerModel::GroupMembers(std::span<const uint32_t> group_of) {
  for (auto& members : members_) members.clear();
  for (uint32_t m = 0; m < machines_; ++m) {
    const uint32_t g = GroupOf(group_of, m);
    if (g >= members_.size()) members_.resize(g + 1);
    if (g >= peers_.size()) peers_.resize(g + 1, std::vector<Peers>(features_));
    members_[g].push_back(m);
  }
}

void PeerModel::SmoothSamples(const telemetry::Frame& frame, uint32_t g, uint32_t s) {
  // The frame's cells of one signal lie a machine's row apart, and a track spans two cache lines:
  // both are fetched this many machines ahead (at 1,024 machines the smoothing waited on them for
  // an eighth of the detector's time; docs/benchmarks.md, "Throughput").
  constexpr size_t kAhead = 8;
  if (s >= frame.signals) return;
  const double now = frame.time;
  const std::vector<uint32_t>& members = members_[g];
  for (size_t i = 0; i < members.size(); ++i) {
    const uint32_t m = members[i];
    if (m >= frame.machines) break;  // members_ lists each group's machines in order
    if (i + kAhead < members.size() && members[i + kAhead] < frame.machines) {
      const uint32_t next = members[i + kAhead];
      __builtin_prefetch(&frame.at(next, s));
      for (uint32_t st = 0; st < kStats; ++st) {
        const char* track = reinterpret_cast<const char*>(&TrackOf(next, s * kStats + st));
        __builtin_prefetch(track, 1);
        __builtin_prefetch(track + sizeof(Track) - 1, 1);
      }
    }
    const telemetry::Cell& c = frame.at(m, s);
    if (c.count == 0) continue;
    for (uint32_t st = 0; st < kStats; ++st) {
      const uint32_t f = s * kStats + st;
      Track& t = TrackOf(m, f);
      t.seen = now;
      if (c.fresh == 0) continue;
      fresh_[CellOf(m, f)] = 1;
      const double raw = st == 0 ? c.mean() : st == 1 ? c.min : c.max;
      SmoothSample(t, peers_[g][f], raw, now, PauseClock(g, f));
    }
  }
}

void PeerModel::SmoothSample(Track& t, Peers& p, double raw, double now, double paused) {
  t.prev_raw = t.fresh < 0 ? static_cast<float>(raw) : t.raw;
  t.raw = static_cast<float>(raw);
  if (t.fresh < 0) {
    t.first = t.fresh = now;
    t.smooth = static_cast<float>(raw);
    t.samples = 1;
    t.pause_seen = static_cast<float>(paused);
    return;
  }
  const float gap = std::min(static_cast<float>(now - t.fresh), kLongestGap);
  // A job whose iterations a straggler stretches (every rank's step-time gauge changes at the
  // straggler's pace, aliased with the scrapes into gaps of one and two intervals) is overdue
  // once, not at every longer gap until the intervals have followed (FollowPause).
  // Late against its pace in training: after a paused gap (`trained` >= 0, with no sample since),
  // that gap's part spent training, not the gap, whose pause a second one may follow before the
  // machine's next sample (a reviewer's 20-s checkpoint, 5 s of training and a 120-s evaluation:
  // the first pause's 25-s gap as the pace left 30 s of the second as evidence).
  const float pace = t.trained >= 0 ? std::min(t.pace, t.trained) : t.pace;
  t.late = t.samples == 1 ? 0.0f : std::max(gap - pace, 0.0f);
  // The seconds of the gap its job spent paused (a checkpoint, an evaluation: FollowPause), as
  // far as this sample came late (ExtendRun).
  const float held =
      std::min(std::clamp(static_cast<float>(paused) - t.pause_seen, 0.0f, gap), t.late);
  // A paused gap is no time between its scrapes, nor its training's pace, once the next gap does
  // not repeat it; one that it repeats was a straggler's longer iterations, whose first gap the
  // job's vote cannot tell from a pause (every rank is overdue at once), and is kept. After a
  // paused gap the pace stands at it (it rose at once: the sample came late), and `trained` is
  // its part spent training. Falling a fifth of the way per sample from a 2-minute evaluation,
  // the pace stood near 50 s when a checkpoint began 75 s later, so the job counted as paused
  // only 75 s into it, and the rest was evidence (jobgen's seed 99,101, 15 s: a host slow as the
  // checkpoint began named); and the interval, raised by the paused gaps, let a checkpoint of
  // 3 minutes go on with a run (RunInterval; docs/detect.md, "Time, not samples").
  const bool after_pause = t.trained >= 0 && kOverdueIntervals * gap < t.pace;
  if (after_pause) t.interval = RunInterval(t);
  t.interval = t.samples == 1 ? gap : t.interval + kIntervalGain * (gap - t.interval);
  if (t.samples == 1 || gap > t.pace) {
    t.pace = gap;
  } else if (after_pause) {
    t.pace = std::max(t.trained, gap);
  } else {
    t.pace += kIntervalGain * (gap - t.pace);
  }
  t.trained = held > 0 ? gap - held : -1.0f;
  t.pause_seen = static_cast<float>(paused);
  const double tau = std::max(o_.smooth_s, static_cast<double>(t.interval));
  const double step = raw - t.smooth;
  if (step != 0) {
    float& q = p.quantum;
    const auto d = static_cast<float>(std::fabs(step));
    q = q == 0 ? d : std::min(q, d);
  }
  t.smooth = static_cast<float>(t.smooth + smooth_weight_(gap, tau * std::numbers::ln2) * step);
  t.fresh = now;
  if (t.samples < UINT16_MAX) ++t.samples;
}

float PeerModel::RunInterval(const Track& t) {
  return t.trained >= 0 ? t.interval - kIntervalGain * (t.pace - t.trained) : t.interval;
}

void PeerModel::FollowStalls(double now, std::span<const telemetry::SignalInfo> signals,
                             std::span<const double> own_fault_since) {
  group_stalls_.resize(members_.size());
  restarted_.resize(members_.size(), -1);
  ended_episode_.resize(members_.size(), -1);
  for (uint32_t g = 0; g < members_.size(); ++g) {
    uint32_t judged = 0, stalled = 0;
    for (const Peers& p : peers_[g]) {
      // A feature whose series are gone (the trainer's, its job killed) counts neither way.
      if (p.updated < 0 || p.level <= 0 || now > p.current_until) continue;
      ++judged;
      stalled += p.stalled_since >= 0;
    }
    GroupStall& gs = group_stalls_[g];
    // No feature current (every scrape of the group missed: Prometheus down) says nothing of
    // the stall: it neither ends nor goes on.
    if (judged == 0) continue;
    if (2 * stalled <= judged) {
      // A stall as long as a job-level one ends in a restart (the job killed by its watchdog
      // and started again, perhaps without a machine): the group is learned again as at its
      // start.
      if (gs.began >= 0 && now - gs.began >= o_.stall_s) {
        for (Peers& p : peers_[g]) p.since = -1;
        restarted_[g] = now;
        ended_episode_[g] = gs.began;
      }
      gs = GroupStall{};
      continue;
    }
    if (gs.began < 0) {
      gs.began = gs.since = now;
      gs.level_before.clear();
      for (uint32_t f = 0; f < peers_[g].size(); ++f) {
        Peers& p = peers_[g][f];
        gs.level_before.push_back(p.level);
        p.spread_before = p.spread;
        // From the machines' intervals as they were, before a hang held their step times.
        // A stall is seen once its features have fallen, up to their persistence and the
        // time a value stays current after it began: a machine away from its placement longer
        // than that before (never named: a placement learned from events of its own, whose
        // scatter hid the gap) does not hold it, and a restart learns it anew.
        double unseen = 0;
        if (SignalOfFeature(f) < signals.size()) {
          const telemetry::SignalInfo& signal = signals[SignalOfFeature(f)];
          p.restart_warmup = static_cast<float>(RestartWarmup(g, f, signal));
          unseen = PersistenceOf(signal) + current_within_;
        }
        for (uint32_t m : members_[g]) {
          Track& t = TrackOf(m, f);
          t.held_placement = t.confirmed || now - t.at_placement <= unseen;
        }
      }
    }
    // A reported stall whose group moves on some feature (its centre a fifth of the usual level
    // off its slow average: the job killed by its watchdog, the restart's init, a rank that hangs
    // as the restarted job begins) has ended as a state: the job restarted. Its next state, from
    // its group's last move, is judged as a stall of its own (GroupStall::follows).
    if ((gs.reported || gs.follows) &&
        std::any_of(peers_[g].begin(), peers_[g].end(),
                    [&](const Peers& p) { return p.level > 0 && p.moving == now; })) {
      restarted_[g] = now;
      gs.since = now;
      gs.reported = false;
      gs.follows = true;
      gs.odd.clear();
      gs.episodes.clear();
    }
    if (gs.reported) continue;
    FollowOdd(g, now, signals, gs);
    if (now - gs.since < o_.stall_s) continue;
    gs.reported = true;
    Stall stall{g, gs.since, std::nullopt, {}};
    // The machines that differ for the persistence time, each in the tier of its most
    // unexplained difference (TierOf; runs sorted by machine).
    std::vector<std::pair<uint32_t, StallTier>> candidates;
    for (const OddRun& run : gs.odd) {
      const double persistence = PersistenceOf(signals[SignalOfFeature(run.feature)]);
      const float interval = TrackOf(run.machine, run.feature).interval;
      // A run whose own values stopped differing (a burst that has ended, its smoothed value not
      // yet back) is over, as a divergence's run is at its next deviating sample.
      const bool over = now - run.last > RunGap(interval);
      if (over || run.evidence < persistence || run.samples < o_.min_samples) continue;
      const double since = run.machine < own_fault_since.size() ? own_fault_since[run.machine] : -1;
      const StallTier tier = TierOf(g, run.machine, gs, since, persistence, interval);
      if (!candidates.empty() && candidates.back().first == run.machine) {
        candidates.back().second = std::min(candidates.back().second, tier);
      } else {
        candidates.emplace_back(run.machine, tier);
      }
    }
    // A machine with a fault of its own that is silent now (gone down) has no sample to differ
    // on: it differs for that fault. Its silence, dated by its last sample, may be the stall's
    // cause where it began while the job ran, before the stall (TierOf), and no longer before the
    // stall than the persistence and the time a sample stays current: a job that trained on
    // without the machine did not hang on it. One that reports and differs on nothing (a PCIe
    // link narrowed an hour before) is seen alike.
    const size_t differing = candidates.size();
    for (uint32_t m : members_[g]) {
      if (m >= own_fault_since.size() || own_fault_since[m] < 0) continue;
      const Silence silence = SilenceOf(g, m, now);
      if (silence.since < 0 ||
          gs.since - silence.since > o_.persistence_s + CurrentWithin(silence.interval)) {
        continue;
      }
      const auto end = candidates.begin() + static_cast<std::ptrdiff_t>(differing);
      const auto it = std::lower_bound(candidates.begin(), end, m,
                                       [](const auto& c, uint32_t k) { return c.first < k; });
      if (it != end && it->first == m) continue;
      // (With a fault of its own, TierOf reads no persistence or interval: those date a late
      // difference.)
      if (TierOf(g, m, gs, silence.since, 0, 0) != StallTier::kUnexplained) continue;
      // One whose last values before its silence had stalled with its peers' went down in the
      // stall, before the smoothed centres had fallen far enough to show it: a weak candidate,
      // taken only where no other differs (jobgen's seed 116,003 at 1 s: a rank hung at 920 s,
      // another machine went down at 930 s, and the stall, seen at 935 s, could not tell the two
      // apart).
      candidates.emplace_back(m,
                              JoinedStall(g, m, gs) ? StallTier::kWeak : StallTier::kUnexplained);
    }
    std::vector<uint32_t> differ[3];
    for (const auto& [m, tier] : candidates) differ[static_cast<int>(tier)].push_back(m);
    // A state that follows a reported one is reported only for a machine whose difference
    // nothing explains (a rank that hangs the restarted job), never as the episode again.
    if (gs.follows && differ[0].size() != 1) continue;
    const auto tier = std::find_if(std::begin(differ), std::end(differ),
                                   [](const std::vector<uint32_t>& d) { return !d.empty(); });
    if (tier != std::end(differ) && tier->size() == 1) stall.machine = tier->front();
    // The machine named may have caused it, and so may each of those it could not tell apart
    // when nothing explains their differences.
    const auto caused = [&](uint32_t m, bool named) {
      if (causes_.size() <= m) causes_.resize(m + 1);
      causes_[m] = Cause{gs.since, gs.began, g, named};
    };
    if (!stall.machine && tier == std::begin(differ)) {
      for (uint32_t m : differ[0]) caused(m, false);
    }
    if (stall.machine) {
      caused(*stall.machine, true);
      for (const auto& [m, d] : odd_) {
        if (m == *stall.machine) stall.deviations.push_back(d);
      }
      std::sort(
          stall.deviations.begin(), stall.deviations.end(),
          [](const Deviation& x, const Deviation& y) { return std::fabs(x.z) > std::fabs(y.z); });
    }
    stalls_.push_back(std::move(stall));
  }
}

// A machine with a fault of its own under way (a lost GPU idling among peers that spin in their
// collectives) differs for that fault. One that began before the job last restarted (the job
// restarted without it) or once the stall had begun (it followed the hang) is not the stall's
// cause; one that began while the job ran, before the stall, may be (a lost GPU that hung the job)
// and counts as any other. A machine named for an earlier stall, before the job last restarted,
// is explained too: the job restarted without it (it idles among spinning peers), or it hangs the
// job again (then it is the only one that differs). Weaker: one of the machines that the stall
// which ended in the job's last restart could not tell apart, in a new stall that began within
// two warm-ups of that restart (any of them may have caused that stall: the job restarted with
// or without it); and a machine seen alike in this state for longer than its signal's
// persistence and three of its intervals (what a difference at its start takes to show) before
// it differed: it followed the stall, as a network burst four minutes into a hang.
PeerModel::StallTier PeerModel::TierOf(uint32_t g, uint32_t m, const GroupStall& gs,
                                       double own_fault_since, double persistence,
                                       float interval) const {
  const double since = own_fault_since;
  const bool fault_before = since >= 0 && since < restarted_[g];
  const bool fault_during = since >= gs.since;
  const Cause cause = m < causes_.size() ? causes_[m] : Cause{};
  const bool earlier = cause.since >= 0 && cause.group == g && cause.since < restarted_[g];
  if (fault_before || fault_during || (earlier && cause.named)) return StallTier::kExplained;
  if (since >= 0) return StallTier::kUnexplained;  // since the restart, before the stall
  const bool candidate = earlier && cause.episode == ended_episode_[g] &&
                         gs.since - restarted_[g] <= kCandidateWarmups * o_.warmup_s;
  const OddEpisode e = m < gs.episodes.size() ? gs.episodes[m] : OddEpisode{};
  const bool late = e.since >= 0 && e.alike_before >= 0 &&
                    e.since - std::max(e.alike_before, gs.since) > persistence + RunGap(interval);
  return candidate || late ? StallTier::kWeak : StallTier::kUnexplained;
}

void PeerModel::FollowOdd(uint32_t g, double now, std::span<const telemetry::SignalInfo> signals,
                          GroupStall& gs) {
  odd_.clear();
  std::vector<OddRun> runs;
  const auto key = [](const OddRun& r) { return std::pair{r.machine, r.feature}; };
  // Per machine, in this frame: on how many of the features judged (`judged` of them) it was
  // current, and whether it differed on one.
  std::vector<uint32_t> judged_on;
  std::vector<uint8_t> differs;
  uint32_t judged = 0;
  for (uint32_t f = 0; f < features_; ++f) {
    const Peers& p = peers_[g][f];
    if (p.updated < 0 || p.level <= 0) continue;
    CollectCurrent(g, f, now);
    if (valid_.size() < static_cast<size_t>(o_.min_peers)) continue;
    // The peers as placed, or all alike where they scatter less so (every stage of a pipeline
    // spinning in its collective at one power, whatever each drew in training).
    auto [centre, spread] = CentreAndSpread(f, true);
    const auto [alike_centre, alike_spread] = CentreAndSpread(f, false);
    const bool placed = spread <= alike_spread;
    if (!placed) std::tie(centre, spread) = std::pair{alike_centre, alike_spread};
    // A feature first seen during the stall has no level from before it.
    const double level =
        f < gs.level_before.size() && gs.level_before[f] > 0 ? gs.level_before[f] : p.level;
    if (std::fabs(std::fabs(centre) - level) <= kMovingShare * level) continue;
    const double floor = NoiseFloor(p.quantum, p.level);
    const double noise = std::max(spread, floor);
    // The way worse for the signal, as in training (a GPU cooler than its stalled peers is no
    // cause of the stall), but either way on a feature the stall took to nothing: the machine
    // that still moves data there (a hung kernel reading over PCIe) is the odd one.
    const telemetry::Worse worse =
        p.stalled_since >= 0 ? telemetry::Worse::kEither : signals[SignalOfFeature(f)].worse;
    ++judged;
    for (uint32_t m : valid_) {
      const Track& t = TrackOf(m, f);
      // A value its exporter holds (a step-time gauge during a hang) is no evidence: its run ends.
      if (now - t.fresh > CurrentWithin(t.interval)) continue;
      if (judged_on.size() <= m) {
        judged_on.resize(m + 1, 0);
        differs.resize(m + 1, 0);
      }
      ++judged_on[m];
      const double factor = placed ? Factor(t.placed, t.a) : 1.0;
      const double expected = factor * centre;
      const double residual = t.smooth - expected;
      const double scale = EffectScale(expected, factor, p.level, floor);
      if (!WorseWay(worse, residual) || !Beyond(residual, noise, scale)) continue;
      differs[m] = 1;
      odd_.push_back({m, Deviation{.feature = f,
                                   .value = t.smooth,
                                   .expected = static_cast<float>(expected),
                                   .z = static_cast<float>(residual / noise),
                                   .effect = static_cast<float>(residual / scale),
                                   .evidence = 0,
                                   .start = -1}});
      const auto before = std::lower_bound(
          gs.odd.begin(), gs.odd.end(), std::pair{m, f},
          [&](const OddRun& r, const std::pair<uint32_t, uint32_t>& k) { return key(r) < k; });
      const bool known = before != gs.odd.end() && key(*before) == std::pair{m, f};
      OddRun run = known ? *before : OddRun{.machine = m, .feature = f};
      if (t.fresh > run.last && WorseWay(worse, t.raw - expected) &&
          Beyond(t.raw - expected, noise, scale)) {
        ExtendRun(run.evidence, run.samples, run.last, t.fresh, t.interval, 1);
        if (gs.episodes.size() <= m) gs.episodes.resize(m + 1);
        OddEpisode& e = gs.episodes[m];
        if (e.since < 0) {
          e.since = t.fresh;
          e.alike_before = e.alike;
        }
      }
      runs.push_back(run);
    }
  }
  // A machine judged alike (current and differing on none of the features judged) for the
  // persistence time (--persistence, whatever the signals' own) has ended its difference: one it
  // shows later is a new one. Being alike begins only where it is judged on all of them: one with
  // an exporter silent or held (a hung GPU whose queries time out while its host reports) is not
  // seen alike.
  if (gs.episodes.size() < judged_on.size()) gs.episodes.resize(judged_on.size());
  for (uint32_t m = 0; m < judged_on.size(); ++m) {
    OddEpisode& e = gs.episodes[m];
    if (differs[m]) {
      e.alike = -1;
    } else if (judged_on[m] == judged) {
      if (e.alike < 0) e.alike = now;
      if (now - e.alike > o_.persistence_s) e.since = -1;
    }
  }
  std::sort(runs.begin(), runs.end(),
            [&](const OddRun& x, const OddRun& y) { return key(x) < key(y); });
  gs.odd = std::move(runs);
}

void PeerModel::FollowPause(uint32_t g, uint32_t s, double now) {
  const uint32_t first = s * kStats;
  // No interval, or no fresh sample for the longest gap a pace holds (a machine left out of a
  // restarted job whose exporter still sends its last step time): no vote. Nor one with no
  // sample at all, fresh or held, for three of its intervals (gone: its series ended while its
  // peers report), unless most of the machines that could vote are as silent: a signal exported
  // once an iteration (a row per step, no value held between them) falls silent on every machine
  // as the job pauses, and until session 79 the pause then ended three intervals into it, the
  // rest of it evidence (a reviewer's generator: 2-s iterations, a 20-s checkpoint, a host 1.5
  // times slow for 28 s before it and 23 s after it named in 6 of 20 seeds). Scrapes that all
  // stopped (Prometheus down) are no training either.
  const auto may_vote = [&](const Track& t) {
    return t.samples >= 2 && now - t.fresh <= kLongestGap;
  };
  const auto silent = [&](const Track& t) { return now - t.seen > RunGap(t.interval); };
  const auto late = [&](const Track& t) { return now - t.fresh > kOverdueIntervals * t.pace; };
  size_t could = 0, quiet = 0, overdue = 0, quiet_overdue = 0;
  for (uint32_t m : members_[g]) {
    const Track& t = TrackOf(m, first);
    if (!may_vote(t)) continue;
    ++could;
    if (silent(t)) {
      ++quiet;
      quiet_overdue += late(t);
    } else {
      overdue += late(t);
    }
  }
  const bool all_quiet = 2 * quiet > could;
  const size_t reporting = all_quiet ? could : could - quiet;
  if (all_quiet) overdue += quiet_overdue;
  const auto votes = [&](const Track& t) { return may_vote(t) && (all_quiet || !silent(t)); };
  Peers& p = peers_[g][first];
  const bool paused = reporting >= static_cast<size_t>(o_.min_peers) && 2 * overdue >= reporting;
  // Once under way the pause is clocked before each frame's samples are read (Update); here it
  // begins. It began when half the machines had had their latest fresh sample (the median of
  // those times), kOverdueIntervals of their paces before it was seen: until session 78 that time
  // counted as training, and a run across a pause got up to two intervals of evidence from held
  // values (jobgen's seed 107,101 at 15 s: a GPU clock dip of 59 s that ended as an evaluation
  // began, named on the first iteration after it). Not before the latest pause ended.
  if (paused && !p.pausing && p.pause_checked >= 0) {
    scratch_.clear();
    for (uint32_t m : members_[g]) {
      const Track& t = TrackOf(m, first);
      if (votes(t)) scratch_.push_back(t.fresh);
    }
    p.paused += now - std::min(p.pause_checked, std::max(MedianOf(scratch_), p.resumed));
  }
  if (p.pausing && !paused) p.resumed = now;
  p.pausing = paused;
  p.pause_checked = now;
}

double PeerModel::MembersInterval(uint32_t group, uint32_t f) {
  scratch_.clear();
  for (uint32_t m : members_[group]) {
    const float interval = TrackOf(m, f).interval;
    if (interval > 0) scratch_.push_back(interval);
  }
  return scratch_.empty() ? 0 : MedianOf(scratch_);
}

double PeerModel::SampledWindow(double interval) const { return 2.0 * o_.min_samples * interval; }

double PeerModel::FirstWarmup(double interval) const {
  // Placements are the medians of the window's levels (WindowLevel): a benign event of the
  // machine's own must take fewer than half of them. At a 60-s cadence a 5-minute warm-up's
  // window holds 3 samples, and a network burst of 50 s in two of them was the placement (jobgen's
  // seeds 75,003 and 75,004 at 30 and 60 s): the window holds twice the samples a deviation needs.
  if (o_.warmup_s <= 0) return 0;
  return std::max(o_.warmup_s, 2 * SampledWindow(interval));
}

double PeerModel::RestartWarmup(uint32_t group, uint32_t f, const telemetry::SignalInfo& signal) {
  // Shorter than the job's first, but long enough that the window its placements are learned
  // from (its second half) tells a healthy machine's own event from a level (WindowLevel): twice
  // the longest such event (the signal's persistence time), and min_samples of the machines'
  // typical interval beside an event's as many.
  const double interval = MembersInterval(group, f);
  const double window = std::max(2 * PersistenceOf(signal), SampledWindow(interval));
  return std::min(FirstWarmup(interval), std::max(kRestartWarmupShare * o_.warmup_s, 2 * window));
}

void PeerModel::Judge(uint32_t group, uint32_t f, double now, const telemetry::SignalInfo& signal) {
  if (valid_.size() < static_cast<size_t>(o_.min_peers)) return;
  const auto [centre, frame_spread] = CentreAndSpread(f, true);
  Peers& p = peers_[group][f];
  const double dt = p.updated < 0 ? 0 : now - p.updated;
  if (p.since < 0) {
    p.since = now;
    p.spread_moved = false;
    const bool restart = p.settled >= 0 && p.restart_warmup > 0;
    p.warmup = restart ? p.restart_warmup : static_cast<float>(o_.warmup_s);
    p.warmup_sized = restart;  // from the machines' intervals before the stall
    p.window_levels = false;
    // A warm-up begins (the job's start, a restart): every machine's placement as it stands,
    // taken at one moment, before Place re-centres any on the new levels, is what
    // KeepPlacementsFromBefore compares the new ones with.
    for (uint32_t m : members_[group]) {
      Track& t = TrackOf(m, f);
      WarmOf(m, f) = WarmLevels{.since = now,
                                .placed_before = t.learned > 0,
                                .before = t.log_a,
                                .has_before = t.learned > 0 && t.held_placement};
      t.confirmed = false;
      t.sat = -1;
    }
  }
  p.slow_centre = p.since == now
                      ? static_cast<float>(centre)
                      : static_cast<float>(p.slow_centre + Weight(dt, kSlowCentreHalfLife) *
                                                               (centre - p.slow_centre));
  // After the warm-up, a job-wide step (a batch-size ramp, the end of an evaluation) has ended
  // once the centre holds its new level: every machine has been scraped since, several times.
  // At a 1-s cadence that is 5 s, shorter than the smoothing's time constant, so up to a tenth of
  // the level of its lag may be left: the settling after the move covers it. The slow average
  // would take a minute more to come within a fifth of the level (70 s after a step of 95%), and
  // every machine's deviation begun then would wait for it and the settling after it. Not a stall
  // (the centre under a fifth of its level, or most of the group's features so), whose own rules
  // judge it: a checkpoint's or a hang's stillness is no level to train at. Nor over a warm-up,
  // whose placements and spread are learned until the average has settled: its centre may hold
  // while its machines still cross (a pipeline's stages leaving their init each at its own moment),
  // and the spread is learned afresh only after the last move.
  const bool group_stalled = group < group_stalls_.size() && group_stalls_[group].since >= 0;
  if (p.since == now || std::fabs(centre - p.still) > kStillShare * p.level) {
    p.still = static_cast<float>(centre);
    p.still_since = now;
  } else if (now - p.still_since >= current_within_ && p.settled == p.since && !group_stalled &&
             std::fabs(centre) >= kStalledShare * p.level) {
    p.slow_centre = static_cast<float>(centre);
  }
  if (std::fabs(centre - p.slow_centre) > kMovingShare * p.level) p.moving = now;
  // The job's first warm-up knows the machines' cadence once its window begins (by default at
  // 150 s: every machine scraped twice at up to a 75-s cadence; one not yet counts for none).
  if (!p.warmup_sized && now - p.since >= p.warmup / 2) {
    p.warmup_sized = true;
    p.warmup =
        static_cast<float>(std::max<double>(p.warmup, FirstWarmup(MembersInterval(group, f))));
  }
  // The level and the spread follow the warm-up's own rules over its first `warmup` only.
  const bool warming = now - p.since < p.warmup;
  // During the group's stall (most features stalled) the placements learned in training may or
  // may not hold (every rank spins in its collective at one power, whatever its stage drew; a hot
  // machine stays hotter), and a stalled feature's level is kept from before it.
  FollowLevel(p, centre, now, warming, group_stalled);
  FollowSpread(p, p.spread, frame_spread, dt, warming);
  // Placements are learned over the warm-up, and past it, up to kMaxWarmups warm-ups (while
  // nobody is judged yet):
  // - until the centre has settled: while machines cross a job-wide transition each at its own
  //   moment (a job that hung from its start and has just begun to train, its scrapes
  //   staggered), a level against a centre that has not crossed yet is no placement (one rank's
  //   first step of training against the hang's centre read as 1,000 times it);
  // - while the feature stalls, and until it has settled after it: a warm-up that ends in a
  //   checkpoint or an evaluation has learned its window's levels from the job's crossing into
  //   it, which its machines cross each at its own moment (the smoothed centre halfway down when
  //   one is still at its level: jobgen's seed 93,004, a host placed at 2.4 times its peers'
  //   receive rate after a restart), and the placements are learned from the training after it
  //   instead. The centre leaving a stall can rise less than a move in one frame.
  // - where its window has given levels, until the centre lies within a fifth of its level of
  //   where it stood as the window (the last half of the warm-up) began: a level that crosses
  //   slowly (a GPU's temperature, rising for minutes as a job that hung from its start begins
  //   to train) never moves by a fifth against the slow average in one frame, and an affine
  //   signal's levels against it are no placement while it crosses (a GPU 11 C cooler than its
  //   peers sits at 0.69 of their idle temperature and 0.80 of their working one: jobgen's seed
  //   121,001, where the idle one, kept over a restart, named the machine hot). A warm-up whose
  //   window a hang took has no levels: the placements from before it stand, and the centre's
  //   jump as the job resumes does not extend it.
  const auto within_settle = [&](double at) { return at >= 0 && now - at < o_.settle_s; };
  const bool stalled = p.stalled_since >= 0;
  const bool learning =
      p.settled != p.since &&
      (warming || (now - p.since < kMaxWarmups * o_.warmup_s &&
                   (stalled || within_settle(p.stall_left) || within_settle(p.moving) ||
                    (p.window_levels && MovedSince(p, centre, now - p.warmup / 2)))));
  // While placements are learned, a frame in which the centre moves (a job-wide transition that
  // the machines cross each at its own moment: a restart's first iterations, many times the
  // next, end over a minute) is no measure of the peers' spread, and the spread it raised would
  // take most of the warm-up to fall back: it is learned afresh from the first frame after the
  // centre's last move, unless followed it is already lower (at a coarse cadence the centre
  // moves in a frame or two, and the next may still catch many ranks in their crossing).
  if (learning && p.moving == now) {
    p.spread_moved = true;
  } else if (learning && p.spread_moved) {
    p.spread = std::min(p.spread, static_cast<float>(frame_spread));
    p.spread_moved = false;
  }
  // While the group's job-level stall lasts (ranks held steady in their collectives for as long
  // as the watchdog waits, a restart, a hang of the restarted job), not below what it was as the
  // stall began.
  if (group_stalled && !warming) p.spread = std::max(p.spread, p.spread_before);
  p.updated = now;
  p.current_until = now + current_within_;
  const double floor = NoiseFloor(p.quantum, p.level);
  if (!learning && p.settled != p.since) {
    // The warm-up's end: the placements it learned (or those kept from before a restart) are
    // each machine's own past to begin with.
    p.settled = p.since;
    p.judged_from = p.judged_again = now;
    KeepPlacementsFromBefore(valid_, f, p.since, now);
    for (uint32_t m : valid_) {
      Track& t = TrackOf(m, f);
      t.past = t.a;
      t.own_since = p.since;
    }
  }
  // Over the warm-up, how far the levels lie from their placements instead (what a machine's
  // own past will be at its end).
  const double own_spread = OwnSpread(f, centre, learning, p.since);
  if (p.own_spread < 0) {
    p.own_spread = static_cast<float>(own_spread);
  } else if (own_spread >= 0) {
    FollowSpread(p, p.own_spread, own_spread, dt, warming);
  }
  const bool judging = !learning && (p.moving < 0 || now - p.moving >= o_.settle_s);
  // Judged again once a job-wide move (a checkpoint, an evaluation's end) has settled: no run on
  // the feature begins while it settles, and one that was under way (a NIC whose link went down
  // as the job's traffic came back) begins again at the first frame judged after it.
  if (judging && p.moving > p.judged_again) p.judged_again = now;
  const FeatureFrame frame{
      .group = group,
      .f = f,
      .now = now,
      .signal = signal,
      .persistence = PersistenceOf(signal),
      .centre = centre,
      .floor = floor,
      .spread = std::max(static_cast<double>(p.spread), floor),
      .own_spread = p.own_spread,
      .learning = learning,
      .stalled = stalled,
      .judging = judging,
      .alike =
          group_stalled ? std::optional<double>(CentreAndSpread(f, false).first) : std::nullopt,
      .since = p.since,
      .warmup = p.warmup,
      .raw_centre = learning ? CentreOf(f, &Track::raw, true) : 0,
  };
  for (uint32_t m : valid_) {
    if (!fresh_[CellOf(m, f)]) continue;
    JudgeMachine(frame, p, m);
  }
  if (p.shared && std::none_of(valid_.begin(), valid_.end(),
                               [&](uint32_t m) { return TrackOf(m, f).run > 0; })) {
    p.shared = false;
  }
  FollowSplit(frame, p);
  if (p.placed_at < 0 || now - p.placed_at >= kPlaceEvery) {
    p.placed_at = now;
    Place(group, valid_, f, !learning, signal.level_by_position);
  }
}

PeerModel::Silence PeerModel::SilenceOf(uint32_t g, uint32_t m, double now) const {
  Silence silence;
  for (uint32_t f = 0; f < features_; ++f) {
    const Peers& p = peers_[g][f];
    const Track& t = TrackOf(m, f);
    if (p.updated < 0 || p.level <= 0 || t.fresh < 0) continue;
    if (now - t.seen <= CurrentWithin(t.interval)) return Silence{};
    silence.since = std::max(silence.since, t.seen);
    silence.interval = std::max(silence.interval, t.interval);
  }
  return silence;
}

bool PeerModel::JoinedStall(uint32_t g, uint32_t m, const GroupStall& gs) const {
  size_t stalled = 0, joined = 0;
  for (uint32_t f = 0; f < features_ && f < gs.level_before.size(); ++f) {
    const Track& t = TrackOf(m, f);
    const double level = gs.level_before[f];
    if (peers_[g][f].stalled_since < 0 || level <= 0 || t.fresh < 0) continue;
    ++stalled;
    joined += std::fabs(t.raw) < kStalledShare * level * Factor(t.placed, t.a);
  }
  return 2 * joined > stalled;
}

void PeerModel::CollectCurrent(uint32_t group, uint32_t f, double now) {
  valid_.clear();
  current_within_ = 0;
  for (uint32_t m : members_[group]) {
    const Track& t = TrackOf(m, f);
    if (t.fresh < 0) continue;
    const double within = CurrentWithin(t.interval);
    if (now - t.seen > within) continue;
    valid_.push_back(m);
    current_within_ = std::max(current_within_, within);
  }
}

double PeerModel::CentreOf(uint32_t f, float Track::*value, bool placed) {
  peer_values_.clear();
  for (uint32_t m : valid_) {
    const Track& t = TrackOf(m, f);
    peer_values_.push_back(t.*value / (placed ? Factor(t.placed, t.a) : 1.0f));
  }
  return MedianOf(peer_values_);
}

std::pair<double, double> PeerModel::CentreAndSpread(uint32_t f, bool placed) {
  const auto factor = [&](const Track& t) { return placed ? Factor(t.placed, t.a) : 1.0f; };
  const double centre = CentreOf(f, &Track::smooth, placed);
  peer_values_.clear();
  for (uint32_t m : valid_) {
    const Track& t = TrackOf(m, f);
    peer_values_.push_back(Narrow(std::fabs(t.smooth - factor(t) * centre)));
  }
  return {centre, stats::kMadToSigma * MedianOf(peer_values_)};
}

double PeerModel::OwnSpread(uint32_t f, double centre, bool learning, double since) {
  // How far each machine's level against the centre moved from its own past (relative), and how
  // much those moves scatter over the peers: small where every machine keeps its own level
  // however far apart the levels are; large while machines cross a job-wide transition each its
  // own way.
  peer_values_.clear();
  if (centre > 0) {
    for (uint32_t m : valid_) {
      const Track& t = TrackOf(m, f);
      if (!learning && t.own_since != since) continue;  // no own past yet
      const double past = learning ? t.a : t.past;
      const double move = std::fabs(t.smooth / (centre * past) - 1);
      if (t.smooth > 0 && past > 0 && std::isfinite(move)) {
        peer_values_.push_back(Narrow(move));
      }
    }
  }
  // About 0, not about their median: a move of every machine at once is no steadier a past.
  if (peer_values_.empty() || peer_values_.size() < static_cast<size_t>(o_.min_peers)) return -1;
  return stats::kMadToSigma * MedianOf(peer_values_);
}

void PeerModel::FollowSplit(const FeatureFrame& ff, Peers& p) {
  const telemetry::Worse worse = ff.signal.worse;
  if (!ff.judging || !ff.levels_hold() || worse == telemetry::Worse::kEither || ff.centre <= 0) {
    if (!p.split.empty()) p.split_ended = ff.now;
    p.split.clear();
    p.split_reported = false;
    return;
  }
  const double sign = worse == telemetry::Worse::kHigher ? 1 : -1;
  const double effect = std::log1p(o_.effect_min);
  moves_.clear();
  for (uint32_t m : valid_) {
    const Track& t = TrackOf(m, ff.f);
    if (t.own_since != ff.since || t.smooth <= 0 || t.past <= 0) continue;
    const double move = sign * std::log(t.smooth / (ff.centre * t.past));
    if (std::isfinite(move)) moves_.push_back({Narrow(move), m});
  }
  // The split's size: where the moves, the worst first, fall most between two machines, with at
  // least kSharedMachines before it, more machines after it, and min_peers after it.
  const size_t n = moves_.size();
  const size_t most = n < static_cast<size_t>(o_.min_peers)
                          ? 0
                          : std::min((n - 1) / 2, n - static_cast<size_t>(o_.min_peers));
  size_t k = 0;
  if (most >= kSharedMachines) {
    // Most frames of most groups: fewer than kSharedMachines beyond the effect threshold from
    // the median, and no split.
    std::nth_element(moves_.begin(), moves_.begin() + static_cast<std::ptrdiff_t>(n / 2),
                     moves_.end());
    const float median = moves_[n / 2].first;
    const auto beyond = static_cast<size_t>(std::count_if(
        moves_.begin(), moves_.end(), [&](const auto& v) { return v.first - median >= effect; }));
    if (beyond >= kSharedMachines) {
      std::sort(moves_.begin(), moves_.end(), std::greater<>());
      double widest = 0;
      for (size_t i = kSharedMachines; i <= std::min(most, beyond); ++i) {
        const double gap = moves_[i - 1].first - moves_[i].first;
        if (gap > widest) {
          widest = gap;
          k = i;
        }
      }
    }
  }
  double rest_centre = 0, rest_spread = 0;
  if (k > 0) {
    // The others' own moves: their median and robust spread (at least the noise floor).
    peer_values_.clear();
    for (size_t i = k; i < n; ++i) peer_values_.push_back(moves_[i].first);
    rest_centre = MedianOf(peer_values_);
    for (float& v : peer_values_) v = Narrow(std::fabs(v - rest_centre));
    rest_spread = std::max(stats::kMadToSigma * MedianOf(peer_values_), ff.floor / ff.centre);
    const double lowest = moves_[k - 1].first;
    if (lowest - rest_centre < std::max(o_.z_min * rest_spread, effect) ||
        lowest - moves_[k].first < kSplitGap * rest_spread) {
      k = 0;
    }
  }
  // Its members: those of the k beyond the threshold in their own noise scales too (a machine's
  // own scatter, as JudgeMachine's own-past reference has it: a signal that swings with the
  // step). Each is followed as a run: its evidence is the time between its frames in the split,
  // and it stays through frames out of it shorter than its run gap.
  const bool began = p.split.empty();
  for (size_t i = 0; i < k; ++i) {
    const uint32_t m = moves_[i].second;
    const Track& t = TrackOf(m, ff.f);
    const double own_noise = kMeanDeviationToSigma * t.noise / (ff.centre * t.past);
    if (moves_[i].first - rest_centre < o_.z_min * own_noise) continue;
    auto it = std::find_if(p.split.begin(), p.split.end(),
                           [&](const Peers::SplitMember& s) { return s.machine == m; });
    if (it == p.split.end()) {
      it = p.split.insert(p.split.end(), Peers::SplitMember{m, ff.now});
    } else {
      it->evidence += ff.now - it->last;
    }
    it->last = ff.now;
    if (fresh_[CellOf(m, ff.f)] && it->samples < UINT16_MAX) ++it->samples;
  }
  std::erase_if(p.split, [&](const Peers::SplitMember& s) {
    return ff.now - s.last > RunGap(TrackOf(s.machine, ff.f).interval);
  });
  if (p.split.empty()) {
    if (!began) p.split_ended = ff.now;
    p.split_reported = false;
    return;
  }
  if (began) {
    // Where the others stood as it began: the worst of the centre, its slow average, and where
    // it stood over the minutes before a persistence time ago (the members' move may reach the
    // centre first, where they are a third of the group; machines crossing a job-wide move at
    // different moments split as the centre moves; a split of a slow move begins once it is
    // large). Where a split ended within half the level's window, the last of these is the
    // worse of its own and the last split's, taken within half that window (one that ended and
    // began again, the others still risen); not the last split's whole reference, which may be
    // a moment's (a checkpoint's dip, whose writers split from the others), and not one carried
    // on from split to split for longer (checkpoints every few minutes, each a split, would
    // carry the level from before a job-wide rise for good).
    const auto worst = [&](double a, double b) {
      return a <= 0 || (b > 0 && sign * (b - a) > 0) ? b : a;
    };
    double before = CentreBefore(p, ff.now, ff.persistence);
    const double carry = o_.level_window_s / 2;
    if (p.split_ended >= 0 && ff.now - p.split_ended <= carry &&
        ff.now - p.split_before_at <= carry && worst(before, p.split_before) != before) {
      before = p.split_before;
    } else {
      p.split_before_at = ff.now;
    }
    p.split_before = Narrow(before);
    p.split_centre = Narrow(worst(worst(ff.centre, p.slow_centre), before));
    p.split_redistributed = false;
  }
  if (k == 0) return;
  // Against where the others stood as it began (worse positive): how far the nearest member
  // fell, and how far the others rose.
  const double centre_move = p.split_centre > 0 ? sign * std::log(ff.centre / p.split_centre) : 0;
  const double fell = moves_[k - 1].first + centre_move;
  const double rose = -(rest_centre + centre_move);
  if (rose >= kRedistributedShare * fell) p.split_redistributed = true;
  if (p.split_reported || p.split_redistributed || p.shared) return;
  // Reported once kSharedMachines members that do not deviate on their own (those that do are
  // named, or shared, for it) have been in it for the persistence time; each that has is listed.
  Shared sh{ff.group, ff.f, {}};
  size_t alone = 0;
  for (const Peers::SplitMember& s : p.split) {
    if (s.evidence < ff.persistence || s.samples < o_.min_samples) continue;
    const Track& t = TrackOf(s.machine, ff.f);
    if (t.run == 0) ++alone;
    Deviation d;
    d.feature = ff.f;
    d.value = t.smooth;
    d.expected = Narrow(ff.centre * t.past * std::exp(sign * rest_centre));
    d.z = Narrow((sign * std::log(t.smooth / (ff.centre * t.past)) - rest_centre) / rest_spread);
    d.effect = Narrow(t.smooth / d.expected - 1);
    d.evidence = Narrow(s.evidence);
    d.start = s.since;
    d.own_past = true;
    sh.members.push_back({s.machine, d});
  }
  if (alone < kSharedMachines) return;
  p.split_reported = true;
  shared_.push_back(std::move(sh));
}

bool PeerModel::MovedSince(const Peers& p, double centre, double from) {
  const size_t size = p.history.size();
  for (size_t back = 0; back < size; ++back) {  // newest first
    const size_t i = p.Newest(back);
    if (p.history_at[i] <= from) {
      return std::fabs(std::fabs(centre) - p.history[i]) > kMovingShare * p.level;
    }
  }
  return false;
}

double PeerModel::StillSince(const Peers& p, double centre) {
  double since = -1;
  const size_t size = p.history.size();
  for (size_t back = 0; back < size; ++back) {  // newest first
    const size_t i = p.Newest(back);
    if (p.history_at[i] < p.since) return p.since;
    if (std::fabs(std::fabs(centre) - p.history[i]) > kStillShare * p.level) break;
    since = p.history_at[i];
  }
  return since;
}

double PeerModel::CentreBefore(const Peers& p, double now, double back_s) const {
  // A ring whose newest entry is the one before `next`, an entry every kLevelEvery seconds or
  // more (one a frame at coarser cadences, none while the group is stalled): each entry stands
  // until the next, so that the last one before a stall stands for the stall, and the median is
  // over time, not entries.
  const size_t size = p.history.size();
  const double to = now - back_s;
  const double from = to - kSplitReferenceS;
  std::vector<std::pair<float, double>> held;  // value, seconds it stood in [from, to]
  double total = 0;
  double until = now;
  for (size_t back = 0; back < size && until > from; ++back) {
    const size_t i = p.Newest(back);
    const double seconds = std::min(until, to) - std::max(p.history_at[i], from);
    if (seconds > 0) {
      held.emplace_back(p.history[i], seconds);
      total += seconds;
    }
    until = p.history_at[i];
  }
  std::sort(held.begin(), held.end());
  for (const auto& [value, seconds] : held) {
    total -= 2 * seconds;
    if (total <= 0) return value;
  }
  return 0;
}

void PeerModel::FollowSpread(const Peers& p, float& spread, double frame_spread, double dt,
                             bool warming) const {
  // The spread rises within seconds (the peers scatter: a disturbance of the whole job, long
  // iterations sampled at chance phases, machines crossing a job-wide transition at different
  // moments) and falls over minutes (a job-wide stall does not shrink it). Over the warm-up,
  // whose first minutes may be anything (machines ending a first iteration many times longer
  // at different moments), it follows the last minute both ways.
  const double spread_half_life = warming                 ? p.warmup / kWarmupHalfLives
                                  : frame_spread > spread ? kSpreadRiseHalfLife
                                                          : o_.spread_half_life_s;
  spread =
      p.updated < 0
          ? static_cast<float>(frame_spread)
          : static_cast<float>(spread + Weight(dt, spread_half_life) * (frame_spread - spread));
}

void PeerModel::JudgeMachine(const FeatureFrame& ff, Peers& p, uint32_t m) {
  Track& t = TrackOf(m, ff.f);
  // The noise of each reference: the peers' spread about it, or the machine's own scatter where
  // that is larger (a signal that swings with the training step, sampled at a scrape's chance
  // phase).
  const double own_noise = kMeanDeviationToSigma * t.noise;
  const double peers_noise = std::max(ff.spread, own_noise);
  Reference peers = ReferenceOf(ff, p, t, ff.centre, Factor(t.placed, t.a), peers_noise, 0);
  if (ff.alike) {
    // Off as placed and all alike, whichever the stall left standing; the nearer one is shown.
    const Reference alike = ReferenceOf(ff, p, t, *ff.alike, 1.0, peers_noise, 0);
    const bool both = peers.deviates && alike.deviates;
    const double strength = std::min(peers.raw_strength, alike.raw_strength);
    if (std::fabs(alike.residual / alike.noise) < std::fabs(peers.residual / peers.noise)) {
      peers = alike;
    }
    peers.deviates = both;
    peers.raw_strength = strength;
  }
  const Reference own =
      ReferenceOf(ff, p, t, ff.centre, t.past, std::max(own_noise, ff.floor), ff.own_spread);
  // Where a signal is worse either way, a machine that returns toward the typical level from
  // an odd one (the level it kept for minutes, or the placement it was learned at: one learned
  // while a benign event of its own took a quarter of the warm-up, or a level a healthy machine
  // leaves) is no new fault, against its own past or its placement.
  const auto away = [&](const Reference& r) {
    return ff.signal.worse != telemetry::Worse::kEither ||
           std::fabs(t.smooth - ff.centre) > std::fabs(r.expected - ff.centre);
  };
  if (!away(peers)) {
    peers.deviates = false;
    peers.raw_strength = 0;
  }
  // A machine has an own past once it has been judged since the warm-up's end (one that joins
  // later: from its first sample on), and only one that a float holds.
  const bool has_past = !ff.learning && t.own_since == ff.since && t.past > 0 &&
                        std::isfinite(t.past) && std::isfinite(own.expected);
  const bool own_deviates =
      has_past && ff.levels_hold() && ff.own_spread > 0 && away(own) && own.deviates;
  const bool deviates = peers.deviates || own_deviates;
  if (ff.learning) {
    t.at_placement = ff.now;
  } else if (!t.confirmed && ff.levels_hold()) {
    t.sat = !SitsAtPlacement(t, ff.centre) ? -1.0f : t.sat < 0 ? 0.0f : t.sat + t.interval;
    if (t.sat >= 0) t.at_placement = ff.now;
    t.confirmed = t.sat >= ff.persistence;
  }
  // What the alert reports: the peers, unless only its own past says it deviates.
  const bool shown_own = own_deviates && !peers.deviates;
  const Reference& shown = shown_own ? own : peers;
  t.expected = static_cast<float>(shown.expected);
  t.z = static_cast<float>(shown.residual / shown.noise);
  t.effect = static_cast<float>(shown.residual / shown.scale);
  t.own_past = shown_own;
  scored_.push_back({m, ff.f, static_cast<float>(peers.residual / peers.noise)});
  const bool stepped = Beyond(t.raw - t.prev_raw, shown.noise, shown.scale);
  FollowRun(ff, p, m, t, deviates, stepped,
            std::max(peers.raw_strength, own_deviates ? own.raw_strength : 0.0));
  WarmLevels& warm = WarmOf(m, ff.f);
  // One that joined since the warm-up began learns its placement from it as those there at its
  // start do. Where it joined in the warm-up's first quarter (scrapes are staggered: at 15 s the
  // machines appear over its first 15 s), its levels before the placement's window are theirs
  // too, and its placement is no more confirmed than theirs (Relearn). One that came minutes
  // later has held no level long enough before that window: its placement is never learned again
  // (a flaky machine that joins at 120 s slow, runs at its peers' level over the window and is
  // slow again after it would be placed again at its slow level).
  if (ff.learning && warm.since != ff.since) {
    warm = WarmLevels{.since = ff.since};
    if (ff.now - ff.since <= ff.warmup * kJoinedAtStartShare) {
      t.confirmed = false;
      t.sat = -1;
    }
  }
  LearnPlacement(ff, m, t, warm, deviates);
  // Its own scatter: over the warm-up, that of its second half only, as for its placement (the
  // first minutes, a restart's first iteration many times longer, are no scatter), the last
  // minute weighing most; after it, while it does not deviate.
  if (ff.learning && ff.now - ff.since >= ff.warmup / 2) {
    if (warm.scattered < UINT16_MAX) ++warm.scattered;
    FollowNoise(t, std::max(1.0 / warm.scattered,
                            warm_noise_weight_(t.interval, ff.warmup / kWarmupHalfLives)));
  } else if (!ff.learning && t.run == 0) {
    FollowNoise(t, noise_weight_(t.interval, o_.spread_half_life_s));
  }
  // Its own past: its placement when it joins after the warm-up, then its level against the
  // centre, followed while it does not deviate.
  if (ff.learning) return;
  if (t.own_since != ff.since) {
    t.past = t.a;
    t.own_since = ff.since;
  } else if (!deviates && ff.levels_hold() && ff.centre > 0 && t.smooth > 0) {
    const double level = t.smooth / ff.centre;
    if (!std::isfinite(t.past) || level > std::numeric_limits<float>::max()) return;
    t.past = static_cast<float>(t.past +
                                past_weight_(t.interval, o_.own_half_life_s) * (level - t.past));
  }
}

double PeerModel::PersistenceOf(const telemetry::SignalInfo& signal) const {
  return signal.persistence > 0 ? signal.persistence : o_.persistence_s;
}

bool PeerModel::Beyond(double residual, double noise, double scale) const {
  return std::fabs(residual) >= o_.z_min * noise && std::fabs(residual) >= o_.effect_min * scale;
}

PeerModel::Reference PeerModel::ReferenceOf(const FeatureFrame& ff, const Peers& p, const Track& t,
                                            double centre, double factor, double noise,
                                            double relative_noise) const {
  Reference r;
  r.expected = factor * centre;
  r.residual = t.smooth - r.expected;
  r.scale = EffectScale(r.expected, factor, p.level, ff.floor);
  r.noise = std::max(noise, relative_noise * r.scale);
  const auto passes = [&](double x) {
    return WorseWay(ff.signal.worse, x) && Beyond(x, r.noise, r.scale);
  };
  r.deviates = passes(r.residual);
  const double raw_residual = t.raw - r.expected;
  // Evidence grows at full rate from twice the threshold in noise scales, at half rate at it;
  // a strong deviation's faster still, unless the signal's own persistence says how long its
  // benign events last, whatever their strength.
  if (!passes(raw_residual)) return r;
  r.raw_strength =
      std::min(1.0, std::fabs(raw_residual) / (kFullStrengthThresholds * o_.z_min * r.noise));
  // A feature whose expected value and usual level are nothing (a pause counter at 0) has no
  // strength to speak of: its effect is against its resolution.
  if (r.raw_strength >= 1 && o_.strong_effect > 0 && ff.signal.persistence <= 0 && p.level > 0 &&
      r.scale > ff.floor) {
    const double rate = std::fabs(raw_residual) / (o_.strong_effect * r.scale);
    r.raw_strength = rate > kMaxEvidenceRate ? kMaxEvidenceRate : rate > 1 ? rate : 1.0;  // NaN: 1
  }
  return r;
}

void PeerModel::FollowRun(const FeatureFrame& ff, Peers& p, uint32_t m, Track& t, bool deviates,
                          bool stepped, double strength) {
  // A run lasts while the smoothed value deviates; its evidence grows between its samples
  // whose own value deviates too (strength > 0: so that neither the smoothing's tail after a
  // short event nor a gap in the data lengthens it), weighted by their strength.
  if (!deviates) t.kept_away = false;
  if (ff.judging && !deviates) {
    t.named_off = std::numeric_limits<float>::quiet_NaN();
    t.named_since = -1;
  }
  if (!ff.judging || !deviates) {
    EndRun(t);
    return;
  }
  if (strength <= 0) {
    t.kept_away = false;
    return;
  }
  const double clock = PauseClock(ff.group, ff.f);
  if (ExtendRun(t.evidence, t.run, t.last_deviating, ff.now, RunInterval(t), strength,
                clock - t.paused_at, t.late)) {
    t.start = ff.now;
    t.deferred = false;
    t.took = 0;
    // A machine whose placement a restart kept, not back at it since the warm-up's window its
    // new level was learned from, deviating at full strength: its run goes back into that window
    // as far as its levels there lay off the placement as far (KeptAwaySince).
    if (t.kept_away && strength >= 1) {
      const auto [since, levels] = KeptAwaySince(ff, m, t);
      if (levels > 0) {
        t.start = since;
        t.evidence = static_cast<float>(std::min(ff.now - since, ff.persistence));
        t.run = static_cast<uint16_t>(std::min<size_t>(levels + 1, UINT16_MAX));
      }
    }
  }
  t.kept_away = false;
  t.paused_at = static_cast<float>(clock);
  t.lag = ff.signal.duration && t.raw > 0 ? t.raw : 0;
  if (t.shared || Proven(t) < ff.persistence || t.run < o_.min_samples) return;
  // At least half the persistence: evidence grows at most twice as fast as time.
  if (t.took <= 0) t.took = static_cast<float>(ff.now - t.start);
  // Once per run: a fault that flaps at the cadence steps at every sample that deviates.
  if (stepped && !t.deferred) {
    t.deferred = true;
    return;
  }
  if (Relearn(ff, m, t)) return;
  // Named: the placement stands as what the machine is named against (held, as far as a restart
  // is concerned), however long ago its level last sat at it.
  t.at_placement = ff.now;
  // Others alongside: runs that started within the time this one took to have its evidence (a
  // strong one's is shorter than the persistence), all under way when it had.
  Trigger(p, ff.group, ff.f, m, ff.persistence, std::min<double>(ff.persistence, t.took));
}

std::pair<double, size_t> PeerModel::KeptAwaySince(const FeatureFrame& ff, uint32_t m,
                                                   const Track& t) const {
  const WarmLevels& warm = WarmOf(m, ff.f);
  // Away as a deviation at full strength (kFullStrengthThresholds of the noise scales it is judged
  // in now, its noise against the effect's scale being effect / z; and the effect threshold),
  // relative to the placement, the window's levels read as their share off it, the way it
  // deviates now; each within a run's gap (and the window's spacing) of the next, the newest of
  // now: a machine held or silent in between has no run across.
  if (t.z == 0 || !std::isfinite(t.effect / t.z)) return {ff.now, 0};
  const double threshold =
      std::max(o_.effect_min, kFullStrengthThresholds * o_.z_min * std::fabs(t.effect / t.z));
  const double gap = RunGap(t.interval) + ff.warmup / (2.0 * kWarmSamples);
  double since = ff.now;
  size_t levels = 0;
  for (size_t k = 0; k < warm.count; ++k) {  // newest first
    const size_t i = (warm.next + kWarmSamples - 1 - k) % kWarmSamples;
    const double at = warm.since + warm.at[i];
    if (warm.at[i] < warm.from || since - at > (k == 0 ? RunGap(t.interval) : gap)) break;
    const double off = std::expm1(warm.values[i] - t.log_a);
    if (!(t.z > 0 ? off >= threshold : off <= -threshold)) break;
    since = at;
    ++levels;
  }
  return {since, levels};
}

bool PeerModel::PlacedAt(uint32_t f, uint32_t m, double level) const {
  const double tolerance = PlacementTolerance();
  size_t placed = 0;
  for (uint32_t o : valid_) {
    if (o != m && std::fabs(TrackOf(o, f).log_a - level) <= tolerance &&
        ++placed >= kSharedMachines) {
      return true;
    }
  }
  return false;
}

size_t PeerModel::LevelsBeforeWindow(const WarmLevels& warm, float* out, double from) {
  size_t n = 0;
  for (size_t k = 0; k < warm.prior_count; ++k) {
    const size_t i = warm.PriorOldest(k);
    if (warm.prior_at[i] >= from) out[n++] = warm.prior[i];
  }
  for (size_t k = 0; k < warm.count; ++k) {
    const size_t i = warm.Oldest(k);
    if (warm.at[i] >= from && warm.at[i] < warm.from) out[n++] = warm.values[i];
  }
  return n;
}

bool PeerModel::Relearn(const FeatureFrame& ff, uint32_t m, Track& t) {
  // A machine whose level has not once sat at the placement its warm-up learned since the
  // warm-up ended, back at the level it held just before the window the placement was learned
  // from and still held at the window's first sample: the window learned events of its own that
  // began inside it (a cron job and a noisy neighbour, or a network burst and the smoothing's
  // tail, over most of it), not its level. It is learned again where it stands instead of being
  // named. Not a machine at a level it did not hold before (a fault that began in the window's
  // last minutes, alone or with others), nor one whose window began at another level than the
  // one before it (a fault that went and comes back, a slow start) unless it was back at that
  // level inside the window between events of its own and that level is the typical machine's or
  // the placement is at a level no 3 others are placed at (below), nor during its group's stall.
  // Nor at a level worse than the typical machine's, beyond the effect threshold, on a signal
  // with a worse side, where no other machine sits (within the threshold): a fault back at a
  // level held across the window's start (a NIC that flapped until 160 s and goes down again at
  // 270 s) is that; a stage's or a slower NIC's level, which others share, is no fault. Unless the
  // placement itself lies on the better side, beyond the threshold, where fewer than
  // kSharedMachines others are placed: a fault moves such a signal to its worse side only, and
  // the flapping NIC's window held its healthy level, which its peers share; a window that
  // placed a slower NIC alone at 1.7 times its peers' receive rate learned network bursts of its
  // own over most of it (a black-box reviewer's sweep, eval/detect_warmup.py's `stress` kind:
  // 14 of 18 such fault-free jobs named). The cost: a faster machine alone at its own level,
  // down before the window and again after it at the level it held before, is missed.
  // Or, whatever it held before the window, a machine back at the level most of its group is
  // placed at from a placement of its own on the better side (BackFromTheBetterSide).
  if (t.confirmed || !ff.levels_hold() || ff.centre <= 0 || t.smooth <= 0) return false;
  const double level = std::log(t.smooth / ff.centre);
  const WarmLevels& warm = WarmOf(m, ff.f);
  if (warm.since != ff.since || !std::isfinite(level) || std::fabs(level) > kMaxRelearnedLevel) {
    return false;
  }
  const double tolerance = PlacementTolerance();
  const bool worse = BeyondOnWorseSide(ff.signal.worse, level, tolerance);
  const auto shared = [&] {
    for (uint32_t o : valid_) {
      const double s = TrackOf(o, ff.f).smooth;
      if (o != m && s > 0 && std::fabs(std::log(s / ff.centre) - level) <= tolerance) return true;
    }
    return false;
  };
  // Placed on the better side, where no population is.
  const bool raised_alone =
      BeyondOnWorseSide(ff.signal.worse, -t.log_a, tolerance) && !PlacedAt(ff.f, m, t.log_a);
  if (worse && !shared() && !raised_alone) return false;
  float before[kPriorSamples + kWarmSamples];
  const size_t n = LevelsBeforeWindow(warm, before);
  int first = -1;  // the window's first sample
  for (size_t k = 0; k < warm.count && first < 0; ++k) {
    const size_t i = warm.Oldest(k);
    if (warm.at[i] >= warm.from) first = static_cast<int>(i);
  }
  const size_t just_before = std::min(n, kJustBefore);
  if (BackFromTheBetterSide(ff, m, t, level,
                            std::span<const float>(before + n - just_before, just_before))) {
    LearnAgain(t, level);
    return true;
  }
  if (n == 0 || first < 0) return false;
  const double held = MedianOfFirst(before, n);
  // Where that level is the typical machine's (within the threshold of the centre), a window
  // that began away from it will do if the machine was back at it inside the window and left it
  // again: events of its own on both sides (two network bursts, the first over the window's
  // start). Not one that left its level once, late in the window, for the typical one (a fault
  // of a machine whose own level is not the typical one, after a phase of the whole group at one
  // level before the window that made it look typical there). The same for a machine alone at
  // its level where its placement is at a level no population is placed at (PlacedAt): a fault
  // that went and came back leaves the level its peers are placed at, the one it flapped from.
  const auto at_held = [&](uint8_t i) { return std::fabs(warm.values[i] - held) <= tolerance; };
  float back = std::numeric_limits<float>::infinity();  // when first at that level in the window
  for (uint8_t i = 0; i < warm.count; ++i) {
    if (warm.at[i] >= warm.from && at_held(i)) back = std::min(back, warm.at[i]);
  }
  bool left_again = false;
  for (uint8_t i = 0; i < warm.count; ++i) {
    if (warm.at[i] > back && !at_held(i)) left_again = true;
  }
  const bool typical = std::fabs(held) <= tolerance && std::fabs(level) <= tolerance;
  if (!(std::fabs(level - held) <= tolerance &&
        ((raised_alone && std::fabs(held) > tolerance) || at_held(static_cast<uint8_t>(first)) ||
         ((typical || !PlacedAt(ff.f, m, t.log_a)) && left_again)))) {
    return false;
  }
  LearnAgain(t, level);
  return true;
}

bool PeerModel::BackFromTheBetterSide(const FeatureFrame& ff, uint32_t m, const Track& t,
                                      double level, std::span<const float> just_before) const {
  // A placement on the better side of a signal with a worse side, beyond the tolerance, that no
  // population shares (fewer than kSharedMachines others placed there: no stage, no class of
  // hardware), in a group most of whose machines are placed at the typical level, of a machine
  // now back at that level, which it held over the first half of the window: the window learned
  // an event of its own that began in its second half and raised it (a network burst over the
  // window's last minute, its partial rate after it making a tie that no level is learned from),
  // not its level. A fault moves such a signal to its worse side only. A machine of a level of
  // its own above the others' (a faster NIC, one to three of them) that falls to the typical level
  // is a fault: its window was at its own level over most of it. Nor where the typical level is a
  // minority's (a pipeline's stages): a heavier stage's machine slowed to a lighter stage's level
  // is a fault. Reviewers' sweeps (session 67) of faster machines falling to the typical level
  // from 45 s before the warm-up's end to 90 s after it: with the window unchecked 25 of 3,240
  // were named (2,095 before the rule), with its first sample only 1,236 of 2,592 (2,154 before:
  // an event of the machine's own over the window's first samples made it look typical there),
  // with its first half 2,095 and 2,104; an event of its own over exactly the window's first half,
  // then a fault within 90 s of the warm-up's end, is missed (docs/detect.md).
  if (ff.signal.worse == telemetry::Worse::kEither) return false;
  const double tolerance = PlacementTolerance();
  const double sign = ff.signal.worse == telemetry::Worse::kLower ? 1 : -1;
  if (!(sign * t.log_a > tolerance && std::fabs(level) <= tolerance) ||
      PlacedAt(ff.f, m, t.log_a)) {
    return false;
  }
  size_t typical = 0;
  for (uint32_t o : valid_) {
    if (std::fabs(TrackOf(o, ff.f).log_a) <= tolerance) ++typical;
  }
  if (2 * typical <= valid_.size()) return false;
  // The window's levels, oldest first (smoothed and raw).
  const WarmLevels& warm = WarmOf(m, ff.f);
  float values[kWarmSamples], raw[kWarmSamples];
  size_t n = 0;
  for (size_t k = 0; k < warm.count; ++k) {
    const size_t i = warm.Oldest(k);
    if (warm.at[i] >= warm.from) {
      values[n] = warm.values[i];
      raw[n++] = warm.raw[i];
    }
  }
  if (n == 0) return false;
  const auto at_level = [&](float v) { return std::fabs(v - level) <= tolerance; };
  // The first half of them at the level it is at now.
  if (std::all_of(values, values + (n + 1) / 2, at_level)) return true;
  // Or the better side's level came and went inside the window, as an event of the machine's own
  // does: not on the better side over its last kJustBefore smoothed levels before the window (the
  // median of all of them reaches back into the job's init), on it (beyond the tolerance from the
  // centre) over at most half the window's raw values (a burst as long as the persistence, at
  // 15 s 4 values and a partial rate), and back at the level it is at now over the window's
  // last kJustBefore raw values (after the smoothing's tail). Jobgen's seeds 87,101 and 97,101,
  // fault-free at 15 s, 1,024 machines: a host's network burst of about 55 s over the window's
  // start or middle, the window's first half kept off the level by the burst, a glitch or the
  // job's ramp, each named 4-40 minutes later. A faster machine's own level that it held from
  // just before the window until a fault in its second half (a job's init ending just before
  // the window, a dip or a job-wide phase there) lies on the better side over more than half
  // of it (a reviewer's cases, AFasterMachineWhoseInitEndsJustBeforeItsWindowFallingInItIsNamed),
  // and one that fell in the window's last kJustBefore samples or after it is not back
  // (AMachineRaisedInTheWindowForGoodFallingIsNamed).
  const auto not_better = [&](float v) { return sign * v <= tolerance; };
  if (n <= kJustBefore || just_before.empty() ||
      !std::all_of(just_before.begin(), just_before.end(), not_better)) {
    return false;
  }
  const auto better = static_cast<size_t>(std::count_if(raw, raw + n, std::not_fn(not_better)));
  return 2 * better <= n && std::all_of(raw + n - kJustBefore, raw + n, at_level);
}

void PeerModel::LearnAgain(Track& t, double level) {
  SetPlacement(t, static_cast<float>(level));
  t.past = t.a;
  t.confirmed = true;
  // Placed or not is decided again (Place): a machine alone at the level learned again, odd
  // among peers that share one, is compared with them as they are, as from its first sample.
  t.placed = false;
  EndRun(t);
}

float PeerModel::WindowLevel(const FeatureFrame& ff, uint32_t m, float* smoothed, const float* raw,
                             size_t n, float before, const WarmLevels& warm) const {
  // The smoothing stretches an event of the machine's own by its tail: a network burst of 47 s
  // in a window of 150 s at a 15 s cadence was in 4 of its 10 raw values and, with the tail, in 6
  // of its 10 smoothed ones, whose median was then the burst's. The raw values show the event as
  // it was: one run of values away from their median (beyond the tolerance), fewer than those
  // near it, and those at least min_samples (a deviation's least evidence; at a 60 s cadence the
  // window holds 3 values). Where the smoothed values' median lies beyond the tolerance from the
  // median of those near raw values, the event took it, and the latter is the level. Anything
  // else keeps the smoothed values' median, the more precise: no value away (no event), values
  // away in several runs (a signal that swings within a step, sampled at chance phases; two
  // events), or a median the event did not move (a spike of one sample, whose tail shifts the
  // smoothed values by less). A raw value not above 0 (a rate that fell to 0) is a level below
  // every other (-inf).
  // In a tie, half the values near their level and half away in one run that ends inside the
  // window, that level is the machine's where it also held it just before the window (`before`, a
  // raw level; NaN where unknown), that level is a population's (kSharedMachines others placed
  // there: a pipeline's stage, a class of hardware, the typical machines) and the run's is none: an
  // event of its own came and went, from that level and back to it (a cron job of 60 s, 5 of the 10
  // raw values of a window at 15 s, partial rates at both its ends included; a network burst that
  // began just after the window's start, its partial rate the window's first value, the level
  // before it the one held just before the window: jobgen's seed 111,101, where until session 78
  // the run had to lie between near values inside the window). Not a fault that began in the
  // window and is still there at its end, nor one that began before the window and let go of the
  // machine in its middle, nor two events of its own at the window's two ends (each leaves another
  // level just before the window or at its end); nor, in a job whose machines sit at several levels
  // (a pipeline's stages), a fault there before the window that let go of the machine in its
  // middle, back at its stage's level, nor, in a job of stages of one or two machines, one whose
  // fault's level no others share. A handful of machines are in events of their own at any moment
  // in a job of a thousand: one other machine at the run's level is no population. Of an even
  // count's two middle values the upper one stands on a majority; the lower one (that level where
  // the event lay above it) in a tie, or on a majority unless the upper one's band held every value
  // (no value lies away) or the run lies at the window's start and the level kept was not held just
  // before it (a fault that began in the window:
  // AFaultBegunInTheWindowJustAfterTheJobSteppedIsNamed). An event's partial rate can be the upper
  // middle value, its band holding it and the highest of the machine's own values, no one run
  // (jobgen's seed 133,101, where the smoothed median between event and level was learned); in the
  // mirror case, the event below, the upper middle value's band held the majority already. An odd
  // count has one middle value, and there the partial rate still leaves the smoothed median.
  const float level = MedianOfFirst(smoothed, n);
  float sorted[kWarmSamples];
  std::copy(raw, raw + n, sorted);
  const float upper = MedianOfFirst(sorted, n);
  const float lower = n % 2 == 0 ? *std::max_element(sorted, sorted + n / 2) : upper;
  const double tolerance = PlacementTolerance();
  float kept[kWarmSamples], away[kWarmSamples];
  const float middles[] = {upper, lower};
  const size_t tries = lower != upper ? 2 : 1;  // the lower one only where it differs
  size_t count = 0, first = n, last = 0;
  bool every_near = false;  // the upper middle value's band holds every value: no event
  const auto split = [&](float around) {  // kept: within the tolerance of `around`
    count = 0, first = n, last = 0;
    for (size_t i = 0; i < n; ++i) {
      if (std::fabs(raw[i] - around) <= tolerance) {
        kept[count++] = raw[i];
      } else {
        away[i - count] = raw[i];
        first = std::min(first, i);
        last = i;
      }
    }
  };
  for (size_t k = 0; k < tries; ++k) {
    // Split around the middle value. In a tie the middle is the near values' outermost, and the
    // band about it reaches past their own scatter on the event's side and short of it on the
    // other (a host's network burst of 58 s over 5 of its 10 raw values, its own level scattered
    // over 0.10 in log: the value farthest from the event fell out of the band, and the event's
    // level was learned). So where the split kept fewer than half the values, it is drawn once
    // more around the median of those it kept, and that one stands if it is a tie. Only then:
    // outside a tie the second split can join an interval's partial rate to a fault that began in
    // the window and make it the majority (peer_test.cc,
    // ALevelOtherMachinesShareIsNoEventOfTheMachinesOwn); and a first split that kept more than
    // half stands as it is (the second can drop an event's partial rate at its end from the near
    // values and make a tie whose run, at the window's start, is an event that began before the
    // window, which no tie learns from, since the level held just before the window is the event's:
    // AnEventOverTheWindowsStartEndingWithAPartialRateIsNoPlacement).
    split(middles[k]);
    if (count > 0 && 2 * count < n) {
      split(MedianOfFirst(kept, count));
      if (2 * count != n) split(middles[k]);
    }
    if (k == 0) every_near = count == n;
    const bool one_run = count < n && last - first + 1 == n - count;
    const bool tie = 2 * count == n;
    if (!one_run || 2 * count < n || count < static_cast<size_t>(o_.min_samples)) continue;
    const float near = MedianOfFirst(kept, count);
    const bool held_before = std::fabs(near - before) <= tolerance;  // false where `before` is NaN
    // The lower middle value's majority, outside a tie: not where the upper one's band held every
    // value (no value lies away), nor where the run away lies at the window's start and the level
    // kept was not held just before it (a fault that began in the window, its first, partial rate
    // joined to its level about the lower middle value, the machine's own level the run: where the
    // job's level stood still LevelBeforeAStep names that step first, but not after a job-wide
    // move just before the window).
    if (k > 0 && !tie && (every_near || (first == 0 && !held_before))) continue;
    if (tie && !(last + 1 < n && held_before && PlacedAt(ff.f, m, near) &&
                 !PlacedAt(ff.f, m, MedianOfFirst(away, n - count)))) {
      continue;
    }
    return std::fabs(level - near) <= tolerance ? level : near;
  }
  const std::optional<float> between = LevelBetweenEvents(ff, m, raw, n, warm);
  return between && std::fabs(level - *between) > tolerance ? *between : level;
}

std::optional<float> PeerModel::LevelBetweenEvents(const FeatureFrame& ff, uint32_t m,
                                                   const float* raw, size_t n,
                                                   const WarmLevels& warm) const {
  const double tolerance = PlacementTolerance();
  const auto near = [&](float a, float b) { return std::fabs(a - b) <= tolerance; };
  float prior[kPriorSamples + kWarmSamples];
  const size_t known = LevelsBeforeWindow(warm, prior);
  if (n <= kJustBefore || known == 0) return std::nullopt;
  const float earlier = MedianOfFirst(prior, known);  // the level held before the window
  // The densest level of the values in `among` (those within the tolerance of the value with the
  // most others within it; the earliest such value in a tie) and how many lie within it.
  const auto densest = [&](const bool* among) {
    size_t best = n, most = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!among[i]) continue;
      size_t close = 0;
      for (size_t j = 0; j < n; ++j) close += among[j] && near(raw[i], raw[j]);
      if (close > most) best = i, most = close;
    }
    float kept[kWarmSamples];
    size_t count = 0;
    for (size_t j = 0; best < n && j < n; ++j) {
      if (among[j] && near(raw[j], raw[best])) kept[count++] = raw[j];
    }
    return std::pair{count > 0 ? MedianOfFirst(kept, count) : 0.0f, count};
  };
  bool all[kWarmSamples], in[kWarmSamples], away[kWarmSamples];
  std::fill(all, all + n, true);
  const float centre = densest(all).first;
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    in[i] = near(raw[i], centre);
    away[i] = !in[i];
    count += in[i];
  }
  const auto [elsewhere, other_count] = densest(away);
  // Back at the level by the window's end: all its last kJustBefore values but at most one (the
  // last of an event of its own that ended there: the reviewer's warm-up sweep,
  // eval/detect_warmup.py, `main` 79).
  const auto back = static_cast<size_t>(std::count(in + n - kJustBefore, in + n, true));
  if (count < static_cast<size_t>(o_.min_samples) || other_count >= count ||
      back + 1 < kJustBefore || !near(earlier, centre) ||
      (other_count > 0 && PlacedAt(ff.f, m, elsewhere))) {
    return std::nullopt;
  }
  return centre;
}

std::optional<float> PeerModel::LevelBeforeAStep(const FeatureFrame& ff, uint32_t m,
                                                 const float* raw, size_t n, float before,
                                                 std::span<const float> steady) const {
  // A fault that begins in the window's first half (a NIC that renegotiates down at 170 s) holds
  // most of its values: their median is the fault's level, and a machine placed there is never
  // named (a black-box reviewer's sweep, eval/detect_warmup.py: 162 of 193 such faults missed). The
  // machine held another level before the window since the group's centre stood where it stands
  // (the median of the levels the ring let go since then) and left it for good (the window's last
  // min_samples raw values or more at the new level, or beyond the level it left on that side: an
  // event of its own on top of the fault over the window's end, or ending just before it, left
  // fewer than min_samples at the new level until session 90; the sweep's `main` 42, 183, 330)
  // while the centre held still: that level is its placement, and it is named after the warm-up.
  // Where the centre stands is read back from now, not from where it last moved by a twentieth of
  // the level: a centre that converges slowly crosses that line late in the warm-up, though it has
  // stood within a twentieth of its end for minutes (the sweep's `main` 390: its first minutes 5%
  // above its machines' median, the line crossed at 136 s, leaving too few levels before the
  // window). A machine's level that steps while the job's stands is the machine's own change; one
  // that steps as the job moves (its init ending, iterations speeding up after it, a pipeline's
  // stages settling each at its own level) may be the job's doing, and the window's median stands.
  // Whatever the machine did between that level and the run (an event of its own over the window's
  // start, at the fault's level or another, or the fault's level itself from before the window: a
  // fault that continues an event of its own), the level it held is the one it left. Until session
  // 85 it had to be back at that level just before the window (the raw values there), until session
  // 88 there or just before the run: an event of its own that the fault continued, or one at
  // another level before the run, kept the rule from applying (on the sweep, 52 of 146 faults then
  // missed were named in session 85, 48 of 92 in session 88). A step to the worse side, which is
  // either way on a signal worse either way (CPU idle: a host busier for good, a runaway process
  // beside the trainer, or idler, its data loader's workers dead; GPU utilisation and power). Until
  // session 85 none on those, for fear of a host's own events, which move it both ways: one that
  // lasts to the window's end places the machine at the level it comes back to. Not a step to the
  // better side on the others (a rebalanced shard, more traffic), which a fault does not make, nor
  // one to a level kSharedMachines others are placed at (a pipeline's stage, a class of hardware:
  // an event of its own that ends as the window begins, back among its peers, jobgen's seed
  // 122,101's cron job on one host over the minute before it) unless every level it held since the
  // centre stood still, up to the window, was the one it left (a machine alone at 1.25 of its
  // peers' level falling to theirs in the window: 10 of the sweep's 44 misses in session 88), or
  // the first of them was, and the level just before the values that left it (an event of its own
  // came and went between: since session 90, the sweep's eq 7026, 7098, 7189, main 250), nor
  // on a signal whose level goes by position (a temperature, which the load re-ranks). What it
  // assumes: no healthy machine's level moves for good beyond the effect threshold, alone, to the
  // worse side (either way on CPU idle, GPU utilisation and power) while its job's level holds
  // still in its first minutes; one that does is named once.
  if (ff.signal.level_by_position || n <= static_cast<size_t>(o_.min_samples) || n < kJustBefore ||
      std::isnan(before) || steady.size() < kJustBefore) {
    return std::nullopt;
  }
  const double tolerance = PlacementTolerance();
  const auto near = [&](float a, float b) { return std::fabs(a - b) <= tolerance; };
  float sorted[kPriorSamples + kWarmSamples];
  std::copy(steady.begin(), steady.end(), sorted);
  const float earlier = MedianOfFirst(sorted, steady.size());
  float last[kJustBefore];
  std::copy(raw + n - kJustBefore, raw + n, last);
  const float after = MedianOfFirst(last, kJustBefore);
  if (!BeyondTheWorseWay(ff.signal.worse, after - earlier, tolerance)) return std::nullopt;
  // Where the values that left it for good begin: those to the window's end at the level they end
  // at, or beyond the level left the worse way on that side (an event of its own on top of a
  // fault, over the window's end or ending just before it; a counter's partial rate where it
  // began).
  const auto left = [&](float v) {
    return near(v, after) || ((v - earlier) * (after - earlier) > 0 &&
                              BeyondTheWorseWay(ff.signal.worse, v - earlier, tolerance));
  };
  size_t k = n;
  while (k > 0 && left(raw[k - 1])) --k;
  const auto at_earlier = [&](float v) { return near(v, earlier); };
  // To a level others are placed at, the level it left must be the machine's own: held over all
  // the time before the window and just before it, or first in that time and again inside the
  // window, just before the values that left it (an event of its own came and went between; not
  // a window whose values all lie at the new level, read against a few levels before it: jobgen's
  // seed 122,101, a host 13% idler than its peers, at their level in the three levels between the
  // job's init and the window, a cron job of its own among them).
  const auto own_level = [&] {
    return (at_earlier(before) && std::all_of(steady.begin(), steady.end(), at_earlier)) ||
           (k > 0 && at_earlier(steady.front()) && at_earlier(raw[k - 1]));
  };
  if (n - k < static_cast<size_t>(o_.min_samples) || (PlacedAt(ff.f, m, after) && !own_level())) {
    return std::nullopt;
  }
  return earlier;
}

std::optional<float> PeerModel::LevelItCameBackTo(const FeatureFrame& ff, uint32_t m,
                                                  const float* raw, size_t n,
                                                  std::span<const float> steady) const {
  // A machine's events of its own can take most of its window (two of a host's, 50-70 s each, in
  // a window of 150 s, and the seconds before it): the window's median lies at one of theirs or
  // between them, where it is placed and then named at its own level (the reviewer's warm-up
  // sweep, eval/detect_warmup.py: 8 of its 12 fault-free jobs named until session 91). Where
  // neither event is the majority's, nor both together one run (WindowLevel's other rules), the
  // time before the window tells: the level the machine held first since its job's level stood
  // still, and holds again at the window's end, having left it once or twice between, is its own.
  // Not where it left it for the typical level: a fault that went and came back leaves that one
  // (a NIC down until 160 s, up, and down again from 270 s: the same values as a host alone at
  // 0.8 of its peers' level whose events took it to theirs). Nor where it came back to a level
  // kSharedMachines others are placed at (a faster machine's init at the typical level ending
  // just before the window, falling back to it inside: a fault). Nor where the window ends
  // elsewhere (a fault that began in it and holds). What it assumes: a healthy machine's level
  // over its job's first steady minutes (the oldest kJustBefore levels the ring still holds since
  // then) is its own, not an event of its own that it meets again by chance at the window's end;
  // a signal that swings between levels, sampled at chance phases, leaves it more than
  // kExcursions times.
  if (ff.signal.level_by_position || n == 0 || steady.size() < kJustBefore) return std::nullopt;
  float first[kJustBefore];
  std::copy(steady.begin(), steady.begin() + kJustBefore, first);
  const float level = MedianOfFirst(first, kJustBefore);
  const double tolerance = PlacementTolerance();
  const auto at = [&](float v) { return std::fabs(v - level) <= tolerance; };
  if (!std::all_of(first, first + kJustBefore, at) || !at(raw[n - 1]) || PlacedAt(ff.f, m, level)) {
    return std::nullopt;
  }
  const size_t known = steady.size();
  float kept[kWarmSamples], run[kPriorSamples + kWarmSamples];
  size_t count = 0, left = 0, in_run = 0;
  for (size_t i = 0; i < known + n; ++i) {
    const float v = i < known ? steady[i] : raw[i - known];
    if (!at(v)) {
      left += in_run == 0;
      run[in_run++] = v;
      continue;
    }
    if (in_run > 0 && std::fabs(MedianOfFirst(run, in_run)) <= tolerance) return std::nullopt;
    in_run = 0;
    if (i >= known) kept[count++] = v;
  }
  if (left == 0 || left > kExcursions) return std::nullopt;
  return MedianOfFirst(kept, count);
}

bool PeerModel::SitsAtPlacement(const Track& t, double centre) const {
  // Its placement, whether in use against the peers or not: it is its own past to begin with.
  if (centre <= 0 || t.smooth <= 0) return true;  // no placement learned
  const double level = t.smooth / (centre * t.a);
  return level <= 1 + o_.effect_min && level * (1 + o_.effect_min) >= 1;
}

void PeerModel::LearnPlacement(const FeatureFrame& ff, uint32_t m, Track& t, WarmLevels& warm,
                               bool deviates) {
  // Placement: the machine's level against the centre, never learned during a stall (the
  // feature's own, or its group's: then not even over a warm-up, whose levels are no placement).
  if (!ff.levels_hold() || ff.centre <= 0 || t.smooth <= 0) return;
  const auto target = [&] { return std::log(t.smooth / ff.centre); };
  if (ff.learning) {
    // Over the group's warm-up: the median of its levels over the last half of the warm-up (at
    // most kWarmSamples of them, evenly spaced; fewer at a slow cadence; of its raw values where
    // the smoothing would stretch an event of its own, WindowLevel). The job's first minutes
    // (an init at another level, a first iteration many times longer) have left that window by the
    // warm-up's end, however far off they were, and an event shorter than a quarter of the warm-up
    // (a network burst, a cron job) is no level. A running mean from the start still carried them:
    // a machine that sent 270 times its peers' traffic in an init, or one placed 60% above the
    // centre, read as 18% off for good; a median over 80 s learned a network burst of 52 s as the
    // level.
    const double spacing = ff.warmup / (2.0 * kWarmSamples);
    if (warm.sampled >= 0 && ff.now - warm.sampled < spacing) return;
    warm.sampled = ff.now;
    if (warm.count == kWarmSamples) {  // the oldest leaves the ring for the levels before it
      warm.prior[warm.prior_next] = warm.values[warm.next];
      warm.prior_at[warm.prior_next] = warm.at[warm.next];
      warm.prior_next = static_cast<uint8_t>((warm.prior_next + 1) % kPriorSamples);
      warm.prior_count =
          static_cast<uint8_t>(std::min<size_t>(warm.prior_count + 1, kPriorSamples));
    }
    warm.values[warm.next] = static_cast<float>(target());
    warm.raw[warm.next] = t.raw > 0 && ff.raw_centre > 0
                              ? static_cast<float>(std::log(t.raw / ff.raw_centre))
                              : -std::numeric_limits<float>::infinity();
    warm.at[warm.next] = static_cast<float>(ff.now - ff.since);
    warm.next = static_cast<uint8_t>((warm.next + 1) % kWarmSamples);
    warm.count = static_cast<uint8_t>(std::min<size_t>(warm.count + 1, kWarmSamples));
    // Those of the last half of the warm-up only: at a slow cadence (a sample every 30 s) the
    // ring reaches back further, into a restart's first iterations. Until its second half has
    // one, the placement from before stands (1 at the job's start): a warm-up that the group's
    // stall took over after its first seconds (a restart's init ending in a hang, a cron job of
    // the machine's own in them) learned no placement.
    const double from = std::max(ff.now - ff.since, ff.warmup) - ff.warmup / 2;
    warm.from = static_cast<float>(from);
    float levels[kWarmSamples], raw[kWarmSamples], before[kWarmSamples];
    size_t n = 0, b = 0;
    for (size_t k = 0; k < warm.count; ++k) {  // oldest first
      const size_t i = warm.Oldest(k);
      if (warm.at[i] < from) {
        before[b++] = warm.raw[i];
        continue;
      }
      raw[n] = warm.raw[i];
      levels[n++] = warm.values[i];
    }
    // Fewer values than a deviation's least evidence are no level where the machine has a
    // placement from before (a restart's warm-up that a checkpoint and stalls took: jobgen's seed
    // 121,003 at 15 s, a host placed at 2.6 times its peers' NVLink rate from the one sample of
    // its window, taken as the job crossed out of a stall after its own exporter's hiccup).
    if (n == 0 || (n < static_cast<size_t>(o_.min_samples) && warm.placed_before)) return;
    // The raw level just before the window: the median of the last few raw values before it that
    // the ring still holds (none where the window's values fill it, and then no tie counts:
    // WindowLevel).
    const size_t last = std::min(b, kJustBefore);
    const float held =
        last > 0 ? MedianOfFirst(before + b - last, last) : std::numeric_limits<float>::quiet_NaN();
    // The levels before the window since the group's centre stood where it stands (none where it
    // has not), which the two rules below read.
    const Peers& p = peers_[ff.group][ff.f];
    const double still = StillSince(p, ff.centre);
    float prior[kPriorSamples + kWarmSamples];
    const std::span<const float> steady(
        prior, still < 0 ? 0 : LevelsBeforeWindow(warm, prior, still - p.since));
    std::optional<float> level = LevelBeforeAStep(ff, m, raw, n, held, steady);
    if (!level) level = LevelItCameBackTo(ff, m, raw, n, steady);
    SetPlacement(t, level ? *level : WindowLevel(ff, m, levels, raw, n, held, warm));
    if (t.learned < UINT16_MAX) ++t.learned;
    peers_[ff.group][ff.f].window_levels = true;
    return;
  }
  // After it: slowly, and only while the machine does not deviate; a machine that joins later
  // (or was silent over the window) starts at its first level, also where that deviates in a
  // group whose machines differ by placement: there where its level lies says nothing of a fault
  // (a pipeline's stage), and at 1 it was expected at the typical machine's level.
  if (deviates && !(t.learned == 0 && peers_[ff.group][ff.f].by_placement)) return;
  if (t.learned < UINT16_MAX) ++t.learned;
  if (t.learned == 1) {
    // Its own past too: one there as the warm-up ended whose series only held its last value
    // over it (every rank's step time in jobgen's seed 131,002) began its past at 1 then.
    SetPlacement(t, static_cast<float>(target()));
    t.past = t.a;
    return;
  }
  const double step =
      placement_weight_(t.interval, o_.placement_half_life_s) * (target() - t.log_a);
  if (std::fabs(step) >= kSeriesStep) {
    SetPlacement(t, static_cast<float>(t.log_a + step));
    return;
  }
  // A step this small moves a by exp(step) to a float's precision by its series to the square
  // (Place lays every placement anew through SetPlacement within kPlaceEvery seconds).
  t.log_a = static_cast<float>(t.log_a + step);
  t.a = static_cast<float>(t.a * (1 + step + step * step / 2));
}

void PeerModel::Trigger(Peers& p, uint32_t group, uint32_t f, uint32_t m, double persistence,
                        double window) {
  std::vector<uint32_t> together = Alongside(m, f, persistence, window);
  if (together.size() < kSharedMachines) {
    Track& t = TrackOf(m, f);
    // Alongside another member of a shared cause on another feature, both in it since within the
    // window of this run's start (their receive rates, which the cause moved on two machines,
    // beside their transmit rates, moved on three): the same cause, reported once with it. Not
    // one alone on this feature (a fault of its own on its GPUs beside a step time that three
    // faults slowed together), nor a fault of its own that begins later.
    const auto in_cause = [&](uint32_t o, uint32_t g) {
      const Track& u = TrackOf(o, g);
      return u.shared && u.run > 0 && std::fabs(u.start - t.start) <= window;
    };
    for (uint32_t g = 0; g < features_; ++g) {
      if (g == f || !in_cause(m, g)) continue;
      if (std::any_of(together.begin(), together.end(),
                      [&](uint32_t o) { return o != m && in_cause(o, g); })) {
        t.shared = true;
        return;
      }
    }
    triggered_.push_back(m);
    if (std::isnan(t.named_off)) t.named_since = t.start;
    t.named_off = OffOf(t);
    return;
  }
  // A shared cause: each stays out of naming for this feature until its run ends, and the
  // episode is reported once.
  for (uint32_t o : together) TrackOf(o, f).shared = true;
  if (p.shared) return;
  p.shared = true;
  Shared sh{group, f, {}};
  for (uint32_t o : together) sh.members.push_back({o, DeviationOf(o, f)});
  shared_.push_back(std::move(sh));
}

void PeerModel::FollowLevel(Peers& p, double centre, double now, bool warming, bool group_stalled) {
  const double size = std::fabs(centre);
  if (p.history.empty()) p.level = p.recent = static_cast<float>(size);
  // Until a warm-up's placements have settled, a stall is judged against the larger of the level
  // and the recent level: the ring still holds a slow init and a hang, which keep the level far
  // under the training that followed them, and a checkpoint there would be no stall.
  const bool stalled =
      size < kStalledShare * (p.settled != p.since ? std::max(p.level, p.recent) : p.level);
  if (!stalled) {
    if (p.stalled_since >= 0) p.stall_left = now;
    p.stalled_since = -1;
  } else if (p.stalled_since < 0) {
    p.stalled_since = now;
  }
  // After the group's warm-up (whose first values may be anything: a job's first iteration
  // runs many times longer), a stall stays out of the level until it has lasted a third of the
  // window: then it is the feature's new normal (a lighter load after a restart), not an event.
  // While most of the group's features stall, it is the job's event however long it lasts (a
  // hang until its watchdog, the restart, a hang of the restarted job), and no feature's level
  // follows it, stalled or not: power spinning in a hang at a quarter of its level would
  // otherwise become the usual level over a long hang, and a second hang spinning at the same
  // power would not move it (jobgen's seed 56,003: the hung rank was never compared on power).
  if (p.sampled >= 0 && now - p.sampled < kLevelEvery) return;
  if (!warming && (group_stalled || (stalled && now - p.stalled_since < o_.level_window_s / 3))) {
    return;
  }
  p.sampled = now;
  const auto capacity = static_cast<size_t>(std::max(1.0, o_.level_window_s / kLevelEvery));
  if (p.history.size() < capacity) {
    p.history.push_back(static_cast<float>(size));
    p.history_at.push_back(now);
  } else {
    p.history[p.next] = static_cast<float>(size);
    p.history_at[p.next] = now;
    p.next = static_cast<uint32_t>((p.next + 1) % capacity);
  }
  scratch_.assign(p.history.begin(), p.history.end());
  p.level = static_cast<float>(MedianOf(scratch_));
  scratch_.clear();
  for (size_t i = 0; i < p.history.size(); ++i) {
    if (now - p.history_at[i] <= kRecentShare * p.warmup) scratch_.push_back(p.history[i]);
  }
  p.recent = static_cast<float>(MedianOf(scratch_));
}

void PeerModel::Place(uint32_t group, std::span<const uint32_t> members, uint32_t f,
                      bool keep_placed, bool by_position) {
  // Levels relative to the group's typical machine, then: a machine shares its level when it is
  // close to the typical one or to another machine's. Every machine's placement is relative to
  // one typical level, those of the machines that do not report now too: where the levels lie
  // half on either side of a gap (a pipeline's stages), the typical machine of those that report
  // moves across it as one of them leaves (an exporter's restart), and a placement left behind
  // would expect its machine at another stage's level on its return.
  values_.clear();
  for (uint32_t m : members) values_.push_back(TrackOf(m, f).log_a);
  scratch_ = values_;
  const double mid = MedianOf(scratch_);
  const double shift = std::exp(-mid);
  // The centre divides the placements out, so it moves by 1 / shift: what is kept of it moves
  // alike, or the re-centring would read as a job-wide move (nobody judged for settle_s; a
  // crash-looping exporter re-centring the group at each restart and return kept it from being
  // judged at all, a reviewer's case) or as a stall (levels more than 5 times apart).
  Peers& p = peers_[group][f];
  const auto rescale = [&](float& centre) { centre = static_cast<float>(centre / shift); };
  for (float& h : p.history) rescale(h);
  for (float* centre :
       {&p.level, &p.recent, &p.slow_centre, &p.still, &p.split_centre, &p.split_before}) {
    rescale(*centre);
  }
  for (uint32_t m : members_[group]) {
    Track& t = TrackOf(m, f);
    if (t.fresh < 0) continue;
    SetPlacement(t, t.log_a - static_cast<float>(mid));
    t.past *= static_cast<float>(shift);
    WarmLevels& warm = WarmOf(m, f);
    for (uint8_t i = 0; i < warm.count; ++i) {
      warm.values[i] -= static_cast<float>(mid);
      warm.raw[i] -= static_cast<float>(mid);
    }
    for (uint8_t i = 0; i < warm.prior_count; ++i) warm.prior[i] -= static_cast<float>(mid);
  }
  for (double& v : values_) v -= mid;
  scratch_ = values_;
  std::sort(scratch_.begin(), scratch_.end());
  const double tolerance = PlacementTolerance();
  // A group whose machines differ by placement (pipeline stages; hardware of several speeds):
  // kSharedMachines or more away from the typical level. Then where a machine's level lies says
  // nothing of a fault, and every machine is compared with its own past: levels of one stage
  // scatter (a signal sampled at chance phases of a long step), and a gap between two of them
  // is no sign. Otherwise a machine alone at its level, odd from its first sample, is compared
  // with its peers as they are, unless the signal's level is where the machine sits
  // (level_by_position: a GPU's temperature).
  const auto off = std::count_if(values_.begin(), values_.end(),
                                 [&](double v) { return std::fabs(v) > tolerance; });
  const bool placed_job = off >= static_cast<std::ptrdiff_t>(kSharedMachines);
  p.by_placement = placed_job;
  // Odd: beyond the effect threshold from the typical level, and an outlier among the other
  // machines' levels (hosts whose data loaders take 12-32% of their CPUs scatter their CPU idle
  // by 6%, and the most loaded of eight, 13% under the typical one, is no fault; GPUs of one
  // model scatter their power by 1%). Fewer than kSharedMachines are beyond the threshold here:
  // the candidates are tested as a generalized extreme Studentized deviate test does, the
  // furthest first against all the others, the next against the others but the first, so that
  // one odd machine does not hide another by the scatter it adds; all up to the last that tests
  // odd are odd. Where the group differs by placement, or the signal's level is where the
  // machine sits, none is (and a pipeline's candidates are hundreds: none is tested).
  odd_level_.assign(members.size(), 0);
  if (!placed_job && !by_position) {
    candidates_.clear();
    for (size_t i = 0; i < members.size(); ++i) {
      if (std::fabs(values_[i]) > tolerance) candidates_.push_back(i);
    }
    std::ranges::sort(candidates_, std::greater{}, [&](size_t i) { return std::fabs(values_[i]); });
    double sum = 0, squares = 0;
    for (double v : values_) {
      sum += v;
      squares += v * v;
    }
    size_t outliers = 0;
    for (size_t k = 0; k < candidates_.size(); ++k) {
      const double v = values_[candidates_[k]];
      sum -= v;
      squares -= v * v;
      const size_t left = members.size() - k;  // the machines still in the test, v among them
      const double others = static_cast<double>(left - 1);
      if (others < 2) break;
      const double mean = sum / others;
      const double variance = std::max(0.0, (squares - others * mean * mean) / (others - 1));
      if (std::fabs(v - mean) > OddCritical(left) * std::sqrt(variance * (1 + 1 / others))) {
        outliers = k + 1;
      }
    }
    for (size_t k = 0; k < outliers; ++k) odd_level_[candidates_[k]] = 1;
  }
  for (size_t i = 0; i < members.size(); ++i) {
    const double v = values_[i];
    Track& t = TrackOf(members[i], f);
    if (odd_level_[i] == 0) {
      t.placed = true;
      continue;
    }
    // Past the warm-up a placed machine stays placed: its level was learned as its own, and a
    // neighbour that leaves that level (back among the typical machines) leaves it no odder.
    if (keep_placed && t.placed) continue;
    // Another machine within the tolerance: in the sorted levels, v's neighbours.
    const auto at = std::lower_bound(scratch_.begin(), scratch_.end(), v);
    const bool below = at != scratch_.begin() && v - *(at - 1) <= tolerance;
    const bool above = at + 1 < scratch_.end() && *(at + 1) - v <= tolerance;
    t.placed = below || above;
  }
}

void PeerModel::KeepPlacementsFromBefore(std::span<const uint32_t> members, uint32_t f,
                                         double since, double now) {
  // A job restarted after a job-level stall (its watchdog, perhaps without a machine) is
  // learned again, as at its start; but the machines keep their hardware and their work. One
  // whose level moved from what it was before (a straggler that began before the stall, or grew
  // while the job was down) is compared with its own past, not learned as it is now. Unless the
  // job changed, and then the new placements stand: its ranks placed anew, which moves machines
  // between the distinct levels that others held before (kSharedMachines or more of them), or
  // another load, which moves a quarter of the machines or more (and kSharedMachines). Faults
  // move machines too, each to a level of its own; several at once (a job with four faults in it)
  // are no sign that the job changed.
  const auto known = [&](uint32_t m) {
    const WarmLevels& warm = WarmOf(m, f);
    return warm.since == since && warm.has_before && warm.count > 0;
  };
  // Placements are levels against the centre of the machines of their time (a restart without a
  // machine moves it): a shift that every machine shares is no move. Its median holds against
  // fewer than kSharedMachines movers only among 2 kSharedMachines - 1 machines or more known
  // from before; with fewer, the new placements stand.
  scratch_.clear();
  for (uint32_t m : members) {
    if (known(m)) scratch_.push_back(TrackOf(m, f).log_a - WarmOf(m, f).before);
  }
  if (scratch_.size() < 2 * kSharedMachines - 1) return;
  const double shift = MedianOf(scratch_);
  const double tolerance = PlacementTolerance();
  const size_t known_machines = scratch_.size();
  const auto move = [&](uint32_t m) { return TrackOf(m, f).log_a - WarmOf(m, f).before - shift; };
  const auto moved = [&](uint32_t m) { return known(m) && std::fabs(move(m)) > tolerance; };
  // The levels held before, sorted, fall into bands: runs of levels each within the tolerance
  // of the next (a job's stages, each band its machines). A mover placed anew sits within the
  // tolerance of a band other than its own and beyond the tolerance of its own: ranks placed
  // anew move between the job's distinct levels. Where the machines' levels spread evenly (one
  // stage, machines a few percent apart), every level lies within the tolerance of another, and a
  // move within that band lands beside some machine's level by chance: no sign of a re-placement.
  scratch_.clear();
  for (uint32_t m : members) {
    if (known(m)) scratch_.push_back(WarmOf(m, f).before);
  }
  std::sort(scratch_.begin(), scratch_.end());
  // By position in scratch_: the lowest and the highest level of its band.
  std::vector<std::pair<double, double>> band(scratch_.size());
  for (size_t k = 0, first = 0; k < scratch_.size(); ++k) {
    if (k + 1 < scratch_.size() && scratch_[k + 1] - scratch_[k] <= tolerance) continue;
    for (size_t b = first; b <= k; ++b) band[b] = {scratch_[first], scratch_[k]};
    first = k + 1;
  }
  const auto placed_anew = [&](uint32_t m) {
    const double level = TrackOf(m, f).log_a - shift;
    const auto [lo, hi] = Within(scratch_, level, tolerance);
    if (lo == hi) return false;
    const auto own = std::lower_bound(scratch_.begin(), scratch_.end(), WarmOf(m, f).before);
    const auto [low, high] = band[static_cast<size_t>(own - scratch_.begin())];
    return level < low - tolerance || level > high + tolerance;
  };
  std::vector<double> moves;
  size_t anew = 0;
  for (uint32_t m : members) {
    if (!moved(m)) continue;
    moves.push_back(move(m));
    anew += placed_anew(m) ? 1 : 0;
  }
  if (anew >= kSharedMachines ||
      (moves.size() >= kSharedMachines && 4 * moves.size() >= known_machines)) {
    return;
  }
  // Machines that moved alike, kSharedMachines or more within the tolerance of one move, moved
  // for one cause, which their new placements hold (ranks whose sampled activity the restart's
  // longer iteration aliases anew; machines left out of the restarted job, idle alike). One that
  // moved as far as its own fault took it keeps its placement from before.
  std::sort(moves.begin(), moves.end());
  const auto alike = [&](double x) {
    const auto [lo, hi] = Within(moves, x, tolerance);
    return hi - lo >= static_cast<std::ptrdiff_t>(kSharedMachines);
  };
  for (uint32_t m : members) {
    if (!moved(m) || alike(move(m))) continue;
    Track& t = TrackOf(m, f);
    SetPlacement(t, static_cast<float>(WarmOf(m, f).before + shift));
    t.confirmed = true;  // kept on purpose: its level moved from it
    t.kept_away = true;
    WarmOf(m, f).kept_at = now;
  }
}

std::vector<Deviation> PeerModel::DeviationsOf(uint32_t m, size_t n) const {
  std::vector<Deviation> out;
  if (m >= machines_) return out;
  for (uint32_t f = 0; f < features_; ++f) {
    if (TrackOf(m, f).run > 0) out.push_back(DeviationOf(m, f));
  }
  std::sort(out.begin(), out.end(),
            [](const Deviation& a, const Deviation& b) { return a.evidence > b.evidence; });
  if (out.size() > n) out.resize(n);
  return out;
}

Deviation PeerModel::DeviationOf(uint32_t m, uint32_t f) const {
  const Track& t = TrackOf(m, f);
  return {f, t.smooth, t.expected, t.z, t.effect, Proven(t), t.start, t.own_past};
}

std::vector<uint32_t> PeerModel::Alongside(uint32_t m, uint32_t f, double persistence,
                                           double window) const {
  // A run that began as its placement was kept from before a restart (KeepPlacementsFromBefore:
  // fewer than kSharedMachines moved alike) deviates for what moved the machine before the
  // warm-up ended, its own fault: runs of several such begin together only because the warm-up
  // ended for all of them at once.
  const auto from_before = [&](uint32_t o) {
    const double kept_at = WarmOf(o, f).kept_at;
    return kept_at >= 0 && TrackOf(o, f).start - kept_at <= persistence;
  };
  if (from_before(m)) return {m};
  const Track& t = TrackOf(m, f);
  std::vector<uint32_t> out;
  for (uint32_t o : valid_) {
    if (from_before(o)) continue;
    const Track& u = TrackOf(o, f);
    // The same way, at least half as far: a machine far off with two barely off beside it is
    // its own fault.
    if (u.run > 0 && (u.z > 0) == (t.z > 0) && std::fabs(u.effect) >= 0.5 * std::fabs(t.effect) &&
        std::fabs(u.start - t.start) <= window) {
      out.push_back(o);
    }
  }
  // Runs of machines whose faults they were named for go on after a break (NamedGoingOn) begin
  // together as a hang of the job ends, each deviating again as the job resumes: with one new
  // run beside them (a fault that began just before the hang, jobgen's seed 99,002) they are no
  // shared cause. Two new runs or more are one (a rack's switch that also slows a machine named
  // before), with those beside them, as where nothing was named.
  const auto fresh = std::count_if(out.begin(), out.end(),
                                   [&](uint32_t o) { return !NamedGoingOn(TrackOf(o, f)); });
  if (fresh < kFreshInShared) return {m};
  return out;
}

bool PeerModel::Quiet(uint32_t m) const {
  if (m >= machines_) return true;
  for (uint32_t f = 0; f < features_; ++f) {
    if (TrackOf(m, f).run > 0) return false;
  }
  return true;
}

}  // namespace vigil::detect
