// Peer comparison: how far each machine's value of each feature sits from what its peers make
// expected, and for how long (docs/detect.md, "Peer comparison").
//
// Per group and feature, each machine's value is smoothed over its own fresh samples; the
// expected value of machine m is a_m * C, where C is the median of the peers' values over their
// placement factors a and a_m is m's usual level against the others, learned from its own past
// (1 for a machine alone at its level in a group whose others share one: a machine odd from its
// first sample is judged against the peers; machines placed alike, or a group that differs by
// placement, against their own past). Placement is learned over the last half of a warm-up
// (the job's start, a restart; longer while the centre moves), and after a restart a machine
// that moved against the others keeps its old one. During a job-level stall (most features
// stalled) a machine deviates only when it does against the peers both as placed and all alike
// (every rank spinning at one power, whatever its stage drew in training), neither own pasts nor
// placements count, stalled features keep their usual levels from before it, and the peers'
// spread does not fall below what it was as it began. Once reported, a stall whose group moves
// (the job killed, restarted, hung again) is judged again from its last move, for a machine whose
// difference nothing explains.
// The noise scale is the peers' own spread (MAD of the residuals), averaged over minutes so
// that a job-wide stall does not shrink it; the effect size is the residual over the expected
// value (at least half the feature's usual level). Each machine is also compared with its own
// recent past (b_m * C, b_m followed over minutes), with the peers' spread of how far their
// levels moved from their own pasts as the noise scale. A fresh sample deviates when both scales
// pass their thresholds against either reference, in the direction that is worse for the
// signal; evidence is the time a deviation has lasted, counted between distinct samples only.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
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
  double persistence_s = 60;  // a deviation must last this long ...
  int min_samples = 3;        // ... over at least this many distinct samples
  double z_min = 4;           // residual in peer spreads
  double effect_min = 0.1;    // residual over the expected value
  // A deviation this far off (residual over the expected value, from twice the z_min noise
  // scales) accrues evidence faster, up to twice as fast from twice it: a strong one is named
  // after half the persistence. Not for signals with a persistence of their own. 0: never.
  double strong_effect = 0.4;
  double smooth_s = 8;  // smoothing time constant (at least the series' own interval)
  double spread_half_life_s = 300;
  // A feature's usual level is the median of its centre over this window (sampled every
  // kLevelEvery seconds): a transient (a job's first, long iteration; a checkpoint's burst) does
  // not become the level, and a stall does not enter it until it has lasted `level_window_s / 3`
  // (nor while most of its group's features stall: a job-level stall).
  double level_window_s = 1800;
  double placement_half_life_s = 3600;
  // Each machine is also compared with its own recent past: its level against the centre,
  // followed with this half-life while it does not deviate (a machine that becomes much slower
  // than it was is named though its peers scatter more than it does).
  double own_half_life_s = 600;
  // Over a group's first minutes (a job's start, warm-up) the peers' spread and each machine's
  // placement are learned and nobody is judged; while the feature stalls or moves job-wide (a
  // checkpoint, an evaluation, a restart) and until it has settled again, nobody is judged.
  double warmup_s = 300;
  double settle_s = 60;
  // Most of a group's features stalled this long is one job-level stall (a hang of every rank
  // outlasts a checkpoint's minutes); when it ends, the group is learned again (a restart).
  double stall_s = 300;
  int min_peers = 4;  // groups with fewer reporting machines are not judged
};

// One feature of one machine against its peers, as of its latest fresh sample.
struct Deviation {
  uint32_t feature = 0;
  float value = 0;        // smoothed
  float expected = 0;     // a * C
  float z = 0;            // (value - expected) / spread
  float effect = 0;       // (value - expected) / scale
  float evidence = 0;     // seconds the deviation has lasted
  double start = -1;      // its first deviating sample
  bool own_past = false;  // expected, z and effect are against its own past, not its peers
};

class PeerModel {
 public:
  explicit PeerModel(const PeerOptions& options) : o_(options) {}

  // Takes one frame: every machine-feature with a fresh sample in it is smoothed and scored
  // within its group (group_of[machine]; machines beyond its end are in group 0), for the
  // signals whose role is kPeer. own_fault_since[machine] (-1, or none beyond its end): since
  // when the machine has a fault of its own under way that takes hardware out of the job (the
  // detector's fatal XID, link down or narrowed, itself or a component silent). One that began
  // before the group's job last restarted, or once its stall had begun, is not the stall's
  // cause: such a machine is taken for it only where no other machine differs (FollowStalls).
  void Update(const telemetry::Frame& frame, std::span<const uint32_t> group_of,
              std::span<const telemetry::SignalInfo> signals,
              std::span<const double> own_fault_since = {});
  // How long a deviation of `signal` must last: its own persistence, else the options'.
  double PersistenceOf(const telemetry::SignalInfo& signal) const;

  // Whether some group's job-level stall is under way and not yet reported: the next Update may
  // report it, and only then reads own_fault_since.
  bool JudgingStall() const;

  // Every machine-feature judged in the last Update (it had a fresh sample), with its z.
  struct Scored {
    uint32_t machine;
    uint32_t feature;
    float z;
  };
  std::span<const Scored> scored() const { return scored_; }
  // A job-wide stall that reached stall_s in the last Update (reported once per stall, and once
  // more per state after a move of its group where one machine nothing explains differs): the
  // group, when it (or that state) began, and the one machine that differs from its stalled peers
  // on some feature and has for that signal's persistence time over min_samples fresh samples
  // (FollowOdd's runs), or that is silent with a fault of its own that began while the job ran,
  // before the stall (gone down: it differs for that fault), with its deviations now, the largest
  // first; none where no machine or several have. Machines whose difference something explains (a
  // fault of their own that is not the stall's cause: Update's own_fault_since; an earlier stall)
  // or that followed the stall count only where no other does (TierOf).
  struct Stall {
    uint32_t group;
    double start;
    std::optional<uint32_t> machine;
    std::vector<Deviation> deviations;
  };
  std::span<const Stall> stalls() const { return stalls_; }
  // When the last warm-up of feature f in `group` ended (the job's start, a restart): no
  // deviation on it can begin earlier; -1 before the first ends.
  double JudgedFrom(uint32_t group, uint32_t f) const {
    return group < peers_.size() && f < peers_[group].size() ? peers_[group][f].judged_from : -1;
  }
  // When feature f in `group` was last judged again: JudgedFrom, or the end of a job-wide move's
  // settling since then (a checkpoint, an evaluation's end), when runs broken by it begin again.
  double JudgedAgain(uint32_t group, uint32_t f) const {
    return group < peers_.size() && f < peers_[group].size() ? peers_[group][f].judged_again : -1;
  }
  // Machines of one group that deviate together on one feature, the same way and about as far,
  // their runs starting within the time the first took to be named (the persistence time, less
  // for a strong deviation) of each other (at least kSharedMachines): a
  // shared cause (a pipeline stage in another phase, a rack's switch), reported once per episode in
  // the Update where the first of them would have been named; none of them is named for it.
  // Also a minority of a group split off the others against their own pasts (FollowSplit): in a
  // small group, a third of it moving at once raises the peers' spreads (medians over the group)
  // so that none of them deviates; such machines are reported together, and each is still named
  // where it deviates on its own.
  static constexpr size_t kSharedMachines = 3;
  // Of which at least this many runs are no fault named before, going on (Alongside).
  static constexpr std::ptrdiff_t kFreshInShared = 2;
  struct Shared {
    uint32_t group;
    uint32_t feature;
    struct Member {
      uint32_t machine;
      Deviation deviation;  // on the feature
    };
    std::vector<Member> members;
  };
  std::span<const Shared> shared() const { return shared_; }
  // Machines whose evidence reached the persistence time (and sample count) in the last Update,
  // and whose latest fresh value did not step (FollowRun: a step waits once per run).
  std::span<const uint32_t> triggered() const { return triggered_; }
  // Machine m's deviations under way, the longest first, at most n.
  std::vector<Deviation> DeviationsOf(uint32_t m, size_t n) const;
  // Whether machine m has no deviation under way.
  bool Quiet(uint32_t m) const;

 private:
  struct Track {
    float smooth = 0;
    float raw = 0;       // the latest fresh value
    float prev_raw = 0;  // the fresh value before it (the first: the first)
    float noise = 0;     // its own scatter: mean |raw - smooth|, while it does not deviate
    float log_a = 0;     // placement: log of the machine's usual level over the centre
    float a = 1;         // exp(log_a) (SetPlacement)
    float past = 0;      // its own recent past: its level over the centre, followed over minutes
    float interval = 0;  // seconds between fresh samples (smoothed)
    float evidence = 0;  // seconds the run has lasted, weighted by its strength
    // A duration signal's value at the run's latest deviating sample: the interval it measures
    // ends there, so the run is known to have lasted only to that interval's start (Proven).
    float lag = 0;
    float z = 0, effect = 0, expected = 0;
    float took = 0;       // seconds from the run's start until its evidence was enough; 0: not yet
    float paused_at = 0;  // its group's Peers::paused at the run's latest deviating sample
    // Its pace: seconds between fresh samples, rising at once to a longer gap and falling
    // slowly (as `interval` follows), but at once after a gap its job spent partly paused, to
    // the part of that gap spent training or the gap after it (SmoothSample); `late`: how far
    // its latest fresh sample came beyond the pace before it (0 when on time).
    float pace = 0, late = 0;
    // Its group's pause clock on the signal (Peers::paused) at its latest fresh sample, and the
    // part of the gap before that sample not spent paused; -1 where the job did not pause in it.
    float pause_seen = 0, trained = -1;
    // Seconds (its intervals) its level has sat at its placement without a break since the
    // warm-up's end (SitsAtPlacement at each fresh sample); -1: its latest fresh sample did not.
    float sat = -1;
    // Named on its own (Trigger, not a shared deviation): how far off what it was expected at its
    // level stood (log of smooth over expected) as it last was, kept until a judged fresh sample
    // no longer deviates; NaN: not named since (NamedGoingOn).
    float named_off = std::numeric_limits<float>::quiet_NaN();
    uint16_t samples = 0;   // fresh samples, capped
    uint16_t learned = 0;   // of which placement learned from, capped
    uint16_t run = 0;       // deviating samples in the run under way
    bool shared = false;    // the run is part of a shared deviation (PeerModel::Shared)
    bool deferred = false;  // the run's trigger waited once for a step (FollowRun)
    bool placed = false;    // a_m is used (PeerModel::Place)
    bool own_past = false;  // t.expected, z and effect are against its own past, not the peers
    // Its placement was kept from before a restart (KeepPlacementsFromBefore: its level moved from
    // it over the warm-up's window) and no fresh sample since has been at it: the run it begins
    // goes back into that window (FollowRun, KeptAwaySince).
    bool kept_away = false;
    // Its warm-up's placement is confirmed: its level has sat at it (within effect_min) for the
    // signal's persistence time without a break since the warm-up's end (`sat`: a benign event
    // of its own that the placement was learned from and that outlasts the warm-up is no
    // confirmation), or it was kept on purpose; one not confirmed may be learned again instead
    // of naming the machine (Relearn).
    bool confirmed = true;
    // As its group's stall was seen: its placement confirmed, or its level at it no longer
    // before than the stall could have begun unseen (`at_placement`). Only such a placement is
    // one a restart may keep (KeepPlacementsFromBefore).
    bool held_placement = true;
    // When its level was last at its placement (learned from it over the warm-up, or judged at
    // it while not confirmed: SitsAtPlacement), or the machine last named against it.
    double at_placement = -1;
    double last_deviating = -1;
    double own_since = -1;    // the warm-up (Peers::since) `past` was set after
    double first = -1;        // first fresh sample
    double fresh = -1;        // latest fresh sample
    double seen = -1;         // latest sample, held or not
    double start = -1;        // first deviating sample of the run
    double named_since = -1;  // where named_off is set: the start of the run first named
  };
  // A machine's level against the centre (log) over the last half of its group's warm-up, at
  // most kWarmSamples of them (fewer at a slow cadence): its placement is their median.
  static constexpr size_t kWarmSamples = 16;
  static constexpr size_t kPriorSamples = 8;
  // How many of the raw levels just before a warm-up's window say what level it held there.
  static constexpr size_t kJustBefore = 3;
  // How many times a machine's level may leave the level it came back to in a warm-up (its own
  // events); more is a signal that swings, sampled at chance phases (LevelItCameBackTo).
  static constexpr size_t kExcursions = 2;
  struct WarmLevels {
    float values[kWarmSamples] = {};
    // The latest raw value's level at each, against FeatureFrame::raw_centre; -inf where either is
    // not above 0.
    float raw[kWarmSamples] = {};
    float at[kWarmSamples] = {};  // when each was sampled: seconds after `since`
    uint8_t count = 0, next = 0;
    // The index of the ring's k-th sample, oldest first (k < count).
    size_t Oldest(size_t k) const { return count < kWarmSamples ? k : (next + k) % kWarmSamples; }
    uint16_t scattered = 0;  // fresh samples of its second half, whose scatter Track::noise is
    double sampled = -1;
    double since = -1;           // the warm-up they belong to (Peers::since)
    bool placed_before = false;  // a placement was learned before this warm-up
    // The placement learned before this warm-up (a job restarted after a job-level stall), as
    // it was then: the new ones are compared with it up to a shift that they all share.
    float before = 0;
    bool has_before = false;
    // The levels the ring let go (a ring of its own, at most kPriorSamples): those just before
    // the window its placement is learned from, the level it held before any event in it.
    float prior[kPriorSamples] = {};
    float prior_at[kPriorSamples] = {};  // when each was sampled: seconds after `since`
    uint8_t prior_count = 0, prior_next = 0;
    // The index of `prior`'s k-th level, oldest first (k < prior_count), as Oldest is the ring's.
    size_t PriorOldest(size_t k) const {
      return prior_count < kPriorSamples ? k : (prior_next + k) % kPriorSamples;
    }
    float from = 0;  // where that window begins: seconds after `since`
    // When KeepPlacementsFromBefore kept its placement from before (this warm-up's end), or -1.
    double kept_at = -1;
  };
  struct Peers {  // per group and feature
    float spread = 0;
    // The peers' spread of how far their levels against the centre moved from their own past
    // (relative): the noise scale against a machine's own past; -1 before the first.
    float own_spread = -1;
    float level = 0;                 // the median of `history`
    float recent = 0;                // ... of its entries of the last kRecentShare of `warmup`
    std::vector<float> history;      // |centre| every kLevelEvery seconds over the window, a ring
    std::vector<double> history_at;  // when each entry of `history` was taken
    uint32_t next = 0;               // where the next one goes in the ring
    double sampled = -1;             // when the centre last went into `history`
    double stalled_since = -1;       // the centre under kStalledShare of `level` since
    double stall_left = -1;          // when it last came back above it
    float quantum = 0;               // the smallest step between two values of one machine
    // The index in `history` of the entry `back` entries before its newest (back < its size).
    size_t Newest(size_t back) const {
      return (next + 2 * history.size() - 1 - back) % history.size();
    }
    double updated = -1;
    double since = -1;  // first judged
    // Seconds of the warm-up from `since`: --warmup, less after a restart, more at a coarse
    // cadence (FirstWarmup, once `warmup_sized`).
    float warmup = 0;
    bool warmup_sized = false;
    float restart_warmup = 0;  // a restart's (RestartWarmup), as the group's last stall began
    float slow_centre = 0;     // the centre, averaged with a 30 s half-life; set to the centre
                               // once it holds still after the warm-up (Judge)
    double moving = -1;        // last seen moving (the centre a fifth of the level off its slow
                               // average)
    float still = 0;           // where the centre stood when it last moved by kStillShare or more
    double still_since = -1;   // ... and when
    double placed_at = -1;     // when placement was last decided
    // Then kSharedMachines or more of its machines sat away from the typical level (Place).
    bool by_placement = false;
    // This warm-up (`since`) has learned some machine's placement from its window's levels.
    bool window_levels = false;
    double settled = -1;      // the warm-up (its `since`) that has ended, its placements
                              // compared with those from before it
    double judged_from = -1;  // when that warm-up ended: the feature judged again from then
    // That, or the first frame judged after a job-wide move (`moving`) since then settled.
    double judged_again = -1;
    bool shared = false;  // a shared deviation was reported and some machine still deviates
    // Its machines' values are current until then (CollectCurrent, renewed while some machine
    // has fresh samples): a feature whose series are gone or all held (the trainer's, its job
    // killed or hung) counts neither way in its group's stall.
    double current_until = -1;
    float spread_before = 0;  // `spread` as its group's job-level stall began
    // While placements are learned: the centre moved in some frame since `spread` was last
    // learned afresh, and the next frame in which it does not learns it afresh (Judge).
    bool spread_moved = false;
    // Seconds in which the group's job paused on this signal (FollowPause), counted since the
    // group's first frame; `pause_checked`: the frame it was last judged in; `pausing`: paused
    // then; `resumed`: the frame its latest pause ended in. Kept in the signal's first feature
    // only (its statistics share their samples: PauseClock).
    double paused = 0;
    double pause_checked = -1;
    bool pausing = false;
    double resumed = -std::numeric_limits<double>::infinity();
    // The machines of a split under way (FollowSplit), each with when it joined, when it was
    // last in it, the seconds between its frames in it and its fresh samples in it;
    // `split_reported`: reported, until the split ends.
    struct SplitMember {
      uint32_t machine;
      double since;
      double last = since;
      double evidence = 0;
      uint16_t samples = 0;
    };
    std::vector<SplitMember> split;
    bool split_reported = false;
    // Where the others stood as the split began (the worst of the centre, its slow average and
    // `split_before`), and whether they have since moved the better way by kRedistributedShare
    // of the split's move (FollowSplit), until it ends; the centre's median over the minutes
    // before a persistence time before the split began (or the last split's, where that ended
    // recently and is worse); when the last split ended, or -1.
    float split_centre = 0;
    bool split_redistributed = false;
    float split_before = 0;
    double split_before_at = -1;  // when split_before was taken
    double split_ended = -1;
  };
  // A machine differing from its stalled peers on a feature: its smoothed value differs, and its
  // evidence is the time between its fresh samples whose own value differs too (as a run's,
  // FollowRun), so that the smoothing's tail after a burst does not lengthen it. It ends when the
  // smoothed value stops differing or the machine's value is held or missing for more than
  // kCurrentIntervals of its intervals, and it no longer counts once its own values have not
  // differed for kRunGapIntervals.
  struct OddRun {
    uint32_t machine, feature;
    double last = -1;      // its latest fresh sample whose own value differed
    float evidence = 0;    // seconds
    uint16_t samples = 0;  // fresh samples whose own value differed
  };
  // A machine's difference in a stall's state, over its features: its first fresh sample whose
  // own value differed, or -1; since when it has been judged alike (differing on no feature), or
  // -1; and since when it had been alike as its difference began, or -1 (not judged alike
  // before it). A break in its runs (its exporter silent) does not end a difference; being alike
  // for the persistence time does.
  struct OddEpisode {
    double since = -1;
    double alike = -1;
    double alike_before = -1;
  };
  struct GroupStall {
    double began = -1;  // the stall's first state
    double since = -1;  // its state now: since the group's last move after a report
    bool reported = false;
    // The state follows a reported one (the job restarted within the stall): reported only for
    // a machine whose difference nothing explains, and once its own stall_s has passed.
    bool follows = false;
    // Each feature's usual level as the stall began: FollowOdd judges the features the stall
    // moved from it. The level itself follows a feature that never stalls (power, spinning at
    // half its level), and over a second hang soon after a first it becomes the hang's own.
    std::vector<float> level_before;
    std::vector<OddRun> odd;           // FollowOdd's, while the stall is not yet reported
    std::vector<OddEpisode> episodes;  // per machine (FollowOdd)
  };
  // What a machine's difference in a stall tells of its cause (FollowStalls): nothing explains
  // it; it followed the stall or may be an earlier stall's (weak); a fault or a stall of its own
  // explains it. A stall takes the machines of the first tier that has any.
  enum class StallTier { kUnexplained, kWeak, kExplained };
  StallTier TierOf(uint32_t g, uint32_t m, const GroupStall& gs, double own_fault_since,
                   double persistence, float interval) const;
  // A stall that a machine may have caused: when it began, its group, and whether it named the
  // machine (or could not tell it from others).
  struct Cause {
    double since = -1;
    double episode = -1;  // when the stall's first state began (GroupStall::began)
    uint32_t group = 0;
    bool named = false;
  };
  void FollowStalls(double now, std::span<const telemetry::SignalInfo> signals,
                    std::span<const double> own_fault_since);
  // Machine m's silence in group g: since its last sample on any feature that has a level, where
  // it has no current one (held or fresh) on any, with the longest of their intervals; since -1
  // where it is current on one, or was never seen.
  struct Silence {
    double since = -1;
    float interval = 0;
  };
  Silence SilenceOf(uint32_t g, uint32_t m, double now) const;
  // Whether machine m's latest fresh values (a silent machine's last ones) had joined group g's
  // stall: on most of the features the stall took to nothing (their centres under kStalledShare
  // of their levels) where it has a value, its raw value lies under that share of the level
  // before the stall, as placed. A machine that fell silent after it stalled with its peers
  // followed the stall, however late the smoothed centres showed the stall (a weak candidate for
  // its cause: FollowStalls).
  bool JoinedStall(uint32_t g, uint32_t m, const GroupStall& gs) const;
  // Group g's machines with a fresh sample, as they stand during its stall at `now`, on each
  // feature the stall moved (its centre a fifth of its usual level or more away from it):
  // against the centre and the peers' scatter about it now (the stalled peers' own noise, not
  // the one learned before the stall), the way worse for its signal (`signals`; either way on a
  // feature the stall took to nothing), with the thresholds of a divergence. Each
  // machine-feature that deviates goes into odd_; `gs.odd` follows each one's run (OddRun).
  void FollowOdd(uint32_t g, double now, std::span<const telemetry::SignalInfo> signals,
                 GroupStall& gs);
  // A residual beyond both thresholds of a deviation: z_min noise scales and effect_min of the
  // effect's scale, either way.
  bool Beyond(double residual, double noise, double scale) const;
  // Follows the feature's usual level and whether it stalls; `warming` as for FollowSpread;
  // `group_stalled`: the group's job-level stall is under way.
  void FollowLevel(Peers& p, double centre, double now, bool warming, bool group_stalled);
  // Machine m's evidence on f reached what it needs (`persistence`), `window` seconds after its
  // run began: it is named, or it deviates with others (a shared deviation, Alongside), or with
  // another member of a shared cause on another feature that it belongs to (the same cause).
  void Trigger(Peers& p, uint32_t group, uint32_t f, uint32_t m, double persistence, double window);

  // One feature of one group in this frame, as Judge reads it for each of its machines.
  struct FeatureFrame {
    uint32_t group = 0, f = 0;
    double now = 0;
    const telemetry::SignalInfo& signal;
    double persistence = 0;  // seconds of evidence a run needs (the signal's, else the options')
    double centre = 0;       // the current machines' median, placement factors divided out
    double floor = 0;        // of the noise scale and the effect's scale
    double spread = 0;       // the peers' spread, at least `floor`
    double own_spread = 0;   // Peers::own_spread
    bool learning = false;   // placements still learned: the warm-up, longer while it moves
    bool stalled = false;    // the feature stalls (FollowLevel): no placement is learned
    bool judging = false;    // after the warm-up, and the centre has settled
    // During the group's stall (most features stalled): the current machines' median all alike,
    // which a machine must deviate from too; placements and own pasts then do not count.
    std::optional<double> alike;
    // Placements and own pasts hold now: learned from it, and judged against.
    bool levels_hold() const { return !stalled && !alike; }
    double since = 0;   // the group's warm-up began (Peers::since)
    double warmup = 0;  // and lasts (Peers::warmup)
    // While placements are learned: the centre of the machines' latest raw values (placement
    // factors divided out), which a raw value is a level against (the smoothed centre lags a
    // job-wide move that the raw values have made).
    double raw_centre = 0;
  };

  // Grows tracks_ and peers_ to `machines` x `features` (never shrinks them).
  void Grow(uint32_t machines, uint32_t features);
  // members_: each group's machines in this frame; peers_ gets a row for each new group.
  void GroupMembers(std::span<const uint32_t> group_of);
  // Group g's new samples of signal s (a peer signal): each machine's smoothed over its own
  // fresh ones (fresh_ marks them); a held one only says that the series still reports.
  void SmoothSamples(const telemetry::Frame& frame, uint32_t g, uint32_t s);
  // The interval a run's gaps are judged by at a machine's latest fresh sample (ExtendRun): its
  // interval, less what a gap its job spent paused added to it (the gap is then the pace, and
  // `trained` its part spent training), so that the part of a pause beyond its clocked 2 minutes
  // breaks a run.
  static float RunInterval(const Track& t);
  // One fresh sample `raw` of a machine's track, its group's peers `p` learning its quantum;
  // `paused`: the group's pause clock on the signal (PauseClock).
  void SmoothSample(Track& t, Peers& p, double raw, double now, double paused);
  // Whether group g's job paused on signal s at `now`: half of its machines that report it (at
  // least min_peers, each with a sample, held or fresh, within kRunGapIntervals of its intervals
  // and a fresh one within kLongestGap) have had no fresh one for kOverdueIntervals of their own
  // paces (a checkpoint or an evaluation: no iteration ends, and the exporters hold the step
  // time; no traffic moves). Such time goes into the Peers' `paused` clock of the signal's first
  // feature, from when half of them had their latest fresh one (the pause began then, not
  // kOverdueIntervals later), and a run's gap between its deviating samples leaves out the part
  // that the job spent paused, both as evidence and as a break (FollowRun).
  void FollowPause(uint32_t g, uint32_t s, double now);
  // The median interval of group g's machines on feature f (0 while none is known).
  double MembersInterval(uint32_t group, uint32_t f);
  // A placement window that holds 2 min_samples samples at `interval`: an event's as many, and as
  // many beside them.
  double SampledWindow(double interval) const;
  // The job's first warm-up at the machines' typical interval: --warmup, but long enough that its
  // window (its second half) is a SampledWindow.
  double FirstWarmup(double interval) const;
  // The warm-up of group g's feature f after a restart (kRestartWarmupShare of --warmup, at
  // least what its placement window needs at the machines' current intervals, at most the
  // first's), in seconds.
  double RestartWarmup(uint32_t group, uint32_t f, const telemetry::SignalInfo& signal);
  // The seconds group g's job has paused on feature f's signal (FollowPause).
  double PauseClock(uint32_t g, uint32_t f) const { return peers_[g][f - f % kStats].paused; }
  // Judges valid_ (CollectCurrent) on `feature`.
  void Judge(uint32_t group, uint32_t feature, double now, const telemetry::SignalInfo& signal);
  // valid_: the machines of `group` whose value of `f` is current: they report (held or fresh)
  // within three of their own intervals.
  void CollectCurrent(uint32_t group, uint32_t f, double now);
  // The median of valid_'s `value` of `f` (Track::smooth, Track::raw), placement factors divided
  // out where `placed`.
  double CentreOf(uint32_t f, float Track::*value, bool placed);
  // The centre of valid_'s values of `f` (placement factors divided out, where `placed`) and
  // their robust spread about it.
  std::pair<double, double> CentreAndSpread(uint32_t f, bool placed);
  // The robust spread of how far valid_'s levels against `centre` moved from their own past
  // (over a warm-up, from their placements; after it, of the machines with an own past since the
  // warm-up `since`; relative; -1 with fewer than min_peers such values).
  double OwnSpread(uint32_t f, double centre, bool learning, double since);
  // Follows this frame's spread of the peers into `spread`, one of p's; in the group's first
  // frame (p.updated < 0) it takes the frame's. `warming`: within the warm-up's first Peers::warmup
  // seconds.
  void FollowSpread(const Peers& p, float& spread, double frame_spread, double dt,
                    bool warming) const;
  // A split of the group on ff.f against the machines' own pasts: kSharedMachines or more, a
  // minority, moved the worse way by the effect threshold and z_min spreads of the others' own
  // moves, apart from them by kSplitGap of those spreads; of those, the members are the ones
  // beyond z_min of their own scatter too. Follows each member into p.split as a run (its
  // evidence is the time between its frames in the split), and reports the split as a Shared
  // once kSharedMachines members that do not deviate on their own have the persistence time
  // (and min_samples fresh samples in it), once per split, where no shared deviation is
  // reported, nor where, in any of its frames, the others have moved the better way since the
  // split began (against split_centre) by kRedistributedShare of the nearest member's move or
  // more (they gained what it lost: a beat of scrapes against the step, load moved between
  // machines, not a slowdown).
  void FollowSplit(const FeatureFrame& ff, Peers& p);
  // The median over time of p's centre over the kSplitReferenceS seconds before back_s seconds
  // before `now` (its level's ring, each entry standing until the next), or 0 where the ring
  // does not reach back to them.
  double CentreBefore(const Peers& p, double now, double back_s) const;
  // Whether p's centre (its size, as the level's ring holds it) lies kMovingShare of the level
  // or more from the ring's entry that stood at `from` (false where the ring does not reach back
  // to it).
  static bool MovedSince(const Peers& p, double centre, double from);
  // Since when p's centre has stood within kStillShare of the level of `centre` (where it stands
  // now), read back through the level's ring from its newest entry: p's `since` where every entry
  // since then does (the ring's oldest entry's time where it holds none from before), -1 where
  // none does.
  static double StillSince(const Peers& p, double centre);
  // Scores machine m's fresh value of the feature, follows its run and its own noise, and learns
  // its placement.
  void JudgeMachine(const FeatureFrame& frame, Peers& p, uint32_t m);
  // A machine's value against one reference: the peers (a_m C, or C all alike) or its own past
  // (b_m C).
  struct Reference {
    double expected = 0, residual = 0, scale = 0, noise = 0;
    bool deviates = false;    // the smoothed value
    double raw_strength = 0;  // the raw value's: 0 when it does not deviate, up to 2
  };
  // `noise` in the feature's units, `relative_noise` of the effect's scale: the larger counts.
  Reference ReferenceOf(const FeatureFrame& frame, const Peers& p, const Track& t, double centre,
                        double factor, double noise, double relative_noise) const;
  // Machine m's run on the feature: ended when its smoothed value does not deviate, its evidence
  // grown by `strength` when its raw value deviates too, and Trigger when the evidence is enough,
  // unless its latest fresh value `stepped` from the one before by as much as a deviation: then,
  // once per run, not before its next fresh value that deviates. A change of the whole job
  // reaches staggered scrapes one machine at a time, so a machine's step is judged against peers
  // not yet sampled since; by its next sample every peer on its cadence has been, and a step the
  // job shared has moved the centre (or stalled it), which ends the run.
  void FollowRun(const FeatureFrame& frame, Peers& p, uint32_t m, Track& t, bool deviates,
                 bool stepped, double strength);
  // Machine m's placement (Track::log_a) learned from its level against the centre.
  void LearnPlacement(const FeatureFrame& frame, uint32_t m, Track& t, WarmLevels& warm,
                      bool deviates);
  // Where machine m's placement on ff's feature was kept from before a restart: since when its
  // levels at the end of the warm-up's window lay off that placement as a deviation at full
  // strength would (the way of Track::z), without a break (each within a run's gap and the
  // window's spacing of the next, the newest within a run's gap of now), and how many of them did
  // (0: not the newest).
  std::pair<double, size_t> KeptAwaySince(const FeatureFrame& ff, uint32_t m, const Track& t) const;
  // Learns machine m's placement on ff's feature again where it stands, instead of naming it,
  // where its warm-up's placement is not confirmed and it is back at the level it held before the
  // window the placement was learned from, or back from the better side (BackFromTheBetterSide);
  // returns whether it did.
  bool Relearn(const FeatureFrame& ff, uint32_t m, Track& t);
  // Whether machine m's placement (its track t) lies on the better side of a signal with a worse
  // side, beyond the tolerance, at a level no population shares, in a group mostly placed at the
  // typical level, and the machine is back at that level (`level`, log against the centre),
  // which it held over the first half of the window (an event of its own in the window's second
  // half), or the better side's level began and ended inside the window (not held just before
  // it, `just_before`; its last values back at `level`): learned again (Relearn).
  bool BackFromTheBetterSide(const FeatureFrame& ff, uint32_t m, const Track& t, double level,
                             std::span<const float> just_before) const;
  // Sets t's placement to `level` (log), confirmed, and ends its run.
  void LearnAgain(Track& t, double level);
  // The placement that a warm-up's window of n levels (oldest first) of machine m gives: the
  // median of the smoothed values' levels, or, where the raw values away from their median (one
  // event of the machine's own) form one run and are fewer than the others (or as many, the run
  // ending inside the window, between the raw level `before` held just before the window and the
  // values after it, at a level a population of machines is placed at, the run's at none:
  // PlacedAt), and the event moved the smoothed median beyond the tolerance from the others', the
  // median of the others' raw levels; failing that, the level between events of its own
  // (LevelBetweenEvents, against `warm`'s levels before the window) where it lies beyond the
  // tolerance from the smoothed median. Reorders `smoothed`.
  float WindowLevel(const FeatureFrame& ff, uint32_t m, float* smoothed, const float* raw, size_t n,
                    float before, const WarmLevels& warm) const;
  // WindowLevel's last resort: the window's raw values' densest level (within the tolerance),
  // where more of them lie at it than at any other, at least min_samples, all the window's last
  // kJustBefore but at most one among them (the last of an event of its own may be that one), it is
  // the level the machine held before the window (the median of warm's LevelsBeforeWindow), and the
  // densest level of the others is none a population is placed at; nullopt otherwise.
  std::optional<float> LevelBetweenEvents(const FeatureFrame& ff, uint32_t m, const float* raw,
                                          size_t n, const WarmLevels& warm) const;
  // The level machine m held before a step inside its warm-up's window, where the window's n raw
  // levels (oldest first) end in a run of at least min_samples beyond the level it held before the
  // window since its group's centre stood where it stands (the median of `steady`, its levels
  // before the window since then, oldest first; empty where the centre has not stood), each at the
  // level the window ends at or beyond that level the worse way (either way on a signal worse
  // either way) on that side; where a population is placed at the level it ends at, only if every
  // one of those levels, and `before` (the raw level just before the window), was the one it left,
  // or the oldest of them and the window's level just before the run were: a fault that began in
  // the window, or before it and lasted through it; nullopt otherwise, and where the ring holds no
  // raw value before the window (`before` is NaN).
  std::optional<float> LevelBeforeAStep(const FeatureFrame& ff, uint32_t m, const float* raw,
                                        size_t n, float before,
                                        std::span<const float> steady) const;
  // The level machine m came back to by the end of its warm-up's window of n raw levels (oldest
  // first): the one the oldest kJustBefore levels of `steady` (as LevelBeforeAStep's: those
  // before the window that the ring still holds since its group's centre stood) all lie at, which
  // no population is placed at (PlacedAt), which the window's last value lies at too, left at most
  // kExcursions times in between, each run away from it at a median beyond the tolerance from the
  // typical level (the median of the window's values at it); nullopt otherwise, where it never left
  // it, and on a signal whose level goes by position.
  std::optional<float> LevelItCameBackTo(const FeatureFrame& ff, uint32_t m, const float* raw,
                                         size_t n, std::span<const float> steady) const;
  // Fills `out` (room for kPriorSamples + kWarmSamples) with warm's levels before its window,
  // oldest first: those the ring let go, then the ring's own before the window (a slow cadence,
  // whose ring reaches back further), sampled `from` seconds after its `since` or later; returns
  // how many.
  static size_t LevelsBeforeWindow(const WarmLevels& warm, float* out,
                                   double from = -std::numeric_limits<double>::infinity());
  // Whether kSharedMachines or more of feature f's current machines other than m are placed
  // within the placement tolerance of `level` (log, against the typical machine).
  bool PlacedAt(uint32_t f, uint32_t m, double level) const;
  // Whether t's level sits within effect_min of its placement against `centre` (true where
  // either is not above 0: no placement is learned there).
  bool SitsAtPlacement(const Track& t, double centre) const;
  // A run's evidence as far as its samples prove it: less the interval a duration signal's
  // latest deviating value measures (a step time slow in an iteration that began inside an event
  // and ended after it shows the event for that much longer than it lasted).
  static float Proven(const Track& t) { return std::max(t.evidence - t.lag, 0.0f); }
  static void EndRun(Track& t) {
    t.run = 0;
    t.shared = false;
    t.evidence = 0;
    t.start = -1;
    t.deferred = false;
  }
  // Track::noise follows the distance of its raw value from its smoothed one, with weight w.
  static void FollowNoise(Track& t, double w) {
    t.noise = static_cast<float>(t.noise + w * (std::fabs(t.raw - t.smooth) - t.noise));
  }
  // Re-centres the placements of `group`'s machines on the typical one of the members (its
  // machines that report now) and decides which members are placed (a_m used); with keep_placed
  // (past the warm-up) one placed stays placed; with by_position (the signal's level_by_position)
  // every one is.
  void Place(uint32_t group, std::span<const uint32_t> members, uint32_t feature, bool keep_placed,
             bool by_position);
  // At the end of the warm-up begun at `since`, after a restart: a machine whose level moved
  // from its placement before it against the others (a shift they all share is no move) keeps
  // that placement, moved by the shift, unless the job changed: kSharedMachines or more moved
  // from one band of the levels held before to another, or a quarter of the machines (at least
  // kSharedMachines) moved.
  // `now` is the warm-up's end.
  void KeepPlacementsFromBefore(std::span<const uint32_t> members, uint32_t feature, double since,
                                double now);
  // Machine m's deviation on feature f as it stands.
  Deviation DeviationOf(uint32_t m, uint32_t f) const;
  // The machines of valid_ (m among them) whose run on f goes the same way as m's, at least
  // half as far, and started within `window` of it (m alone where its run began within
  // `persistence` of its placement being kept from before a restart, or where fewer than
  // kFreshInShared of them are not the fault they were named for going on: NamedGoingOn).
  std::vector<uint32_t> Alongside(uint32_t m, uint32_t f, double persistence, double window) const;
  // How far off what it is expected at t's level stands (log); NaN where either is not above 0.
  static float OffOf(const Track& t) {
    return t.smooth > 0 && t.expected > 0 ? std::log(t.smooth / t.expected)
                                          : std::numeric_limits<float>::quiet_NaN();
  }
  // t's run began after the run it was named for on its own, deviating as far as it did then
  // (within the placement tolerance): the fault it was named for, going on after a break (a
  // hang of the job, whose end begins the runs of every such machine as one).
  bool NamedGoingOn(const Track& t) const {
    return t.named_since >= 0 && t.named_since < t.start &&
           std::fabs(OffOf(t) - t.named_off) <= PlacementTolerance();
  }
  static void SetPlacement(Track& t, float log_a) {
    t.log_a = log_a;
    t.a = std::exp(log_a);
  }
  // Where machine m's cell of feature f lies in tracks_, warm_ and fresh_: feature-major, so that
  // a feature's pass over its peers (Judge) reads them one after another.
  size_t CellOf(uint32_t m, uint32_t f) const { return static_cast<size_t>(f) * stride_ + m; }
  Track& TrackOf(uint32_t m, uint32_t f) { return tracks_[CellOf(m, f)]; }
  const Track& TrackOf(uint32_t m, uint32_t f) const { return tracks_[CellOf(m, f)]; }
  WarmLevels& WarmOf(uint32_t m, uint32_t f) { return warm_[CellOf(m, f)]; }
  const WarmLevels& WarmOf(uint32_t m, uint32_t f) const { return warm_[CellOf(m, f)]; }
  // How far apart two placements (log) may be and still be one level: the effect threshold.
  double PlacementTolerance() const { return std::log1p(o_.effect_min); }

  // How much of the way an average with `half_life` moves in `dt` seconds, remembered for the
  // last pair asked: the machines of a job sampled on one cadence ask for the same one, frame
  // after frame (one per place that follows an average per machine and feature).
  class Weights {
   public:
    double operator()(double dt, double half_life);

   private:
    double dt_ = -1, half_life_ = -1, w_ = 0;
  };

  PeerOptions o_;
  Weights smooth_weight_, noise_weight_, warm_noise_weight_, past_weight_, placement_weight_;
  uint32_t machines_ = 0, features_ = 0;  // dimensions of tracks_ (CellOf)
  // Cells per feature in tracks_: machines_ and room for more (machines that join one by one do
  // not each lay the tables out again).
  uint32_t stride_ = 0;
  std::vector<Track> tracks_;
  std::vector<WarmLevels> warm_;                // beside tracks_
  std::vector<std::vector<Peers>> peers_;       // per group, per feature
  std::vector<std::vector<uint32_t>> members_;  // per group: machines in this frame, scratch
  std::vector<uint8_t> fresh_;                  // per feature x machine in this frame, scratch
  std::vector<uint32_t> valid_;
  double current_within_ = 0;  // the longest a value of valid_ stays current (CollectCurrent)
  std::vector<double> values_, scratch_;
  std::vector<size_t> candidates_;                 // Place's, scratch
  std::vector<uint8_t> odd_level_;                 // Place's, scratch
  std::vector<float> peer_values_;                 // CentreAndSpread's and OwnSpread's, scratch
  std::vector<std::pair<float, uint32_t>> moves_;  // FollowSplit's, scratch
  std::vector<uint32_t> triggered_;
  std::vector<Scored> scored_;
  std::vector<GroupStall> group_stalls_;
  std::vector<Stall> stalls_;
  // Per group: when its last job-level stall ended, or moved after it was reported (the job
  // killed or restarted within it), or -1.
  std::vector<double> restarted_;
  // Per group: when the stall that ended in its last restart began (GroupStall::began), or -1.
  std::vector<double> ended_episode_;
  std::vector<Cause> causes_;  // per machine: the last stall it may have caused
  std::vector<std::pair<uint32_t, Deviation>> odd_;  // FollowOdd's, in this frame
  std::vector<Shared> shared_;
};

}  // namespace vigil::detect
