#include "vigil/detect/peer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "vigil/core/random.h"
#include "vigil/telemetry/frame.h"
#include "vigil/telemetry/series.h"

namespace vigil::detect {
namespace {

using telemetry::SignalInfo;
using telemetry::SignalRole;
using telemetry::Worse;

// 1.4826: a MAD over this is one standard deviation of a normal sample (stats::kMadToSigma).
constexpr double kMadToSigma = 1.482602218505602;
const uint32_t kMean = FeatureOf(0, Stat::kMean);

// One machine's sample of one signal in a frame.
struct Sample {
  enum class Kind {
    kFresh,  // a new value: evidence
    kHeld,   // a copy of the previous value: the series still reports, no evidence
    kNone,   // no sample (count 0)
  };
  Kind kind = Kind::kFresh;
  double value = 0;
};
Sample Fresh(double value) { return {Sample::Kind::kFresh, value}; }
Sample Held(double value) { return {Sample::Kind::kHeld, value}; }
constexpr Sample kNone{Sample::Kind::kNone, 0};

SignalInfo PeerSignal(std::string name, Worse worse = Worse::kEither, double persistence = 0) {
  SignalInfo s;
  s.name = std::move(name);
  s.worse = worse;
  s.persistence = persistence;
  return s;
}

// A value with 1% noise, as the exporters' samples scatter.
double Noisy(Rng& rng, double value) { return value * (1 + rng.Normal(0, 0.01)); }

// The options of the tests of the other mechanisms, whose machines are mostly 50% off: evidence
// grows at one second a second however strong the deviation (strong_effect 0), so that their
// times read in the persistence. The strong effect's own tests use the defaults.
PeerOptions Steady() {
  PeerOptions o;
  o.strong_effect = 0;
  return o;
}

// Feeds frames of `machines` machines, one component each, to a PeerModel and keeps what each
// Update reported: when each machine was first triggered, the shared deviations and the stalls.
class Job {
 public:
  using SampleOf = std::function<Sample(uint32_t machine, uint32_t signal, double time)>;

  Job(uint32_t machines, std::vector<SignalInfo> signals, const PeerOptions& options = Steady(),
      std::vector<uint32_t> group_of = {})
      : machines_(machines),
        signals_(std::move(signals)),
        group_of_(std::move(group_of)),
        model_(options),
        triggered_at_(machines, -1) {}

  // One frame at `time`.
  void Step(double time, const SampleOf& sample) {
    telemetry::Frame frame;
    frame.time = time;
    frame.machines = time < late_at_ ? late_first_ : machines_;
    frame.signals = static_cast<uint32_t>(signals_.size());
    frame.cells.assign(static_cast<size_t>(frame.machines) * signals_.size(), {});
    for (uint32_t m = 0; m < frame.machines; ++m) {
      for (uint32_t s = 0; s < frame.signals; ++s) {
        const Sample x = sample(m, s, time);
        if (x.kind == Sample::Kind::kNone) continue;
        telemetry::Cell& c = frame.cells[static_cast<size_t>(m) * frame.signals + s];
        c.sum = c.min = c.max = x.value;
        c.count = 1;
        c.fresh = x.kind == Sample::Kind::kFresh ? 1 : 0;
      }
    }
    model_.Update(frame, group_of_, signals_, own_fault_since_);
    for (uint32_t m : model_.triggered()) {
      ++triggers_;
      if (triggered_at_[m] < 0) triggered_at_[m] = time;
    }
    for (const PeerModel::Shared& sh : model_.shared()) shared_.push_back({time, sh});
    for (const PeerModel::Stall& st : model_.stalls()) stalls_.push_back({time, st});
  }
  // Frames at from, from + every, ... before `to`.
  void Run(double from, double to, double every, const SampleOf& sample) {
    for (double t = from; t < to; t += every) Step(t, sample);
  }

  const PeerModel& model() const { return model_; }
  // Machines `first` and above are in no frame before `at`: the pipeline numbers machines as they
  // first appear, and a frame holds those seen so far.
  void LateFrom(uint32_t first, double at) {
    late_first_ = first;
    late_at_ = at;
  }
  // Machine m has a fault of its own under way since `since` (PeerModel::Update's
  // own_fault_since).
  void OwnFault(uint32_t m, double since) {
    own_fault_since_.resize(std::max<size_t>(own_fault_since_.size(), m + 1), -1);
    own_fault_since_[m] = since;
  }
  // When machine m was first in triggered(); -1: never.
  double TriggeredAt(uint32_t m) const { return triggered_at_[m]; }
  // The machines ever in triggered(), in order.
  std::vector<uint32_t> Named() const {
    std::vector<uint32_t> out;
    for (uint32_t m = 0; m < machines_; ++m) {
      if (triggered_at_[m] >= 0) out.push_back(m);
    }
    return out;
  }
  // The machines with a deviation under way, in order.
  std::vector<uint32_t> Deviating() const {
    std::vector<uint32_t> out;
    for (uint32_t m = 0; m < machines_; ++m) {
      if (!model_.Quiet(m)) out.push_back(m);
    }
    return out;
  }
  // Entries of triggered() over all Updates.
  int triggers() const { return triggers_; }
  // Each shared deviation and each stall reported, with the time of the Update.
  const std::vector<std::pair<double, PeerModel::Shared>>& shared() const { return shared_; }
  const std::vector<std::pair<double, PeerModel::Stall>>& stalls() const { return stalls_; }

  // Machine m's z on feature f in the last Update; nullopt: it was not scored.
  std::optional<float> ZOf(uint32_t m, uint32_t f) const {
    for (const PeerModel::Scored& s : model_.scored()) {
      if (s.machine == m && s.feature == f) return s.z;
    }
    return std::nullopt;
  }
  // Machine m's deviation under way on feature f; nullopt: none.
  std::optional<Deviation> DeviationOn(uint32_t m, uint32_t f) const {
    for (const Deviation& d : model_.DeviationsOf(m, std::numeric_limits<size_t>::max())) {
      if (d.feature == f) return d;
    }
    return std::nullopt;
  }

 private:
  uint32_t machines_;
  std::vector<SignalInfo> signals_;
  std::vector<uint32_t> group_of_;
  std::vector<double> own_fault_since_;
  uint32_t late_first_ = 0;
  double late_at_ = -std::numeric_limits<double>::infinity();
  PeerModel model_;
  std::vector<double> triggered_at_;
  int triggers_ = 0;
  std::vector<std::pair<double, PeerModel::Shared>> shared_;
  std::vector<std::pair<double, PeerModel::Stall>> stalls_;
};

// With a fault of machine m from `from` on, m alone is named, after the fault began; without,
// nobody is.
void ExpectNamedOnlyForItsFault(const Job& job, uint32_t m, bool fault, double from) {
  EXPECT_EQ(job.Named(), fault ? std::vector<uint32_t>{m} : std::vector<uint32_t>{});
  if (fault) {
    EXPECT_GT(job.TriggeredAt(m), from);
  }
}

// For each way the signal `name` is worse (of `worses`), a cadence of 5 and of 15 s, and without
// and with the fault: a job of 16 machines over 30 minutes, machine m other than 3 at
// 100 * (0.9 + step * (m % 15)), machine 3 at level(t, fault), 1% noise from Rng(seed, stream);
// only machine 3 is named, after the warm-up, and only with its fault.
void ExpectMachine3NamedOnlyForItsFault(const char* name, std::initializer_list<Worse> worses,
                                        uint64_t seed, uint64_t stream, double step,
                                        const std::function<double(double, bool)>& level) {
  for (const Worse worse : worses) {
    for (const double cadence : {5.0, 15.0}) {
      for (const bool fault : {false, true}) {
        SCOPED_TRACE(testing::Message() << "worse lower " << (worse == Worse::kLower)
                                        << ", cadence " << cadence << ", fault " << fault);
        Rng rng(seed, stream);
        Job job(16, {PeerSignal(name, worse)}, PeerOptions{});
        job.Run(0, 1800, cadence, [&](uint32_t m, uint32_t, double t) {
          return Fresh(Noisy(rng, m == 3 ? level(t, fault) : 100 * (0.9 + step * (m % 15))));
        });
        ExpectNamedOnlyForItsFault(job, 3, fault, 300);
      }
    }
  }
}

// 16 machines at `level` with 1% noise; machine m's value from `from` on is `after(m)` (its
// own level when that returns a negative value).
Job::SampleOf LevelThen(Rng& rng, double level, double from,
                        std::function<double(uint32_t)> after) {
  return [&rng, level, from, after = std::move(after)](uint32_t m, uint32_t, double t) {
    const double changed = t >= from ? after(m) : -1;
    return Fresh(Noisy(rng, changed >= 0 ? changed : level));
  };
}

// --- Features ---------------------------------------------------------------------------------

// Each statistic of a signal over a machine's components (mean, lowest, highest) is a feature
// of its own, numbered signal * 3 + stat, and judged on its own: a machine whose mean is like
// its peers' but whose components spread wider is off only on its min and max features.
TEST(PeerModelTest, EachStatisticOfASignalIsAFeatureJudgedOnItsOwn) {
  EXPECT_EQ(FeatureOf(2, Stat::kMax), 8u);
  EXPECT_EQ(SignalOfFeature(8), 2u);
  EXPECT_EQ(StatOfFeature(8), Stat::kMax);
  EXPECT_EQ(StatOfFeature(FeatureOf(5, Stat::kMin)), Stat::kMin);
  EXPECT_EQ(StatName(Stat::kMean), "mean");
  EXPECT_EQ(StatName(Stat::kMin), "min");
  EXPECT_EQ(StatName(Stat::kMax), "max");

  // Two components per machine; machine 4's mean is 100 like everyone's, its components 50 and
  // 150 where the others' lie 1 to 3 apart.
  telemetry::Frame frame;
  frame.machines = 5;
  frame.signals = 1;
  const double lows[] = {99.5, 99, 98.5, 99, 50};
  for (const double low : lows) {
    frame.cells.push_back({.sum = 200, .min = low, .max = 200 - low, .count = 2, .fresh = 2});
  }
  PeerModel model({});
  const std::vector<SignalInfo> signals = {PeerSignal("power")};
  model.Update(frame, {}, signals);
  ASSERT_EQ(model.scored().size(), 15u);
  const auto z = [&](uint32_t m, Stat stat) {
    for (const PeerModel::Scored& s : model.scored()) {
      if (s.machine == m && s.feature == FeatureOf(0, stat)) return s.z;
    }
    return std::numeric_limits<float>::quiet_NaN();
  };
  // Lows {99.5, 99, 98.5, 99, 50}: centre 99, MAD 0.5.
  EXPECT_FLOAT_EQ(z(4, Stat::kMean), 0);
  EXPECT_NEAR(z(4, Stat::kMin), -49 / (kMadToSigma * 0.5), 1e-3);
  EXPECT_NEAR(z(4, Stat::kMax), 49 / (kMadToSigma * 0.5), 1e-3);
  EXPECT_NEAR(z(0, Stat::kMin), 0.5 / (kMadToSigma * 0.5), 1e-4);
}

// Only signals whose role is kPeer are compared: an XID (a rule's signal) that differs between
// machines is not scored at all.
TEST(PeerModelTest, SignalsOfOtherRolesAreNotCompared) {
  SignalInfo xid = PeerSignal("xid");
  xid.role = SignalRole::kXid;
  Job job(5, {PeerSignal("power"), xid});
  job.Step(0, [](uint32_t m, uint32_t s, double) { return Fresh(s == 0 ? 100 : 13.0 * m); });
  ASSERT_EQ(job.model().scored().size(), 15u);
  for (const PeerModel::Scored& s : job.model().scored()) EXPECT_EQ(SignalOfFeature(s.feature), 0u);
}

// --- Centre and spread --------------------------------------------------------------------------

// The expected value is the median of the peers, and the noise scale their robust spread,
// 1.4826 x the median absolute deviation: one machine far off neither moves the centre nor
// widens the spread (the standard deviation of these values is 12.3).
TEST(PeerModelTest, CentreIsTheMedianAndSpreadTheScaledMadOfThePeers) {
  Job job(5, {PeerSignal("power")});
  const double values[] = {10, 12, 14, 16, 40};
  job.Step(0, [&](uint32_t m, uint32_t, double) { return Fresh(values[m]); });
  // Centre 14; deviations {4, 2, 0, 2, 26}, their median 2.
  const double spread = kMadToSigma * 2;
  EXPECT_NEAR(*job.ZOf(0, kMean), -4 / spread, 1e-4);
  EXPECT_NEAR(*job.ZOf(1, kMean), -2 / spread, 1e-4);
  EXPECT_FLOAT_EQ(*job.ZOf(2, kMean), 0);
  EXPECT_NEAR(*job.ZOf(3, kMean), 2 / spread, 1e-4);
  EXPECT_NEAR(*job.ZOf(4, kMean), 26 / spread, 1e-4);
}

// When the peers agree exactly their spread is zero, and the noise scale is at least the
// signal's resolution, the smallest step seen: machine 4's whole-number gauge steps from 100 to
// 101 while every other machine stays at 100. Its smoothed value moves 1 - e^(-1/8) of the
// step, 0.1175, and that is 0.1175 resolutions, not 0.1175 / (1e-6 x 100) = 1175 z. (The step
// seen is the smallest difference so far between a sample and its machine's smoothed value,
// which in this frame is the step itself.)
TEST(PeerModelTest, TheSignalsResolutionFloorsTheSpreadOfMachinesThatAgree) {
  Job job(8, {PeerSignal("gpu_temp")});
  job.Step(0, [](uint32_t, uint32_t, double) { return Fresh(100); });
  job.Step(1, [](uint32_t m, uint32_t, double) { return Fresh(m == 4 ? 101 : 100); });
  EXPECT_NEAR(*job.ZOf(4, kMean), 1 - std::exp(-1.0 / 8), 1e-4);
  EXPECT_FLOAT_EQ(*job.ZOf(0, kMean), 0);
}

// Machines that all report the same value have zero spread: every z is 0 (no division by
// zero, no NaN), nobody deviates, nothing is shared, nothing stalls.
TEST(PeerModelTest, AllMachinesEqualHaveZeroZAndNoDeviation) {
  Job job(8, {PeerSignal("power")});
  size_t scored = 0;
  for (int t = 0; t < 600; ++t) {
    job.Step(t, [](uint32_t, uint32_t, double) { return Fresh(100); });
    for (const PeerModel::Scored& s : job.model().scored()) {
      EXPECT_EQ(s.z, 0) << "machine " << s.machine << " at " << t;
      ++scored;
    }
  }
  EXPECT_EQ(scored, 600u * 8 * 3);
  for (uint32_t m = 0; m < 8; ++m) EXPECT_TRUE(job.model().Quiet(m));
  EXPECT_EQ(job.triggers(), 0);
  EXPECT_TRUE(job.shared().empty());
  EXPECT_TRUE(job.stalls().empty());
}

// With no step seen and zero spread, the noise scale's last floor is a millionth of the usual
// level: machine 5 at 100.5 among machines at exactly 100 is 0.5 / 1e-4 = 5000 noise scales
// off, but 0.5% of the expected value is no effect (10% is needed), so it never deviates.
TEST(PeerModelTest, ATinyOffsetAmongEqualPeersIsManyScalesOffButNoEffect) {
  Job job(8, {PeerSignal("power")});
  const auto sample = [](uint32_t m, uint32_t, double) { return Fresh(m == 5 ? 100.5 : 100); };
  job.Step(0, sample);
  EXPECT_NEAR(*job.ZOf(5, kMean), 5000, 1);
  job.Run(1, 900, 1, sample);
  EXPECT_TRUE(job.model().Quiet(5));
  EXPECT_EQ(job.triggers(), 0);
}

// --- A machine's deviation ------------------------------------------------------------------

// After the warm-up, machine 3 of 16 drops from 100 to 50. Twenty seconds on, its deviation
// holds its smoothed value (50 + 50 e^(-20/8) = 54.1), the expected value (the peers' 100), the
// effect (the residual over the expected value), a z far below -4, its start (the first
// sample whose smoothed value is 10% off: 401) and the time since then at full strength.
TEST(PeerModelTest, ADeviationIsTheResidualAgainstThePeers) {
  Rng rng(1, 0);
  Job job(16, {PeerSignal("power")});
  job.Run(0, 421, 1, LevelThen(rng, 100, 400, [](uint32_t m) { return m == 3 ? 50 : -1; }));
  const std::optional<Deviation> d = job.DeviationOn(3, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->feature, kMean);
  EXPECT_NEAR(d->value, 50 + 50 * std::exp(-20.0 / 8), 1);
  EXPECT_NEAR(d->expected, 100, 1);
  EXPECT_NEAR(d->effect, (d->value - d->expected) / d->expected, 1e-4);
  EXPECT_NEAR(d->effect, -0.46, 0.02);
  EXPECT_LT(d->z, -20);
  EXPECT_EQ(d->start, 401);
  EXPECT_NEAR(d->evidence, 19, 1e-3);
  EXPECT_EQ(job.Deviating(), std::vector<uint32_t>{3});  // the peers have none
}

// A deviation counts only the way that is worse for the signal: a step time (worse higher)
// that drops, or a throughput (worse lower) that rises, is scored as far off as ever but is no
// deviation and is never named; the other way, and either way for kEither, it is named once
// its evidence reaches the persistence time: at 461.
TEST(PeerModelTest, OnlyTheWayThatIsWorseForTheSignalDeviates) {
  const struct {
    Worse worse;
    double to;
    bool deviates;
  } cases[] = {
      {Worse::kEither, 50, true},  {Worse::kEither, 150, true}, {Worse::kHigher, 50, false},
      {Worse::kHigher, 150, true}, {Worse::kLower, 50, true},   {Worse::kLower, 150, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "worse " << static_cast<int>(c.worse) << ", to " << c.to);
    Rng rng(2, 0);
    Job job(16, {PeerSignal("signal", c.worse)});
    job.Run(0, 500, 1, LevelThen(rng, 100, 400, [&](uint32_t m) { return m == 3 ? c.to : -1; }));
    const float z = *job.ZOf(3, kMean);
    EXPECT_GT(std::fabs(z), 20);
    EXPECT_EQ(z > 0, c.to > 100);
    EXPECT_EQ(job.DeviationOn(3, kMean).has_value(), c.deviates);
    EXPECT_EQ(job.model().Quiet(3), !c.deviates);
    EXPECT_EQ(job.TriggeredAt(3), c.deviates ? 461 : -1);
    EXPECT_EQ(job.triggers() > 0, c.deviates);
  }
}

// triggered() lists a machine in every Update from the one where its evidence first reaches
// what it needs, for as long as its run lasts (the Detector names it once per episode).
TEST(PeerModelTest, TriggeredListsTheMachineInEveryUpdateWhileItsRunLasts) {
  Rng rng(3, 0);
  Job job(16, {PeerSignal("power")});
  job.Run(0, 500, 1, LevelThen(rng, 100, 400, [](uint32_t m) { return m == 3 ? 50 : -1; }));
  ASSERT_EQ(job.TriggeredAt(3), 461);
  EXPECT_EQ(job.triggers(), 500 - 461);
  ASSERT_EQ(job.model().triggered().size(), 1u);
  EXPECT_EQ(job.model().triggered()[0], 3u);
}

// DeviationsOf lists a machine's deviations under way, the longest first, at most n; a machine
// the model has never seen has none and is quiet.
TEST(PeerModelTest, DeviationsOfListsTheLongestFirst) {
  Rng rng(4, 0);
  Job job(16, {PeerSignal("power"), PeerSignal("tensor_active")});
  job.Run(0, 441, 1, [&](uint32_t m, uint32_t s, double t) {
    const bool off = m == 3 && t >= (s == 0 ? 400 : 420);
    return Fresh(Noisy(rng, off ? 50 : 100));
  });
  const std::vector<Deviation> all = job.model().DeviationsOf(3, 10);
  ASSERT_EQ(all.size(), 6u);  // mean, min and max of both signals
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(SignalOfFeature(all[i].feature), 0u);
    EXPECT_NEAR(all[i].evidence, 39, 1e-3);  // from 401
    EXPECT_EQ(SignalOfFeature(all[i + 3].feature), 1u);
    EXPECT_NEAR(all[i + 3].evidence, 19, 1e-3);  // from 421
  }
  const std::vector<Deviation> two = job.model().DeviationsOf(3, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(SignalOfFeature(two[0].feature), 0u);
  EXPECT_EQ(SignalOfFeature(two[1].feature), 0u);
  EXPECT_TRUE(job.model().DeviationsOf(4, 10).empty());
  EXPECT_TRUE(job.model().DeviationsOf(99, 10).empty());
  EXPECT_TRUE(job.model().Quiet(99));
}

// --- Persistence in time ----------------------------------------------------------------------

// Evidence is the time between distinct samples, not their number: a signal with its own
// persistence of 30 s is named 30 s after its deviation started (plus up to one interval),
// whether sampled every 0.25 s, 1 s or 5 s; samples every 5 s with a held copy every second
// between them give exactly the 5 s answer.
TEST(PeerModelTest, EvidenceIsTimeBetweenDistinctSamplesWhateverTheCadence) {
  const struct {
    double every;
    int fresh_every;  // frames; those between carry held copies
  } cases[] = {{0.25, 1}, {1, 1}, {5, 1}, {1, 5}};
  std::vector<double> triggered;
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "every " << c.every << ", fresh " << c.fresh_every);
    Rng rng(5, 0);
    Job job(16, {PeerSignal("signal", Worse::kEither, 30)});
    int frame = 0;
    double start = -1;
    for (double t = 0; t < 500; t += c.every, ++frame) {
      const bool fresh = frame % c.fresh_every == 0;
      job.Step(t, [&](uint32_t m, uint32_t, double) {
        const double v = Noisy(rng, m == 3 && t >= 400 ? 50 : 100);
        return fresh ? Fresh(v) : Held(v);
      });
      if (const auto d = job.DeviationOn(3, kMean); d && start < 0) start = d->start;
    }
    ASSERT_GE(start, 400);
    // The smoothed value (time constant 8 s) is 10% off 1.8 s after the step, or at the next
    // sample.
    const double interval = c.every * c.fresh_every;
    EXPECT_LE(start, 400 + std::max(8 * std::log(1.25), interval));
    EXPECT_GE(job.TriggeredAt(3) - start, 30);
    EXPECT_LE(job.TriggeredAt(3) - start, 30 + interval);
    triggered.push_back(job.TriggeredAt(3));
  }
  EXPECT_EQ(triggered[2], triggered[3]);  // held copies are no evidence
}

// A machine whose deviating value is then only held (a gauge its exporter stopped updating)
// gains no evidence while it is held, however long: it stays among the peers (it still
// reports), its run's evidence stays at the 9 s of fresh samples, and it is never named.
TEST(PeerModelTest, AHeldValueIsNoNewEvidence) {
  Rng rng(6, 0);
  Job job(16, {PeerSignal("power")});
  job.Run(0, 600, 1, [&](uint32_t m, uint32_t, double t) {
    if (m != 3 || t < 400) return Fresh(Noisy(rng, 100));
    return t < 411 ? Fresh(50) : Held(50);
  });
  const std::optional<Deviation> d = job.DeviationOn(3, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->start, 401);
  EXPECT_NEAR(d->evidence, 9, 1e-3);
  EXPECT_EQ(job.TriggeredAt(3), -1);
  EXPECT_EQ(job.model().scored().size(), 15u * 3);  // all but machine 3, which still counts
}

// A deviation shorter than the persistence time (60 s) never triggers, however many samples it
// holds: 55 s on two signals, sampled every 0.25 s (220 samples), is never named; 70 s is, 60 s
// after it started.
TEST(PeerModelTest, ADeviationShorterThanThePersistenceNeverTriggers) {
  for (const double length : {55.0, 70.0}) {
    SCOPED_TRACE(length);
    Rng rng(7, 0);
    Job job(16, {PeerSignal("power"), PeerSignal("tensor_active")});
    double start = -1;
    float evidence = 0;
    for (double t = 0; t < 600; t += 0.25) {
      job.Step(t, [&](uint32_t m, uint32_t, double) {
        return Fresh(Noisy(rng, m == 3 && t >= 400 && t < 400 + length ? 50 : 100));
      });
      // The first run of either signal: the one named first.
      for (const Deviation& d : job.model().DeviationsOf(3, 6)) {
        if (start < 0 || d.start < start) start = d.start;
        evidence = std::max(evidence, d.evidence);
      }
    }
    ASSERT_GE(start, 400);
    if (length < 60) {
      EXPECT_EQ(job.TriggeredAt(3), -1);
      EXPECT_LT(evidence, 60);
      EXPECT_GT(evidence, 50);
    } else {
      EXPECT_GE(job.TriggeredAt(3) - start, 60);
      EXPECT_LE(job.TriggeredAt(3) - start, 60.25);
    }
  }
}

// A deviation is named once it has lasted the persistence time (60 s), on one signal as on two; a
// signal with a persistence of its own (here 45 s) needs only that.
TEST(PeerModelTest, EverySignalNeedsThePersistenceOrItsOwn) {
  const struct {
    std::vector<SignalInfo> signals;
    bool both_deviate;
    double needs;
  } cases[] = {
      {{PeerSignal("power"), PeerSignal("tensor_active")}, true, 60},
      {{PeerSignal("power"), PeerSignal("tensor_active")}, false, 60},
      {{PeerSignal("cpu_idle", Worse::kEither, 45)}, false, 45},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.needs);
    Rng rng(8, 0);
    Job job(16, c.signals);
    job.Run(0, 500, 1, [&](uint32_t m, uint32_t s, double t) {
      const bool off = m == 3 && t >= 400 && (s == 0 || c.both_deviate);
      return Fresh(Noisy(rng, off ? 50 : 100));
    });
    EXPECT_EQ(job.TriggeredAt(3), 401 + c.needs);
  }
}

// With the defaults (strong_effect 0.4), evidence grows faster where the deviation is strong:
// at 0.5 of the expected value off, 1.25 s a second (named 48 s after it started); from 0.8 off,
// twice as fast (30 s at 0.85 off, half the persistence), though not for a signal with a
// persistence of its own (45 s here) nor where the peers scatter so that the deviation is under
// twice the noise threshold (here 5 of their spreads off: named after 60 s of full evidence or
// more).
TEST(PeerModelTest, AStrongDeviationGrowsItsEvidenceFaster) {
  const struct {
    const char* name;
    double off;          // the machine's share off its level
    double persistence;  // the signal's own; 0: the options'
    double needs;        // seconds from the run's start to the trigger
  } cases[] = {
      {"half off", 0.5, 0, 48},
      {"0.85 off", 0.85, 0, 30},
      {"0.3 off", 0.3, 0, 60},
      {"own persistence", 0.85, 45, 45},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Rng rng(8, 0);
    Job job(16, {PeerSignal("power", Worse::kEither, c.persistence)}, PeerOptions{});
    double start = -1;
    for (double t = 0; t < 500; t += 1) {
      job.Step(t, [&](uint32_t m, uint32_t, double) {
        return Fresh(Noisy(rng, m == 3 && t >= 400 ? 100 * (1 - c.off) : 100));
      });
      if (const auto d = job.DeviationOn(3, kMean); d && start < 0) start = d->start;
    }
    ASSERT_GE(start, 400);
    EXPECT_GE(job.TriggeredAt(3) - start, c.needs);
    EXPECT_LE(job.TriggeredAt(3) - start, c.needs + 1);  // the noise: a sample short of the rate
  }
  // Peers that scatter by 10%: machine 3 half off is 5 spreads off, under twice the threshold.
  Rng rng(8, 0);
  Job job(16, {PeerSignal("power")}, PeerOptions{});
  double start = -1;
  for (double t = 0; t < 600; t += 1) {
    job.Step(t, [&](uint32_t m, uint32_t, double) {
      return Fresh(Noisy(rng, m == 3 && t >= 400 ? 50 : 100) + rng.Normal(0, 10));
    });
    if (const auto d = job.DeviationOn(3, kMean); d && start < 0) start = d->start;
  }
  ASSERT_GE(start, 400);
  EXPECT_GE(job.TriggeredAt(3) - start, 60);
}

// A strong deviation still needs half the persistence: 0.85 off for 25 s is never named (its
// evidence, twice its 24 s of deviating samples, is short of the minute), for 35 s it is, 30 s
// after its first deviating sample.
TEST(PeerModelTest, AStrongDeviationShorterThanHalfThePersistenceNeverTriggers) {
  for (const double length : {25.0, 35.0}) {
    SCOPED_TRACE(length);
    Rng rng(7, 0);
    Job job(16, {PeerSignal("power")}, PeerOptions{});
    job.Run(0, 600, 1, [&](uint32_t m, uint32_t, double t) {
      return Fresh(Noisy(rng, m == 3 && t >= 400 && t < 400 + length ? 15 : 100));
    });
    if (length < 30) {
      EXPECT_EQ(job.TriggeredAt(3), -1);
    } else {
      EXPECT_EQ(job.TriggeredAt(3), 431);
    }
  }
}

// Evidence needs at least min_samples (3) distinct samples: every 30 s, a signal with its own
// persistence of 30 s has 30 s of evidence at its second deviating sample but is named at its
// third (60 s after the start); with min_samples 2, at its second.
TEST(PeerModelTest, EvidenceNeedsThreeDistinctSamples) {
  for (const int min_samples : {3, 2}) {
    SCOPED_TRACE(min_samples);
    Rng rng(9, 0);
    PeerOptions o = Steady();
    o.min_samples = min_samples;
    Job job(16, {PeerSignal("signal", Worse::kEither, 30)}, o);
    job.Run(0, 800, 30, LevelThen(rng, 100, 600, [](uint32_t m) { return m == 3 ? 50 : -1; }));
    EXPECT_EQ(job.TriggeredAt(3), min_samples == 3 ? 660 : 630);
  }
}

// A gap in a machine's samples of more than three of its intervals restarts its run: machine 3
// deviates from 400 but reports nothing from 440 to 449; its run starts again at 450 and it is
// named 60 s later, not at 461.
TEST(PeerModelTest, AGapInTheSamplesRestartsTheRun) {
  Rng rng(10, 0);
  Job job(16, {PeerSignal("power")});
  job.Run(0, 530, 1, [&](uint32_t m, uint32_t, double t) {
    if (m != 3) return Fresh(Noisy(rng, 100));
    if (t >= 440 && t < 450) return kNone;
    return Fresh(Noisy(rng, t >= 400 ? 50 : 100));
  });
  const std::optional<Deviation> d = job.DeviationOn(3, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->start, 450);
  EXPECT_EQ(job.TriggeredAt(3), 510);
}

// A duration signal's value is the interval that ends at its sample (a step time: the last
// iteration's), so a run it shows is known to have lasted only to the start of its latest
// deviating sample's interval. Every 15 s, machine 3's step time reads 2.5 s among peers at 2 s
// in the samples of 405-465 s (60 s apart: a GPU clock dip of 59 s whose last iteration ended
// after it): as a step time it is 57.5 s proven and never named; as a gauge of no duration, 60 s,
// named at 465 s. Slow for good, the step time is named at 480 s.
TEST(PeerModelTest, ADurationSignalsRunLastsToItsLatestIntervalsStart) {
  const struct {
    bool duration;
    double until;
    double named;
  } cases[] = {{true, 470, -1}, {false, 470, 465}, {true, 1e9, 480}};
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "duration " << c.duration << " until " << c.until);
    Rng rng(14, 0);
    SignalInfo step = PeerSignal("step_time", Worse::kHigher);
    step.duration = c.duration;
    Job job(16, {step});
    job.Run(0, 700, 15, [&](uint32_t m, uint32_t, double t) {
      return Fresh(Noisy(rng, m == 3 && t >= 400 && t < c.until ? 2.5 : 2.0));
    });
    EXPECT_EQ(job.TriggeredAt(3), c.named);
  }
}

// A change of the whole job reaches staggered scrapes one machine at a time: every 15 s, machine m
// at seconds m, m + 15, ... Machine 3 runs at 50 among peers at 100 from 400; its run would reach
// the persistence time (60 s) at its sample of 468. When the whole job collapses to 5 at 466, that
// sample is judged against 13 peers not yet sampled since: a step as large as a deviation counts
// only from the machine's next sample, by which every peer has collapsed too, and 3 is not named.
// Where 3 alone steps to 5, it is named at that next sample (483), one interval late. A step
// waits once per run: a machine that flaps between 100 and 20 at every sample from 400 (each
// deviating sample a step) is named at its second chance, not never.
TEST(PeerModelTest, AStepIsJudgedOnlyOnceEveryPeerHasBeenSampledSince) {
  enum Case { kWholeJob, kAlone, kFlapping };
  for (const Case c : {kWholeJob, kAlone, kFlapping}) {
    SCOPED_TRACE(c);
    Rng rng(12, 0);
    Job job(16, {PeerSignal("power")});
    std::vector<double> last(16, 0);
    job.Run(0, 560, 1, [&](uint32_t m, uint32_t, double t) {
      if (static_cast<int>(t) % 15 != static_cast<int>(m) % 15) return Held(last[m]);
      double v = 100;
      if (m == 3 && t >= 400) v = 50;
      if (t >= 466 && (c == kWholeJob || (c == kAlone && m == 3))) v = 5;
      if (c == kFlapping && m == 3 && t >= 400) v = static_cast<int>(t) % 30 == 18 ? 20 : 100;
      last[m] = Noisy(rng, v);
      return Fresh(last[m]);
    });
    if (c == kFlapping) {
      EXPECT_GT(job.TriggeredAt(3), 0);
    } else {
      EXPECT_EQ(job.TriggeredAt(3), c == kWholeJob ? -1 : 483);
    }
  }
}

// A job that pauses (a checkpoint: no iteration ends, and every exporter holds its step time)
// is no time in which a machine was seen slow. Staggered scrapes every 15 s; the job pauses for
// 30 s from 400 s; machine 3 is 1.5 times slower than its peers from 380 s. Its deviating
// samples at 393 and 438 s lie 45 s apart, of which more than 15 s (and at most 30) the job
// spent with most of its machines overdue (no fresh sample for 1.5 of their paces): left out,
// machine 3 slow until 455 s (30 s of training slow, 60 s of wall time) is not named, and slow
// for good is named at 483 s instead of 453. A pause of machine 3 alone (its own values held
// while its peers report: a hang of its own) is evidence, as before: named at 453 s, also beside
// half the group whose exporters have sent one held value since 200 s (machines left out of a
// restarted job: after 2 minutes without a fresh sample they no longer vote). So is the
// time of a machine that reports on time while the others pause, also where one of its samples
// in the pause does not deviate (its run's gap then spans two fresh samples, each on time).
TEST(PeerModelTest, TimeTheJobSpentPausedIsNoEvidence) {
  enum Case { kBriefly, kForGood, kAlone, kAloneBesideFrozen, kOnTime, kOnTimeWithADip };
  for (const Case c : {kBriefly, kForGood, kAlone, kAloneBesideFrozen, kOnTime, kOnTimeWithADip}) {
    SCOPED_TRACE(c);
    Rng rng(13, 0);
    Job job(16, {PeerSignal("step_time", Worse::kHigher)});
    std::vector<double> last(16, 0);
    job.Run(0, 700, 1, [&](uint32_t m, uint32_t, double t) {
      if (c == kAloneBesideFrozen && m >= 8 && t >= 200) return Held(last[m]);
      const bool others = c == kOnTime || c == kOnTimeWithADip;
      const bool alone = c == kAlone || c == kAloneBesideFrozen;
      const bool paused = t >= 400 && t < 430 && (alone ? m == 3 : !others || m != 3);
      if (static_cast<int>(t) % 15 != static_cast<int>(m) % 15 || paused) return Held(last[m]);
      const bool slow =
          m == 3 && t >= 380 && (c != kBriefly || t < 455) && (c != kOnTimeWithADip || t != 423);
      last[m] = Noisy(rng, slow ? 1.5 : 1.0);
      return Fresh(last[m]);
    });
    EXPECT_EQ(job.TriggeredAt(3), c == kBriefly ? -1 : c == kForGood ? 483 : 453);
    EXPECT_EQ(job.Named(), c == kBriefly ? std::vector<uint32_t>{} : std::vector<uint32_t>{3});
  }
}

// A 16-machine job's step times from 0 to `end`, each machine scraped every 15 s, staggered
// (machine m at seconds m, m + 15, ...), every value held while the job is paused(t); machine 3
// slow(t) times its peers' level (Rng seeded with `seed`).
void RunStaggeredAroundPauses(Job& job, uint64_t seed, double end,
                              const std::function<bool(double)>& paused,
                              const std::function<double(double)>& slow) {
  Rng rng(seed, 0);
  std::vector<double> last(16, 0);
  job.Run(0, end, 1, [&](uint32_t m, uint32_t, double t) {
    if (static_cast<int>(t) % 15 != static_cast<int>(m) % 15 || paused(t)) return Held(last[m]);
    last[m] = Noisy(rng, m == 3 ? slow(t) : 1.0);
    return Fresh(last[m]);
  });
}

// A pause soon after another is no evidence either. The job pauses 130 s from 250 s (an
// evaluation) and 110 s from 450 s (a checkpoint, 70 s after the first); scrapes staggered every
// 15 s. The first pause's gap raised every machine's pace to it at once, and at the 15-s gaps
// after it the pace fell by a fifth of the difference a sample: at 450 s it stood near 50 s, so
// the job counted as paused only from 1.5 of those paces, and machine 3, slow from 430 to 590 s
// (50 s of training slow, its value at 443 s held through the checkpoint), was named at 588 s.
// A gap the job spent paused is no pace of its training: the pace falls at once after it.
// Slow for good, machine 3 is named at 603 s, as where the checkpoint is the only pause.
TEST(PeerModelTest, APauseSoonAfterAnotherIsNoEvidenceEither) {
  enum Case { kBriefly, kForGood, kForGoodOnePause };
  for (const Case c : {kBriefly, kForGood, kForGoodOnePause}) {
    SCOPED_TRACE(c);
    Job job(16, {PeerSignal("step_time", Worse::kHigher)});
    RunStaggeredAroundPauses(
        job, 16, 800,
        [&](double t) {
          return (t >= 250 && t < 380 && c != kForGoodOnePause) || (t >= 450 && t < 560);
        },
        [&](double t) { return t >= 430 && (c != kBriefly || t < 590) ? 1.5 : 1.0; });
    EXPECT_EQ(job.TriggeredAt(3), c == kBriefly ? -1 : 603);
    EXPECT_EQ(job.Named(), c == kBriefly ? std::vector<uint32_t>{} : std::vector<uint32_t>{3});
  }
}

// A pause begins when half the machines have had their latest fresh sample, not when they are
// overdue (1.5 of their paces later). After jobgen's seed 107,101 (256 machines, fault-free, 15
// s): machine 3's step time reads 1.2 times its peers' (a GPU clock dip of 59 s) in its samples
// of 318-363 s, 45 s of evidence; the job pauses from 350 s (an 82-s evaluation), each gauge
// showing its last iteration until the machine's next scrape, held from 365 s; machine 3's first
// iteration after the pause, at its sample of 453 s (the one of 438 s came just before the pause
// ended), is slow again. The pause clock began at 380 s, the 22 s before counted as evidence, and
// machine 3 was named at 453 s with 69 s; now the gap adds the one interval its lateness leaves
// (60 s, less the iteration: 58.8 s proven), and it is not named. The cost: slow for good from
// 315 s, it is named at its next sample (468 s), one interval later than before.
TEST(PeerModelTest, ThePausesFirstSecondsAreNoEvidence) {
  for (const bool for_good : {false, true}) {
    SCOPED_TRACE(for_good);
    SignalInfo step = PeerSignal("step_time", Worse::kHigher);
    step.duration = true;
    Job job(16, {step});
    RunStaggeredAroundPauses(
        job, 18, 800, [&](double t) { return t >= 365 && t < 439; },
        [&](double t) {
          return t >= 315 && (for_good || t < 364 || (t >= 439 && t < 460)) ? 1.2 : 1.0;
        });
    EXPECT_EQ(job.TriggeredAt(3), for_good ? 468 : -1);
    EXPECT_EQ(job.Named(), for_good ? std::vector<uint32_t>{3} : std::vector<uint32_t>{});
  }
}

// A pause counts for at most 2 minutes of a gap (a machine's lateness and the vote stop there), so
// a checkpoint of 3 minutes breaks a run: the part the clock did not cover is no evidence.
// Scrapes staggered every 15 s; the job pauses 180 s from 400 s, alone or 30 s after a 2-minute
// evaluation; machine 3, healthy, is 1.3 times slower than its peers for 20 s before the pause
// and 25 s after it. A run breaks at a gap beyond three of the machine's intervals, less the
// pause's clocked part; but the interval followed the paused gaps too (36 s after the checkpoint's
// gap, 28 s 30 s after the evaluation's), so the 82 s beyond the clocked part did not break it,
// and machine 3 was named at 603 s. Slow for good, it is named as a new run after the pause.
TEST(PeerModelTest, ACheckpointOfThreeMinutesBreaksARun) {
  enum Case { kAlone, kAfterAnother, kAloneForGood };
  for (const Case c : {kAlone, kAfterAnother, kAloneForGood}) {
    SCOPED_TRACE(c);
    Job job(16, {PeerSignal("step_time", Worse::kHigher)});
    RunStaggeredAroundPauses(
        job, 17, 900,
        [&](double t) {
          return (t >= 400 && t < 580) || (c == kAfterAnother && t >= 250 && t < 370);
        },
        [&](double t) { return t >= 380 && (c == kAloneForGood || t < 605) ? 1.3 : 1.0; });
    EXPECT_EQ(job.TriggeredAt(3), c == kAloneForGood ? 648 : -1);
    EXPECT_EQ(job.Named(), c == kAloneForGood ? std::vector<uint32_t>{3} : std::vector<uint32_t>{});
  }
}

// A pause is no break either: a deviation that lasts across a checkpoint longer than a run's
// gap (three intervals) goes on after it with the evidence it had. Staggered scrapes every 5 s;
// machine 3 1.5 times slower from 360 s; the job pauses from 400 to 500 s, every exporter holding
// its step time (each machine still reports: the pause clock runs for as long as it lasts, not
// only until the machines' last fresh samples are three intervals old). Machine 3's run has about
// 35 s of evidence at its last sample before the pause (398 s); of the 105-s gap to its next
// (503 s) the part beyond the pause counts, and it is named at 523 s, not 60 s after the pause
// as a new run would be (563 s, without either rule).
TEST(PeerModelTest, ADeviationGoesOnAcrossAJobPause) {
  Rng rng(15, 0);
  Job job(16, {PeerSignal("step_time", Worse::kHigher)});
  std::vector<double> last(16, 0);
  job.Run(0, 700, 1, [&](uint32_t m, uint32_t, double t) {
    if (static_cast<int>(t) % 5 != static_cast<int>(m) % 5 || (t >= 400 && t < 500)) {
      return Held(last[m]);
    }
    last[m] = Noisy(rng, m == 3 && t >= 360 ? 1.5 : 1.0);
    return Fresh(last[m]);
  });
  EXPECT_EQ(job.TriggeredAt(3), 523);
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
}

// Step times exported once an iteration (a row per step, nothing held between them): 2-s
// iterations, each machine at its own phase, machine 3's 3 s where `slow`. No rows while `paused`,
// and then frames only at a scrape of another exporter every 5 s (frames come only with rows).
void RunIterationRows(Job& job, uint64_t seed, double end,
                      const std::function<bool(double)>& paused,
                      const std::function<bool(double)>& slow) {
  Rng rng(seed, 0);
  std::vector<double> due(16);
  for (uint32_t m = 0; m < 16; ++m) due[m] = 1 + m % 2;
  for (double t = 1; t < end; ++t) {
    const bool silent = paused(t);
    if (silent && static_cast<int>(t) % 5 != 3) continue;
    job.Step(t, [&](uint32_t m, uint32_t, double at) {
      if (silent || at < due[m]) return kNone;
      const double step = m == 3 && slow(at) ? 3 : 2;
      due[m] = at + step;
      return Fresh(Noisy(rng, step));
    });
  }
}

// Such a step time falls silent on every machine as the job pauses: the pause is clocked for as
// long as most machines are silent, not only until their last rows are three intervals old, and
// up to the first frame after it, whose rows end it. The job pauses from 400 to 421 s; machine 3,
// healthy, is 1.5 times slower for 28 s before the pause and 23 s after it: 51 s of training, no
// more evidence than that (a reviewer's generator named such a host in 6 of 20 seeds, with 7-12 s
// of the pause counted). Slow for good, it is named 60 s of training after its onset.
TEST(PeerModelTest, APauseOfAStepTimeExportedOnceAnIterationIsClockedWhole) {
  for (const bool for_good : {false, true}) {
    SCOPED_TRACE(for_good);
    Job job(16, {PeerSignal("step_time", Worse::kHigher)});
    RunIterationRows(
        job, 19, 700, [](double t) { return t >= 400 && t < 421; },
        [&](double t) { return t >= 372 && (for_good || t < 444); });
    EXPECT_EQ(job.TriggeredAt(3), for_good ? 451 : -1);
    EXPECT_EQ(job.Named(), for_good ? std::vector<uint32_t>{3} : std::vector<uint32_t>{});
  }
}

// A machine late after a paused gap is late against that gap's part spent training, not against
// the gap: with no sample between two close pauses (20 s, 2 s of training, 101 s), the first
// pause's gap as its pace left part of the second as evidence. Machine 3, healthy, 1.5 times
// slower over 18 s before the first, the training between them and 25 s after the second (45 s
// of training), is not named (it was at 544 s); slow for good, 60 s of training after its onset
// (it was at 544 s).
TEST(PeerModelTest, ASecondPauseBeforeTheNextSampleIsNoEvidenceEither) {
  for (const bool for_good : {false, true}) {
    SCOPED_TRACE(for_good);
    Job job(16, {PeerSignal("step_time", Worse::kHigher)});
    RunIterationRows(
        job, 20, 800, [](double t) { return (t >= 400 && t < 420) || (t >= 422 && t < 523); },
        [&](double t) { return t >= 382 && (for_good || t < 548); });
    EXPECT_EQ(job.TriggeredAt(3), for_good ? 562 : -1);
    EXPECT_EQ(job.Named(), for_good ? std::vector<uint32_t>{3} : std::vector<uint32_t>{});
  }
}

// A straggler in a synchronous job stretches every rank's iteration: each step-time gauge
// changes at the straggler's pace, so most machines are overdue at once, as in a pause. It is no
// pause after their first stretched gap: their pace rises at once to a longer gap (and falls
// slowly), and machine 3's gaps leave out nothing beyond its own. Scraped every second, 2.3-s
// iterations become 5 or 12 s. The first stretched gap is a pause as far as the step times can
// tell: at 5 s machine 3 is named when it is without the pause rule (with the interval alone as
// the pace, 5 s later); at 12 s the gap's part from 1.5 paces on (8.5 s) is left out, and it is
// named one gap later than without the rule (437 s).
TEST(PeerModelTest, AStragglerThatStretchesEveryRanksIterationIsNoJobPause) {
  const struct {
    int every;
    double healthy, slow, named;
  } cases[] = {{1, 2.3, 5, 431}, {1, 2.3, 12, 449}};
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "every " << c.every << " s, " << c.slow << " s");
    Rng rng(14, 0);
    Job job(16, {PeerSignal("step_time", Worse::kHigher)}, PeerOptions{});
    std::vector<double> last(16, 0);
    std::vector<int> seen(16, -1);  // the iteration each machine's gauge shows
    double next_end = 0;            // when the job's next iteration ends, on every rank
    int iterations = 0;
    job.Run(0, 600, 1, [&](uint32_t m, uint32_t, double t) {
      while (next_end <= t) {
        next_end += t >= 400 ? c.slow : c.healthy;
        ++iterations;
      }
      const bool scraped = static_cast<int>(t) % c.every == static_cast<int>(m) % c.every;
      if (!scraped || seen[m] == iterations) return Held(last[m]);
      seen[m] = iterations;
      last[m] = Noisy(rng, m == 3 && t >= 400 ? c.slow : c.healthy);
      return Fresh(last[m]);
    });
    EXPECT_EQ(job.TriggeredAt(3), c.named);
  }
}

// --- The usual level ----------------------------------------------------------------------------

// A feature's usual level is the median of its centre over the last 30 minutes: a 30 s spike
// of the whole group to ten times its level does not move it, a change that lasts 20 minutes
// does. Seen through the stall rule (a centre under a fifth of the level, most features, 5
// minutes): a later drop to 150 is no stall after the spike (level 100) and a job-level stall
// after the lasting change (level 1000), reported once, 300 s after it began: when the centre
// of the smoothed values (time constant 8 s) fell under 200, 8 ln(850 / 50) = 22.7 s after the
// drop.
TEST(PeerModelTest, TheUsualLevelIgnoresASpikeAndFollowsALastingChange) {
  for (const bool lasting : {false, true}) {
    SCOPED_TRACE(lasting);
    Rng rng(11, 0);
    Job job(8, {PeerSignal("power")});
    job.Run(0, 2400, 1, [&](uint32_t, uint32_t, double t) {
      double v = 100;
      if (t >= 600 && t < (lasting ? 1800 : 630)) v = 1000;
      if (t >= 1800) v = 150;
      return Fresh(Noisy(rng, v));
    });
    if (!lasting) {
      EXPECT_TRUE(job.stalls().empty());
      continue;
    }
    ASSERT_EQ(job.stalls().size(), 1u);
    const PeerModel::Stall& stall = job.stalls()[0].second;
    EXPECT_EQ(stall.group, 0u);
    EXPECT_NEAR(stall.start, 1800 + 8 * std::log(850.0 / 50), 1.5);
    EXPECT_EQ(job.stalls()[0].first, stall.start + 300);
  }
}

// After the warm-up a feature's stall stays out of its usual level until it has lasted a third
// of the window (10 minutes), then becomes the new normal (a lighter load after a restart).
// While the centre is under half the level, the effect is measured against half the level, so a
// machine still busy (machine 7 at 30 while its peers stall at 5) shows the level: effect 25 / 50
// against a level of 100 while the stall is young, 25 / 5 once the level is 5. A stall of most of
// the group's features (here power alone, with no second signal that trains on) is a job-level
// one (5 minutes), the job's event however long it lasts: it never becomes the level, and no
// peer is ever named for stalling.
TEST(PeerModelTest, AStallStaysOutOfTheUsualLevelForTenMinutes) {
  for (const bool job_level : {false, true}) {
    SCOPED_TRACE(job_level);
    Rng rng(12, 0);
    std::vector<SignalInfo> signals{PeerSignal("power")};
    if (!job_level) signals.push_back(PeerSignal("tensor_active"));
    Job job(16, signals);
    const auto power =
        LevelThen(rng, 100, 600, [](uint32_t m) -> double { return m == 7 ? 30 : 5; });
    const Job::SampleOf sample = [&](uint32_t m, uint32_t s, double t) {
      return s == 0 ? power(m, s, t) : Fresh(Noisy(rng, 100));
    };
    job.Run(0, 921, 1, sample);
    std::optional<Deviation> d = job.DeviationOn(7, kMean);
    ASSERT_TRUE(d.has_value());
    EXPECT_NEAR(d->effect, 0.5, 0.02);
    EXPECT_NEAR(d->effect, (d->value - d->expected) / 50, 0.01);
    if (job_level) {
      // The stall began when the smoothed centre fell under 20: 8 ln(95 / 15) = 14.8 s after
      // 600.
      ASSERT_EQ(job.stalls().size(), 1u);
      EXPECT_NEAR(job.stalls()[0].second.start, 600 + 8 * std::log(95.0 / 15), 1.5);
      EXPECT_EQ(job.stalls()[0].first, job.stalls()[0].second.start + 300);
    } else {
      EXPECT_TRUE(job.stalls().empty());
    }

    job.Run(921, 1501, 1, sample);  // almost 15 minutes of stall: the level is still 100
    d = job.DeviationOn(7, kMean);
    ASSERT_TRUE(d.has_value());
    EXPECT_NEAR(d->effect, 0.5, 0.02);

    job.Run(1501, 2801, 1, sample);  // the feature's level has become 5, the job's has not
    d = job.DeviationOn(7, kMean);
    ASSERT_TRUE(d.has_value());
    EXPECT_NEAR(d->effect, job_level ? 0.5 : 5, job_level ? 0.02 : 0.3);
    EXPECT_EQ(job.stalls().size(), job_level ? 1u : 0u);
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{7});
  }
}

// A job-level stall is most of a group's features stalled for stall_s (5 minutes), reported
// once with its start (when the smoothed centre fell under a fifth of the level: 8 ln(98 / 18)
// = 13.6 s after the drop to 2); half of them (one of two signals, 3 of 6 features) is not
// most.
TEST(PeerModelTest, AJobLevelStallIsMostFeaturesStalledForFiveMinutes) {
  for (const bool both : {true, false}) {
    SCOPED_TRACE(both);
    Rng rng(13, 0);
    Job job(8, {PeerSignal("power"), PeerSignal("tensor_active")});
    job.Run(0, 1200, 1, [&](uint32_t, uint32_t s, double t) {
      const bool stalled = t >= 600 && (s == 0 || both);
      return Fresh(Noisy(rng, stalled ? 2 : 100));
    });
    if (!both) {
      EXPECT_TRUE(job.stalls().empty());
      continue;
    }
    ASSERT_EQ(job.stalls().size(), 1u);
    EXPECT_NEAR(job.stalls()[0].second.start, 600 + 8 * std::log(98.0 / 18), 1.5);
    EXPECT_EQ(job.stalls()[0].first, job.stalls()[0].second.start + 300);
    EXPECT_EQ(job.triggers(), 0);
  }
}

// A hang: every rank stalls within 3 s (tensor activity and traffic to 2%, power from 330 W, each
// sample scattered by 15% as long iterations are sampled at chance phases, to 160 W as they spin in
// their collective); the hung machine 5 spins in its own kernel at 193 W. The noise learned in
// training hides its 33 W, but against the stalled peers' scatter about each other it differs,
// and the job-level stall names it, with its power as evidence. Not named: where a second
// machine differs as long (9, at 130 W), the peers cannot tell; a machine that differs for
// less than the persistence time (9, a 15-s burst at the stall's report; 9's traffic for 66 s,
// a signal whose own persistence is 120 s) does not count, nor one whose own values have stopped
// differing (9 at 100 W for 70 s, ended 5 s before the report, its smoothed value not yet back),
// nor a value its exporter holds (5's power repeated, not sampled).
TEST(PeerModelTest, AJobLevelStallNamesTheOneMachineThatDiffersFromItsStalledPeers) {
  enum class Case { kOne, kTwo, kBurst, kHeld, kSlowSignal, kEnded };
  for (const Case c :
       {Case::kOne, Case::kTwo, Case::kBurst, Case::kHeld, Case::kSlowSignal, Case::kEnded}) {
    SCOPED_TRACE(static_cast<int>(c));
    Rng rng(31, 0);
    Job job(16, {PeerSignal("power"), PeerSignal("tensor_active"),
                 PeerSignal("traffic", Worse::kEither, 120)});
    job.Run(0, 1000, 1, [&](uint32_t m, uint32_t s, double t) {
      if (t < 400 + m % 4) {
        return Fresh(s > 0 ? Noisy(rng, 100) : 330 * (0.85 + 0.3 * rng.Uniform()));
      }
      if (s == 2 && m == 9 && c == Case::kSlowSignal && t >= 650) return Fresh(Noisy(rng, 20));
      if (s > 0) return Fresh(Noisy(rng, 2));
      if (m == 5) return c == Case::kHeld && t >= 420 ? Held(193) : Fresh(Noisy(rng, 193));
      if (m == 9 && (c == Case::kTwo || (c == Case::kBurst && t >= 705 && t < 720))) {
        return Fresh(Noisy(rng, 130));
      }
      if (m == 9 && c == Case::kEnded && t >= 641 && t < 711) return Fresh(Noisy(rng, 100));
      return Fresh(Noisy(rng, 160));
    });
    ASSERT_EQ(job.stalls().size(), 1u);
    const PeerModel::Stall& stall = job.stalls()[0].second;
    EXPECT_NEAR(job.stalls()[0].first, 716, 3);
    if (c == Case::kTwo || c == Case::kHeld) {
      EXPECT_FALSE(stall.machine.has_value());
      EXPECT_TRUE(stall.deviations.empty());
      continue;
    }
    ASSERT_TRUE(stall.machine.has_value());
    EXPECT_EQ(*stall.machine, 5u);
    ASSERT_FALSE(stall.deviations.empty());
    for (const Deviation& d : stall.deviations) {
      EXPECT_EQ(SignalOfFeature(d.feature), 0u);
      EXPECT_NEAR(d.value, 193, 4);
      EXPECT_NEAR(d.expected, 160, 4);
      EXPECT_GE(d.z, 4);
    }
  }
}

// A stall judges each signal the way that is worse for it, as training does, but either way on a
// feature it took to nothing. Every machine's GPU cools from 60 to 40 C as the job hangs at
// 400 s, and its traffic (less is worse) stalls at 2: machine 5 cooler than its stalled peers
// (25 C) is no cause of the stall and nobody is named; hotter than them (55 C), it is; still
// moving traffic (30) where its peers move none, it is too.
TEST(PeerModelTest, AStallNamesAMachineOnlyTheWayThatIsWorseForTheSignal) {
  enum class Case { kCooler, kHotter, kStillMoving };
  for (const Case c : {Case::kCooler, Case::kHotter, Case::kStillMoving}) {
    SCOPED_TRACE(static_cast<int>(c));
    Rng rng(31, 0);
    Job job(16,
            {PeerSignal("power"), PeerSignal("tensor_active"), PeerSignal("traffic", Worse::kLower),
             PeerSignal("nvlink"), PeerSignal("gpu_temp", Worse::kHigher, 120)});
    job.Run(0, 1000, 1, [&](uint32_t m, uint32_t s, double t) {
      const bool hung = t >= 400 + m % 4, odd = m == 5 && t >= 450;
      if (s == 4) {
        const double temp = c == Case::kCooler ? 25 : c == Case::kHotter ? 55 : 40;
        return Fresh(Noisy(rng, !hung ? 60 : odd ? temp : 40));
      }
      if (s == 2 && odd && c == Case::kStillMoving) return Fresh(Noisy(rng, 30));
      if (s > 0) return Fresh(Noisy(rng, hung ? 2 : 100));  // stalled
      return Fresh(Noisy(rng, hung ? 160 : 330));
    });
    ASSERT_EQ(job.stalls().size(), 1u);
    const PeerModel::Stall& stall = job.stalls()[0].second;
    if (c == Case::kCooler) {
      EXPECT_FALSE(stall.machine.has_value());
      continue;
    }
    ASSERT_TRUE(stall.machine.has_value());
    EXPECT_EQ(*stall.machine, 5u);
  }
}

// A hang in a pipeline: machines 14 and 15 (a stage of two, sharing a level) drew 1.7 times the
// others' 250 W in training; at 600 every rank spins in its collective at 160 W, and tensor
// activity and traffic stall. Power (lower is worse) falls to 0.64 of its level, no stall of its
// own, so the ordinary path judges it: against the placements of training, and against its own
// past, the stage would be 41% under its expected 272 W and named, though it only follows the
// group. During the group's stall a machine deviates only when it does against the peers both as
// placed and all alike, its own past does not count, and nobody is named. The hung machine 5,
// idle at 120 W, is off both ways and still named (against the nearer reference, the stalled
// peers' 160 W), and the job-level stall names it. Nor is a placement learned from the stall:
// when the job restarts at 1800 and the stage draws 425 W again, it is where it was placed
// before, not a move to be named for (a placement followed through the stall would have moved
// 12% and been kept: a power either way worse would name the stage then). Each case with power
// lower-is-worse and either-way-worse (against its own past, a machine is judged only when it
// moves away from the centre; one at the centre never is, either way).
TEST(PeerModelTest, DuringAStallAStageThatDrewMoreInTrainingIsNotOffForItsPlacement) {
  enum class Case { kQuiet, kHung, kRestart };
  for (const auto& cw : {std::pair{Case::kQuiet, Worse::kLower},
                         {Case::kHung, Worse::kLower},
                         {Case::kRestart, Worse::kLower},
                         {Case::kQuiet, Worse::kEither},
                         {Case::kHung, Worse::kEither},
                         {Case::kRestart, Worse::kEither}}) {
    const Case c = cw.first;
    const Worse worse = cw.second;
    SCOPED_TRACE(static_cast<int>(c) * 10 + static_cast<int>(worse));
    Rng rng(33, 0);
    Job job(16, {PeerSignal("power", worse), PeerSignal("tensor_active"), PeerSignal("traffic")});
    const double end = c == Case::kRestart ? 1800 : 1000;
    job.Run(0, c == Case::kRestart ? 2700 : end, 1, [&](uint32_t m, uint32_t s, double t) {
      if (t < 600 || t >= end) return Fresh(Noisy(rng, s > 0 ? 100 : m >= 14 ? 425 : 250));
      if (s > 0) return Fresh(Noisy(rng, 2));
      return Fresh(Noisy(rng, c == Case::kHung && m == 5 ? 120 : 160));
    });
    ASSERT_EQ(job.stalls().size(), 1u);
    const PeerModel::Stall& stall = job.stalls()[0].second;
    EXPECT_EQ(stall.machine, c == Case::kHung ? std::optional<uint32_t>(5) : std::nullopt);
    EXPECT_EQ(job.Named(), c == Case::kHung ? std::vector<uint32_t>{5} : std::vector<uint32_t>{});
    if (c == Case::kHung) {
      const std::optional<Deviation> d = job.DeviationOn(5, kMean);
      ASSERT_TRUE(d.has_value());
      EXPECT_NEAR(d->expected, 160, 5);
    }
  }
}

// The hang of AJobLevelStallNamesTheOneMachineThatDiffersFromItsStalledPeers at the cadences of
// Prometheus (a fresh sample every 30 or 60 s, each machine scraped at its own phase, its value
// held in between, frames every second). The hung machine 5 is named. What counts is the time
// between its fresh samples whose own value differs, not how long its smoothed value (whose time
// constant is the interval) stays off, so:
// - kBurst: machine 9's burst of 57 s that ends just before the report (its smoothed value still
//   off by then) is no evidence: 5 is named, not "cannot tell";
// - kBurstOnly: the same burst in a hang without a hung machine names nobody;
// - kMissed: 5 misses one scrape shortly before the report: its run goes on;
// - kHeld (at 30 s: at 60 s a hold longer than three intervals does not fit in the stall's five
//   minutes after a run): 5's exporter holds its value for four of its intervals, ending 40 s
//   before the report: its run ends there, and what comes after is too short; nobody is named.
TEST(PeerModelTest, AStallCountsAMachinesDifferenceOnlyBetweenItsFreshSamplesThatDiffer) {
  enum class Case { kOne, kBurst, kBurstOnly, kMissed, kHeld };
  for (const double every : {30.0, 60.0}) {
    double report = -1;  // when kOne's stall is reported
    for (const Case c : {Case::kOne, Case::kBurst, Case::kBurstOnly, Case::kMissed, Case::kHeld}) {
      if (c == Case::kHeld && every != 30) continue;
      SCOPED_TRACE(every * 10 + static_cast<int>(c));
      Rng rng(37, 0);
      Job job(16, {PeerSignal("power"), PeerSignal("tensor_active"), PeerSignal("traffic")});
      std::vector<double> held(16 * 3, 0);
      // Machine 9's first fresh sample from every + 60 s before the report.
      const double phase9 = std::floor(9 * every / 16);
      const double burst = phase9 + every * std::ceil((report - every - 60 - phase9) / every);
      const auto value = [&](uint32_t m, uint32_t s, double t) {
        if (t < 400 + m % 4) return s > 0 ? Noisy(rng, 100) : 330 * (0.85 + 0.3 * rng.Uniform());
        if (s > 0) return Noisy(rng, 2);
        if (m == 5 && c != Case::kBurstOnly) return Noisy(rng, 193);
        if (m == 9 && (c == Case::kBurst || c == Case::kBurstOnly) && t >= burst - 1 &&
            t < burst + 56) {
          return Noisy(rng, 20);
        }
        return Noisy(rng, 160);
      };
      job.Run(0, 1400, 1, [&](uint32_t m, uint32_t s, double t) {
        const double phase = std::fmod(t - std::floor(m * every / 16), every);
        if (c == Case::kMissed && m == 5 && t >= report - 40 - 2 * every &&
            t < report - 40 - every) {
          return kNone;
        }
        const bool holding =
            c == Case::kHeld && m == 5 && t >= report - 40 - 4 * every && t < report - 40;
        if ((phase != 0 || holding) && t > 0) return Held(held[m * 3 + s]);
        held[m * 3 + s] = value(m, s, t);
        return Fresh(held[m * 3 + s]);
      });
      ASSERT_EQ(job.stalls().size(), 1u);
      if (c == Case::kOne) report = job.stalls()[0].first;
      const PeerModel::Stall& stall = job.stalls()[0].second;
      const bool nobody = c == Case::kBurstOnly || c == Case::kHeld;
      EXPECT_EQ(stall.machine, nobody ? std::nullopt : std::optional<uint32_t>(5));
    }
  }
}

// Two hangs with a short restart between them (jobgen's lost GPU, every rank spinning in NCCL
// until the job is killed and restarted after about 12 minutes, then a rank that hangs 3 minutes
// into the restart). Power never stalls (every rank spins at about half its level), so its usual
// level follows it: over the second hang it falls from training's 330 W to the hang's 160 W,
// and power would no longer count as moved by the stall. What the stall moved is judged against the
// levels from before it began: the second hang's stall names the hung machine 5, spinning at 193 W.
TEST(PeerModelTest, AStallJudgesWhatItMovedFromTheLevelsBeforeItBegan) {
  Rng rng(41, 0);
  Job job(16, {PeerSignal("power"), PeerSignal("tensor_active"), PeerSignal("traffic")});
  job.Run(0, 2400, 1, [&](uint32_t m, uint32_t s, double t) {
    const bool training = t < 900 + m % 4 || (t >= 1600 && t < 1780 + m % 4);
    if (training) return Fresh(s > 0 ? Noisy(rng, 100) : 330 * (0.85 + 0.3 * rng.Uniform()));
    if (s > 0) return Fresh(Noisy(rng, 2));
    return Fresh(Noisy(rng, m == 5 && t >= 1780 ? 193 : 160));
  });
  ASSERT_EQ(job.stalls().size(), 2u);
  EXPECT_FALSE(job.stalls()[0].second.machine.has_value());
  EXPECT_EQ(job.stalls()[1].second.machine, std::optional<uint32_t>(5));
}

// The second hang of AStallJudgesWhatItMovedFromTheLevelsBeforeItBegan, on a job that lost a GPU
// on machines 12 and 13 before the first hang and was restarted without them (jobgen's seed
// 39,004: two lost GPUs, a restart, a rank that hangs as the restart's first iteration begins).
// They idle at 70 W through everything after, among peers spinning at 160 W, and differ from the
// stalled peers as much as the hung machine 5 at 193 W. With faults of their own under way since
// before the restart (kOwnBefore: their lost GPUs) or since the second stall began (kOwnDuring:
// jobgen's seed 40,002, a GPU lost 41 s into another rank's hang), they are not its cause and
// count only where no other machine differs: the stall names 5. GPUs lost since the restart,
// before the stall, while the job ran (as may hang it), count as any difference, whether the
// detector knows the fault (kOwnJustBefore) or not (kNoOwnFault): three machines differ and the
// stall cannot tell. Where no rank hangs of its own and only machine 12 differs (kOnlyOwn), the
// stall names 12; where 12 and 13 do (kTwoOwn), it cannot tell. Where their GPUs were lost
// before the first hang and the detector knows no fault of theirs (kUnknownBefore), the first
// stall cannot tell them apart, and as its possible causes they are weak candidates after the
// restart: the second stall names 5.
TEST(PeerModelTest, AStallTakesAMachineWhoseOwnFaultIsNotItsCauseOnlyWhereNoOtherDiffers) {
  enum class Case {
    kNoOwnFault,
    kOwnBefore,
    kOwnDuring,
    kOwnJustBefore,
    kOnlyOwn,
    kTwoOwn,
    kUnknownBefore
  };
  for (const Case c : {Case::kNoOwnFault, Case::kOwnBefore, Case::kOwnDuring, Case::kOwnJustBefore,
                       Case::kOnlyOwn, Case::kTwoOwn, Case::kUnknownBefore}) {
    SCOPED_TRACE(static_cast<int>(c));
    Rng rng(41, 0);
    Job job(16, {PeerSignal("power"), PeerSignal("tensor_active"), PeerSignal("traffic")});
    const bool hung = c != Case::kOnlyOwn && c != Case::kTwoOwn;
    const bool two = c != Case::kOnlyOwn;
    const double since = c == Case::kOwnDuring                                 ? 1850
                         : c == Case::kOwnJustBefore || c == Case::kNoOwnFault ? 1700
                                                                               : 880;
    const auto sample = [&](uint32_t m, uint32_t s, double t) {
      const bool lost = (m == 12 || (m == 13 && two)) && t >= since;
      if (lost) return Fresh(s > 0 ? Noisy(rng, 2) : Noisy(rng, 70));
      const bool training = t < 900 + m % 4 || (t >= 1600 && t < 1780 + m % 4);
      if (training) return Fresh(s > 0 ? Noisy(rng, 100) : 330 * (0.85 + 0.3 * rng.Uniform()));
      if (s > 0) return Fresh(Noisy(rng, 2));
      return Fresh(Noisy(rng, hung && m == 5 && t >= 1780 ? 193 : 160));
    };
    job.Run(0, since, 1, sample);
    if (c != Case::kNoOwnFault && c != Case::kUnknownBefore) {
      job.OwnFault(12, since);
      if (two) job.OwnFault(13, since);
    }
    job.Run(since, 2400, 1, sample);
    ASSERT_EQ(job.stalls().size(), 2u);
    const std::optional<uint32_t> expected =
        c == Case::kOnlyOwn ? std::optional<uint32_t>(12)
        : c == Case::kOwnBefore || c == Case::kOwnDuring || c == Case::kUnknownBefore
            ? std::optional<uint32_t>(5)
            : std::nullopt;
    EXPECT_EQ(job.stalls()[1].second.machine, expected);
  }
}

// Jobgen's seed 116,003 at 1 s: a rank (machine 5, at 193 W among peers spinning at 160 W) hangs
// the job at 900; machine 9 goes down (silent, its fault known) 8 s into the hang, after its own
// samples had stalled with its peers' but before the smoothed centres had fallen far enough to
// show the stall (kInStall): it followed the stall, a weak candidate, and the stall names 5. Where
// no rank differs (kAloneInStall), the weak candidate is the one: the stall names 9. Gone down
// while the job still trained (kInTraining, 2 s before the hang: its last samples training) it
// may have caused the stall, which cannot tell. Gone down once the stall was seen (kLate), it
// followed it.
TEST(PeerModelTest,
     AStallTakesAMachineThatWentDownAfterItStalledWithItsPeersOnlyWhereNoOtherDiffers) {
  enum class Case { kInStall, kAloneInStall, kInTraining, kLate };
  for (const Case c : {Case::kInStall, Case::kAloneInStall, Case::kInTraining, Case::kLate}) {
    SCOPED_TRACE(static_cast<int>(c));
    Rng rng(116, static_cast<uint64_t>(c));
    Job job(16, {PeerSignal("power"), PeerSignal("tensor_active"), PeerSignal("traffic")});
    const double down = c == Case::kInTraining ? 898 : c == Case::kLate ? 1000 : 908;
    const bool hung = c != Case::kAloneInStall;
    const auto sample = [&](uint32_t m, uint32_t s, double t) {
      if (m == 9 && t >= down) return kNone;
      if (t < 900) return Fresh(s > 0 ? Noisy(rng, 100) : 330 * (0.85 + 0.3 * rng.Uniform()));
      if (s > 0) return Fresh(Noisy(rng, 2));
      return Fresh(Noisy(rng, hung && m == 5 ? 193 : 160));
    };
    job.Run(0, down, 1, sample);
    job.OwnFault(9, down);
    job.Run(down, 1500, 1, sample);
    ASSERT_EQ(job.stalls().size(), 1u);
    EXPECT_GT(job.stalls()[0].second.start, 908);  // seen after machine 9 went down at 908
    const std::optional<uint32_t> expected = c == Case::kInTraining ? std::nullopt
                                             : c == Case::kAloneInStall
                                                 ? std::optional<uint32_t>(9)
                                                 : std::optional<uint32_t>(5);
    EXPECT_EQ(job.stalls()[0].second.machine, expected);
  }
}

// A rank that hung the job is named for that stall (machine 12 at 193 W among peers spinning at
// 160 W); the job restarts without it, and its GPUs idle at 70 W through the next stall, which
// machine 5 hangs (jobgen's seed 42,004: a rank hangs as the restart's first iteration begins).
// Machines 5 and 12 both differ; 12, named for a stall before the job last restarted, is taken for
// this one's cause only where no other differs: the stall names 5, not "cannot tell". Where 12,
// restarted with the job, hangs it again itself (kAgain), it is the only one that differs and is
// named again. Where 13 differed with 12 in the first stall (kTwo; on jobgen's seed 63,001 a rank
// hung as a machine lost a GPU, and both differed), that stall cannot tell; both may have caused
// it and are weak candidates after the restart: the next stall names 5. Where m12 was one of two
// and hangs the restarted job again itself (kTwoAgain), it is the only one that differs and is
// named.
TEST(PeerModelTest, AStallTakesAMachineOfAnEarlierOneOnlyWhereNoOtherDiffers) {
  enum class Case { kOne, kAgain, kTwo, kTwoAgain };
  for (const Case c : {Case::kOne, Case::kAgain, Case::kTwo, Case::kTwoAgain}) {
    SCOPED_TRACE(static_cast<int>(c));
    const bool again = c == Case::kAgain || c == Case::kTwoAgain;
    Rng rng(42, 0);
    Job job(16, {PeerSignal("power"), PeerSignal("tensor_active"), PeerSignal("traffic")});
    const auto sample = [&](uint32_t m, uint32_t s, double t) {
      const bool odd = m == 12 || (m == 13 && (c == Case::kTwo || c == Case::kTwoAgain));
      if (!again && odd && t >= 1500) return Fresh(s > 0 ? Noisy(rng, 2) : Noisy(rng, 70));
      const bool training = t < 900 + m % 4 || (t >= 1600 && t < 1780 + m % 4);
      if (training) return Fresh(s > 0 ? Noisy(rng, 100) : 330 * (0.85 + 0.3 * rng.Uniform()));
      if (s > 0) return Fresh(Noisy(rng, 2));
      const bool hung = (odd && t < 1600) || (t >= 1780 && m == (again ? 12u : 5u));
      return Fresh(Noisy(rng, hung ? 193 : 160));
    };
    job.Run(0, 2400, 1, sample);
    ASSERT_EQ(job.stalls().size(), 2u);
    const bool two = c == Case::kTwo || c == Case::kTwoAgain;
    EXPECT_EQ(job.stalls()[0].second.machine, two ? std::nullopt : std::optional<uint32_t>(12));
    EXPECT_EQ(job.stalls()[1].second.machine, std::optional<uint32_t>(again ? 12 : 5));
  }
}

// What a stall sets aside (PeerModel::TierOf), on a job that hangs at 900 (rank 5 at 193 W among
// peers spinning at 160 W) unless said, reported at 1200:
// - kGap: rank 5's exporter is silent 1000-1060 (a DCGM query on a hung GPU times out) and m3
//   differs from the stall's start for a reason of its own: the break does not make rank 5's
//   difference late, and the stall cannot tell. Nor does a silence from the hang's start to 1050
//   (kSilentAtFirst): rank 5 was never seen alike before it differed; nor where only its GPUs'
//   exporter is silent and its traffic reports (kGpusSilentAtFirst: alike on traffic, every rank
//   at nothing, is not seen alike).
// - kFaultShowsLate: no rank hangs; m12's GPU is lost at 880, before the stall (a possible cause),
//   and it differs only from 1100; m3 differs from the start: a fault of the machine's own that
//   began while the job ran, before the stall, is never set aside as late, and the stall cannot
//   tell.
// - kHangAtCheckpointEnd: the job stalls idle at 70 W at 900 (a checkpoint longer than a hang
//   takes to stall the job) and rank 5 hangs as it ends, at 1020 (every rank spinning at 160 W
//   from then); m3 differs from 1130. Both were seen alike for over a minute before they differed
//   (the stall's state began with the checkpoint), both are weak, and the stall cannot tell.
// - kCrossedLate: as kLate of the detector's test, m3 differs from 1100, but it also crossed
//   into the stall 30 s after its peers (200 W until 930; jobgen's seed 63,004 on the query_range
//   grid): an episode that ended (differing on nothing for the persistence time) does not date
//   the next, and the stall names 5.
// - kStale: the first stall (5 and 6 alike at 193 W) cannot tell; the job restarts with both at
//   1600 and trains 23 minutes; 6 hangs it at 3000 while m3 differs from the start: a candidate of
//   a stall long before is no weaker than any other, and the stall cannot tell. So after a later
//   restart (kStaleAcrossRestart: machine 9 hangs the job at 3000, is named, and the job restarts
//   at 3700; 6 hangs it at 3800): only the stall that ended in the last restart has candidates.
// - kSameRankAfterStar: the first stall cannot tell 5 from m12, whose GPU was lost at 880; the job
//   restarts without m12 (70 W) and 5 hangs it again: m12's fault before the restart explains it,
//   5 (a weak candidate) is the only one left, and the second stall names it.
TEST(PeerModelTest, AStallSetsAsideWhatFollowedItNotWhatBrokeOrShowedLate) {
  enum class Case {
    kGap,
    kSilentAtFirst,
    kGpusSilentAtFirst,
    kFaultShowsLate,
    kHangAtCheckpointEnd,
    kCrossedLate,
    kStale,
    kStaleAcrossRestart,
    kSameRankAfterStar
  };
  for (const Case c : {Case::kGap, Case::kSilentAtFirst, Case::kGpusSilentAtFirst,
                       Case::kFaultShowsLate, Case::kHangAtCheckpointEnd, Case::kCrossedLate,
                       Case::kStale, Case::kStaleAcrossRestart, Case::kSameRankAfterStar}) {
    SCOPED_TRACE(static_cast<int>(c));
    Rng rng(7, static_cast<uint64_t>(c));
    Job job(16, {PeerSignal("power"), PeerSignal("tensor_active"), PeerSignal("traffic")});
    if (c == Case::kFaultShowsLate || c == Case::kSameRankAfterStar) job.OwnFault(12, 880);
    const bool across = c == Case::kStaleAcrossRestart;
    const double end = across ? 4400 : c == Case::kStale ? 3600 : 2400;
    const auto idle = [&](uint32_t s, double power) {
      return Fresh(s > 0 ? Noisy(rng, 2) : Noisy(rng, power));
    };
    const auto sample = [&](uint32_t m, uint32_t s, double t) {
      const bool restarted = c == Case::kStale || across || c == Case::kSameRankAfterStar;
      const double again = c == Case::kStale || across ? 3000 : 1780;
      const bool training = t < 900 + m % 4 || (restarted && t >= 1600 && t < again + m % 4) ||
                            (across && t >= 3700 && t < 3800 + m % 4);
      if (c == Case::kSameRankAfterStar && m == 12 && t >= 880) return idle(s, 70);
      if (training) return Fresh(s > 0 ? Noisy(rng, 100) : 330 * (0.85 + 0.3 * rng.Uniform()));
      switch (c) {
        case Case::kGap:
        case Case::kSilentAtFirst:
        case Case::kGpusSilentAtFirst:
          if (m == 5 && c == Case::kGap && t >= 1000 && t < 1060) return kNone;
          if (m == 5 && c == Case::kSilentAtFirst && t < 1050) return kNone;
          if (m == 5 && c == Case::kGpusSilentAtFirst && s < 2 && t < 1050) return kNone;
          return idle(s, m == 5 ? 193 : m == 3 ? 200 : 160);
        case Case::kFaultShowsLate:
          return idle(s, m == 12 && t >= 1100 ? 70 : m == 3 ? 200 : 160);
        case Case::kHangAtCheckpointEnd:
          if (t < 1020) return idle(s, 70);
          return idle(s, m == 5 ? 193 : m == 3 && t >= 1130 ? 200 : 160);
        case Case::kCrossedLate:
          return idle(s, m == 5 ? 193 : m == 3 && (t < 930 || t >= 1100) ? 200 : 160);
        case Case::kStale:
        case Case::kStaleAcrossRestart:
          if (t < 1600) return idle(s, m == 5 || m == 6 ? 193 : 160);
          if (across && t < 3700) return idle(s, m == 9 ? 193 : 160);
          return idle(s, m == 6 ? 193 : m == 3 ? 200 : 160);
        case Case::kSameRankAfterStar:
          return idle(s, m == 5 ? 193 : 160);
      }
      return kNone;
    };
    job.Run(0, end, 1, sample);
    const bool two = c == Case::kStale || c == Case::kSameRankAfterStar;
    ASSERT_EQ(job.stalls().size(), across ? 3u : two ? 2u : 1u);
    const std::optional<uint32_t> last = job.stalls().back().second.machine;
    if (two || across) {
      EXPECT_FALSE(job.stalls()[0].second.machine.has_value());
    }
    if (across) {
      EXPECT_EQ(job.stalls()[1].second.machine, std::optional<uint32_t>(9));
    }
    EXPECT_EQ(last, c == Case::kCrossedLate || c == Case::kSameRankAfterStar
                        ? std::optional<uint32_t>(5)
                        : std::nullopt);
  }
}

// Jobgen's seed 43,003: a rank (machine 12, at 193 W among peers spinning at 160 W) hangs the
// job at 900; its watchdog kills it at 1500 (every GPU idles: 70 W, utilisation 0), and it
// restarts at 1600 (its init: 100 W, utilisation 8%) without ever training again: machine 5
// hangs it as the init ends, at 1680 (spinning ranks count as busy: utilisation 100). Most
// features stay stalled throughout, so this is one stall of the group. After it was reported, the
// group's move at the kill (utilisation 100 -> 0) ends its state, and the state after the group's
// last move (utilisation 8 -> 100, the second hang) is judged as a stall of its own: it names 5
// (kHangsAgain). A state that follows a reported one is reported only for a machine whose
// difference nothing explains: a killed job left idle (kIdle), a second hang where no machine
// differs (kNobodyDiffers), or one where only machine 12 does, restarted without it (kKnown: it
// idles among the spinning peers), is no second stall. Nor is a minute with no sample from any
// machine in the first hang (kGap: Prometheus down), which neither ends the stall nor moves it.
// Where the first hang could not tell machine 12 from machine 6 (both at 193 W) and 12 hangs the
// restarted job again (kTwoThenOneAgain), the state that follows names 12: one of the first
// state's machines is no weak candidate within the same stall (PeerModel::TierOf).
TEST(PeerModelTest, AStallThatMovesAfterItWasReportedIsAStallOfItsOwn) {
  enum class Case { kHangsAgain, kIdle, kNobodyDiffers, kKnown, kGap, kTwoThenOneAgain };
  for (const Case c : {Case::kHangsAgain, Case::kIdle, Case::kNobodyDiffers, Case::kKnown,
                       Case::kGap, Case::kTwoThenOneAgain}) {
    SCOPED_TRACE(static_cast<int>(c));
    Rng rng(43, 0);
    Job job(16, {PeerSignal("power"), PeerSignal("utilisation"), PeerSignal("tensor_active"),
                 PeerSignal("traffic"), PeerSignal("nvlink")});
    // Power and utilisation of machine m at t after the job's first hang.
    const auto stalled = [&](uint32_t m, double t) -> std::pair<double, double> {
      const bool two = c == Case::kTwoThenOneAgain;
      if (t < 1500 || c == Case::kGap) return {m == 12 || (two && m == 6) ? 193 : 160, 100};
      if (t < 1600 || c == Case::kIdle || (m == 12 && c == Case::kKnown)) return {70, 0};
      if (t < 1680) return {100, 8};
      return {(m == 5 && c == Case::kHangsAgain) || (m == 12 && two) ? 193 : 160, 100};
    };
    const auto sample = [&](uint32_t m, uint32_t s, double t) {
      if (t < 900 + m % 4) {
        return Fresh(s == 0 ? 330 * (0.85 + 0.3 * rng.Uniform()) : Noisy(rng, 100));
      }
      if (c == Case::kGap && t >= 1300 && t < 1360) return kNone;
      if (s > 1) return Fresh(Noisy(rng, 2));
      const auto [power, utilisation] = stalled(m, t);
      return Fresh(Noisy(rng, s == 0 ? power : utilisation));
    };
    job.Run(0, 2600, 1, sample);
    ASSERT_GE(job.stalls().size(), 1u);
    const bool two = c == Case::kTwoThenOneAgain;
    EXPECT_EQ(job.stalls()[0].second.machine, two ? std::nullopt : std::optional<uint32_t>(12));
    if (c != Case::kHangsAgain && !two) {
      EXPECT_EQ(job.stalls().size(), 1u);
      continue;
    }
    ASSERT_EQ(job.stalls().size(), 2u);
    const auto& [at, stall] = job.stalls()[1];
    EXPECT_EQ(stall.machine, std::optional<uint32_t>(two ? 12 : 5));
    // The state begins at the group's last move: once the smoothed power has followed the hang.
    EXPECT_GT(stall.start, 1680);
    EXPECT_LT(stall.start, 1680 + 120);
    EXPECT_EQ(at, stall.start + 300);
  }
}

// Machine 2's CPU idle sits 12% under its peers' from its first sample, alone at its level, and
// within the peers' spread while the job trains (each scrape, every 15 s, 5% off at the step's
// chance phase).
// Through a hang of 20 minutes every CPU holds steady (1%), and the peers' spread, learned while
// the job trained, is kept while the group stalls: machine 2 is no more a fault in the hang than
// it was before it. Followed down over the stall's minutes, it read 12% as 12 spreads.
TEST(PeerModelTest, AStallKeepsThePeersSpreadFromBeforeIt) {
  Rng rng(46, 0);
  Job job(16, {PeerSignal("cpu_idle"), PeerSignal("tensor_active"), PeerSignal("traffic"),
               PeerSignal("nvlink")});
  job.Run(0, 2400, 15, [&](uint32_t m, uint32_t s, double t) {
    const bool training = t < 600;
    if (s > 0) return Fresh(Noisy(rng, training ? 100 : 2));
    const double level = m == 2 ? 0.66 : 0.75;
    return Fresh(level * (1 + rng.Normal(0, training ? 0.05 : 0.01)));
  });
  ASSERT_EQ(job.stalls().size(), 1u);
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
}

// A signal whose series are all gone (the trainer's step time, its processes killed) says
// nothing of whether the group stalls: two of four signals stalled (6 of 12 features) is not
// most of them, but with the third silent, 6 of the 9 that still report are.
TEST(PeerModelTest, AFeatureWhoseSeriesAreGoneCountsNeitherWayInAStall) {
  Rng rng(44, 0);
  Job job(16, {PeerSignal("power"), PeerSignal("tensor_active"), PeerSignal("traffic"),
               PeerSignal("step_time")});
  job.Run(0, 1200, 1, [&](uint32_t, uint32_t s, double t) {
    if (t < 600) return Fresh(Noisy(rng, 100));
    if (s == 3) return kNone;
    return Fresh(Noisy(rng, s == 0 ? 50 : 2));
  });
  ASSERT_EQ(job.stalls().size(), 1u);
  EXPECT_NEAR(job.stalls()[0].second.start, 600, 20);
}

// --- Job-wide moves -----------------------------------------------------------------------------

// A group that moves together (an evaluation phase at half the load, each machine entering it
// within 3 s) is no one's deviation: nobody is judged while the centre moves and for a minute
// after, nobody is named. Machine 3, which drops further (to 10) as it enters, is judged
// once the group has settled (the smoothed centre holds its new level about 20 s after the move,
// then a minute) and named 60 s after that.
TEST(PeerModelTest, AGroupThatMovesTogetherIsNoOnesDeviation) {
  Rng rng(14, 0);
  Job job(16, {PeerSignal("power")});
  const auto sample = [&](uint32_t m, uint32_t, double t) {
    const bool moved = t >= 400 + m % 4;
    return Fresh(Noisy(rng, !moved ? 100 : m == 3 ? 10 : 50));
  };
  job.Run(0, 470, 1, sample);
  EXPECT_TRUE(job.Deviating().empty());
  job.Run(470, 700, 1, sample);
  const std::optional<Deviation> d = job.DeviationOn(3, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_GE(d->start, 470);
  EXPECT_LE(d->start, 490);
  EXPECT_NEAR(d->expected, 50, 1);
  EXPECT_EQ(job.TriggeredAt(3), d->start + 60);
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
}

// A job-wide step (a batch-size ramp: every rank's step time doubles at 400, each crossing
// within 3 s) is over once the centre holds its new level, not once its 30-s average has caught
// up (70 s for a step of 95%): a straggler from 410 (+25%) is judged a minute after the centre
// holds still, and named by 560 (546), where the average's lag named it at 597 (session 51:
// jobgen's seed 65,004 at 5 s, a straggler 103 s after a batch-size ramp, was judged from 31 s
// after its onset). Every other machine follows the group and is not named.
TEST(PeerModelTest, AJobWideStepIsOverOnceTheCentreHoldsItsNewLevel) {
  Rng rng(41, 0);
  Job job(16, {PeerSignal("step_time", Worse::kHigher)});
  job.Run(0, 700, 1, [&](uint32_t m, uint32_t, double t) {
    const double level = t >= 400 + m % 4 ? 2 : 1;
    return Fresh(Noisy(rng, level * (m == 5 && t >= 410 ? 1.25 : 1)));
  });
  ASSERT_EQ(job.Named(), std::vector<uint32_t>{5});
  EXPECT_LE(job.TriggeredAt(5), 560);
}

// --- Shared deviations --------------------------------------------------------------------------

// Three machines of 16 that drop together (a rack behind one switch) are one shared deviation
// per feature, reported once, in the Update where they would have been named (461), listing
// the three with their deviations; none of them is named. A fourth machine that drops less
// far at the same time (to 80: under half their effect, so not among them when they are
// reported) joins the episode when its own evidence is complete: it is not named and the
// episode is not reported again. When every run has ended, a new episode is reported again.
TEST(PeerModelTest, ThreeOrMoreMachinesDeviatingTogetherAreOneSharedDeviation) {
  Rng rng(15, 0);
  Job job(16, {PeerSignal("power")});
  job.Run(0, 1200, 1, [&](uint32_t m, uint32_t, double t) {
    double v = 100;
    if (t >= 400 && t < 700 && m >= 12) v = m == 15 ? 80 : 50;
    if (t >= 900 && m >= 13) v = 50;
    return Fresh(Noisy(rng, v));
  });
  EXPECT_EQ(job.triggers(), 0);
  ASSERT_EQ(job.shared().size(), 6u);  // mean, min and max, in each of two episodes
  for (size_t i = 0; i < 6; ++i) {
    const auto& [time, sh] = job.shared()[i];
    const bool first = i < 3;
    SCOPED_TRACE(::testing::Message() << "shared " << i);
    EXPECT_EQ(time, first ? 461 : 961);
    EXPECT_EQ(sh.group, 0u);
    EXPECT_EQ(sh.feature, FeatureOf(0, static_cast<Stat>(i % 3)));
    ASSERT_EQ(sh.members.size(), 3u);
    for (size_t k = 0; k < sh.members.size(); ++k) {
      EXPECT_EQ(sh.members[k].machine, (first ? 12u : 13u) + k);
      EXPECT_EQ(sh.members[k].deviation.feature, sh.feature);
      EXPECT_EQ(sh.members[k].deviation.start, first ? 401 : 901);
      EXPECT_NEAR(sh.members[k].deviation.effect, -0.5, 0.02);
    }
  }
}

// One cause, one report: machines 3, 4 and 5 drop their transmit rate together from 1,000 s (a
// shared deviation), and machines 3 and 4 their receive rate with it, too few to be one there.
// They are members of the shared cause, and their receive rates moved together with it: nobody is
// named (130,004's hosts after a restart, their PCIe rates). Machine 3's receive rate falling
// alone at 1,000 s is a fault of its own that may have begun with the others' (three faults
// whose step times slowed together, one of them with its GPUs' utilisation down: 126,004), and
// its falling from 1,400 s, while the shared cause goes on, one that began later: it is named.
TEST(PeerModelTest, AMemberOfASharedCauseIsNotNamedOnAnotherSignalThatMovedWithIt) {
  enum class Rx { kTogether, kAloneAtOnce, kLater };
  for (const Rx rx : {Rx::kTogether, Rx::kAloneAtOnce, Rx::kLater}) {
    SCOPED_TRACE(static_cast<int>(rx));
    Rng rng(88, 2);
    Job job(16, {PeerSignal("tx", Worse::kLower), PeerSignal("rx", Worse::kLower)});
    job.Run(0, 1800, 5, [&](uint32_t m, uint32_t s, double t) {
      double v = 100;
      if (s == 0 && t >= 1000 && m >= 3 && m <= 5) v = 40;
      const bool falls = m == 3 || (rx == Rx::kTogether && m == 4);
      if (s == 1 && t >= (rx == Rx::kLater ? 1400 : 1000) && falls) v = 65;
      return Fresh(Noisy(rng, v));
    });
    EXPECT_FALSE(job.shared().empty());
    EXPECT_EQ(job.Named(),
              rx == Rx::kTogether ? std::vector<uint32_t>{} : std::vector<uint32_t>{3});
    if (rx == Rx::kLater) {
      EXPECT_GT(job.TriggeredAt(3), 1400);
    }
  }
}

// Two machines deviating together are not a shared cause: each is named.
TEST(PeerModelTest, TwoMachinesDeviatingTogetherAreEachNamed) {
  Rng rng(16, 0);
  Job job(16, {PeerSignal("power")});
  job.Run(0, 500, 1, LevelThen(rng, 100, 400, [](uint32_t m) { return m >= 14 ? 50 : -1; }));
  EXPECT_TRUE(job.shared().empty());
  EXPECT_EQ(job.TriggeredAt(14), 461);
  EXPECT_EQ(job.TriggeredAt(15), 461);
}

// Runs that start within the persistence time of each other (45 s < 60 s) follow one cause:
// machines 12 and 13 from 400 and machine 14 from 445 are one shared deviation, none named.
// Further apart (70 s > 60 s) they are independent faults: with machine 14 from 470, each is
// named, none shared.
TEST(PeerModelTest, RunsStartingFurtherApartThanThePersistenceAreNotShared) {
  for (const int later : {445, 470}) {
    SCOPED_TRACE(later);
    Rng rng(17, 0);
    Job job(16, {PeerSignal("power")});
    job.Run(0, 600, 1, [&](uint32_t m, uint32_t, double t) {
      const bool off = (m == 12 || m == 13) ? t >= 400 : m == 14 && t >= later;
      return Fresh(Noisy(rng, off ? 50 : 100));
    });
    if (later - 400 < 60) {
      EXPECT_FALSE(job.shared().empty());
      EXPECT_EQ(job.triggers(), 0);
      continue;
    }
    EXPECT_TRUE(job.shared().empty());
    EXPECT_EQ(job.TriggeredAt(12), 461);
    EXPECT_EQ(job.TriggeredAt(13), 461);
    EXPECT_EQ(job.TriggeredAt(14), 531);
  }
}

// With the defaults, strong runs (0.85 off) are named after 30 s, and runs alongside are those
// that started within the 30 s the first took: machine 14 starting 20 s after 12 and 13 makes a
// shared deviation of the three, and nobody is named; starting 40 s after them it does not: 12
// and 13 are named at 430 (two are no shared cause) and 14 at 470, alone (12 and 13 began 40 s
// before it), never both named and then shared.
TEST(PeerModelTest, StrongRunsAreSharedWithinTheTimeTheFirstTookToBeNamed) {
  for (const int later : {420, 440}) {
    SCOPED_TRACE(later);
    Rng rng(17, 0);
    Job job(16, {PeerSignal("power")}, PeerOptions{});
    job.Run(0, 600, 1, [&](uint32_t m, uint32_t, double t) {
      const bool off = (m == 12 || m == 13) ? t >= 400 : m == 14 && t >= later;
      return Fresh(Noisy(rng, off ? 15 : 100));
    });
    if (later == 420) {
      EXPECT_FALSE(job.shared().empty());
      EXPECT_EQ(job.triggers(), 0);
      continue;
    }
    EXPECT_TRUE(job.shared().empty());
    EXPECT_NEAR(job.TriggeredAt(12), 430, 1);
    EXPECT_NEAR(job.TriggeredAt(13), 430, 1);
    EXPECT_NEAR(job.TriggeredAt(14), 470, 1);
  }
}

// Ten workers' step times, each at its own level (680-770) with 3% noise, a sample every 10 s;
// from `from` on, those that `slow` picks are `factor` times slower. Alibaba PAI's job 3
// (eval/data/field) has four of ten workers 20-35% slower at once.
Job::SampleOf StepTimes(Rng& rng, double from, double factor,
                        std::function<bool(uint32_t, double)> slow) {
  return [&rng, from, factor, slow = std::move(slow)](uint32_t m, uint32_t, double t) {
    const double level = 680 + 10.0 * m;
    return Fresh(level * (t >= from && slow(m, t) ? factor : 1) * (1 + rng.Normal(0, 0.03)));
  };
}

// Four of ten workers 25% slower at once raise the peers' spread and the spread of the own-past
// moves (medians over the ten) so far that none of them deviates: they are reported together,
// a split of the group against their own pasts, once they have been apart for the persistence
// time; nobody is named and no healthy worker is listed. Half the group (five of ten) is no
// minority: which half moved is not told, and nothing is reported.
TEST(PeerModelTest, AMinorityOfASmallGroupSlowingTogetherIsReportedAsASplit) {
  for (const uint32_t slow : {4u, 5u}) {
    SCOPED_TRACE(slow);
    Rng rng(71, 0);
    Job job(10, {PeerSignal("step_time", Worse::kHigher)}, PeerOptions{});
    job.Run(0, 2600, 10,
            StepTimes(rng, 2000, 1.25, [&](uint32_t m, double) { return m >= 10 - slow; }));
    EXPECT_EQ(job.triggers(), 0);
    if (slow == 5) {
      EXPECT_TRUE(job.shared().empty());
      continue;
    }
    ASSERT_FALSE(job.shared().empty());
    const auto& [time, sh] = job.shared().front();
    EXPECT_GE(time, 2060);
    EXPECT_LE(time, 2100);
    EXPECT_EQ(sh.feature, kMean);
    std::vector<uint32_t> members;
    for (const auto& member : sh.members) {
      members.push_back(member.machine);
      EXPECT_TRUE(member.deviation.own_past);
      EXPECT_GE(member.deviation.start, 2000);
      EXPECT_NEAR(member.deviation.effect, 0.25, 0.1);
      EXPECT_GE(member.deviation.z, 4);
    }
    std::sort(members.begin(), members.end());
    EXPECT_EQ(members, (std::vector<uint32_t>{6, 7, 8, 9}));
    // Once per split, on each of the step time's statistics.
    EXPECT_LE(job.shared().size(), 3u);
  }
}

// A worker of a split that is back at its level for a sample stays in it, as a run goes on
// over a gap of up to three of its intervals: four workers slowed from 2,000 s, each back for
// one sample at 2,020-2,050 s (one at a time), are reported 60 s after 2,000 s, not once three
// of them have been apart without a break.
TEST(PeerModelTest, AWorkerBackForASampleStaysInItsSplit) {
  Rng rng(72, 0);
  Job job(10, {PeerSignal("step_time", Worse::kHigher)}, PeerOptions{});
  job.Run(0, 2400, 10, StepTimes(rng, 2000, 1.3, [](uint32_t m, double t) {
            return m >= 6 && t != 2020 + 10.0 * (m - 6);
          }));
  ASSERT_FALSE(job.shared().empty());
  EXPECT_LE(job.shared().front().first, 2070);
}

// Three machines whose own values swing by a fifth from sample to sample (a bursty host link
// sampled at chance phases), 15% lower together for ten minutes beside seven steady ones, are
// apart from the others' own moves but within their own scatter: no split, as none of them
// would be named alone.
TEST(PeerModelTest, MachinesThatScatterOnTheirOwnMakeNoSplitWithinTheirScatter) {
  Rng rng(74, 0);
  Job job(10, {PeerSignal("pcie_rx", Worse::kLower)}, PeerOptions{});
  job.Run(0, 2600, 10, [&](uint32_t m, uint32_t, double t) {
    if (m < 7) return Fresh(Noisy(rng, 100));
    const double level = t >= 2000 ? 85 : 100;
    return Fresh(level * (0.8 + 0.4 * rng.Uniform()));
  });
  EXPECT_EQ(job.triggers(), 0);
  EXPECT_TRUE(job.shared().empty());
}

// Three hosts whose receive rate falls by 12% as the seven others' rises by 6% (a beat of
// staggered scrapes against the iteration, load moved between hosts) lost what the others
// gained: no split. The same three falling while the others hold are one.
TEST(PeerModelTest, AMinorityThatLosesWhatTheOthersGainIsNoSplit) {
  for (const double others : {1.0, 1.06}) {
    SCOPED_TRACE(others);
    Rng rng(75, 0);
    Job job(10, {PeerSignal("pcie_rx", Worse::kLower)}, PeerOptions{});
    job.Run(0, 2600, 10, [&](uint32_t m, uint32_t, double t) {
      const double level = 100 + 2.0 * m;
      return Fresh(level * (t < 2000 ? 1 : m >= 7 ? 0.88 : others) * (1 + rng.Normal(0, 0.03)));
    });
    EXPECT_EQ(job.triggers(), 0);
    if (others > 1) {
      EXPECT_TRUE(job.shared().empty());
      continue;
    }
    ASSERT_FALSE(job.shared().empty());
    std::vector<uint32_t> members;
    for (const auto& member : job.shared().front().second.members) {
      members.push_back(member.machine);
      EXPECT_TRUE(member.deviation.own_past);
    }
    std::sort(members.begin(), members.end());
    EXPECT_EQ(members, (std::vector<uint32_t>{7, 8, 9}));
  }
}

// The beat of AMinorityThatLosesWhatTheOthersGainIsNoSplit, broken for a minute: the three back
// at their level from 2,300 s to 2,360 s while the seven others stay 6% higher, then 12% lower
// again. The second split began with the others already risen; they rose as the first began, a
// minute before, and it is no split either.
TEST(PeerModelTest, ASplitBegunAgainIsMeasuredFromWhereTheFirstBegan) {
  Rng rng(75, 0);
  Job job(10, {PeerSignal("pcie_rx", Worse::kLower)}, PeerOptions{});
  job.Run(0, 2900, 10, [&](uint32_t m, uint32_t, double t) {
    const bool back = t >= 2300 && t < 2360;
    const double move = t < 2000 ? 1 : m < 7 ? 1.06 : back ? 1 : 0.88;
    return Fresh((100 + 2.0 * m) * move * (1 + rng.Normal(0, 0.03)));
  });
  EXPECT_EQ(job.triggers(), 0);
  EXPECT_TRUE(job.shared().empty());
}

// Three of ten hosts whose receive rate falls by 20% at 2,000 s are a split, though every host's
// traffic rose by 10% at 1,400 s: the centre's usual level (a median over 30 minutes) is still
// the old one, and measured from it the others had risen as much as the three fell (a reviewer's
// case, session 59). Where the others stood as the split began is where they had stood for the
// minutes before, in seconds, whatever the cadence (at 30 s, a window counted in samples of the
// centre reached back past the rise, a reviewer's case of session 60).
TEST(PeerModelTest, AJobWideRiseBeforeASplitDoesNotHideIt) {
  for (const double interval : {10.0, 30.0}) {
    SCOPED_TRACE(interval);
    Rng rng(76, 0);
    Job job(10, {PeerSignal("pcie_rx", Worse::kLower)}, PeerOptions{});
    job.Run(0, 2600, interval, [&](uint32_t m, uint32_t, double t) {
      const double level =
          (100 + 2.0 * m) * (t >= 1400 ? 1.1 : 1) * (t >= 2000 && m >= 7 ? 0.8 : 1);
      return Fresh(level * (1 + rng.Normal(0, 0.03)));
    });
    EXPECT_EQ(job.triggers(), 0);
    if (job.shared().empty()) {
      ADD_FAILURE() << "no split reported";
      continue;
    }
    EXPECT_LE(job.shared().front().first, 2000 + 4 * interval + 60);
    std::vector<uint32_t> members;
    for (const auto& member : job.shared().front().second.members) {
      members.push_back(member.machine);
    }
    std::sort(members.begin(), members.end());
    EXPECT_EQ(members, (std::vector<uint32_t>{7, 8, 9}));
  }
}

// Ten hosts' receive rates, `level(m, t)` with 3% noise, sampled every 10 s until `to`: nobody
// is named, and the job first reports a shared deviation or split from `from` on within 200 s
// of it.
void ExpectASplitReportedWithin200sOf(double from, double to,
                                      const std::function<double(uint32_t, double)>& level) {
  Rng rng(76, 0);
  Job job(10, {PeerSignal("pcie_rx", Worse::kLower)}, PeerOptions{});
  job.Run(0, to, 10, [&](uint32_t m, uint32_t, double t) {
    return Fresh(level(m, t) * (1 + rng.Normal(0, 0.03)));
  });
  EXPECT_EQ(job.triggers(), 0);
  double reported = -1;
  for (const auto& [t, sh] : job.shared()) {
    if (t >= from) {
      reported = t;
      break;
    }
  }
  EXPECT_GE(reported, from);
  EXPECT_LE(reported, from + 200);
}

// A checkpoint: every host's receive rate dips 20% from 1,500 s to 1,560 s, and three of them
// (7-9, its writers) dip 40%, or stay dipped 30 s longer: a short split whose centre, as it
// began, is the dip's. At 1,800 s three hosts' rate falls 20% for good. That split began within
// 15 minutes of the first one's end and kept the dip as where the others stood: measured from it
// the others had risen as much as the three fell, and it was never reported, nor any split after
// it (a reviewer's case, session 60). What a split carries to the next is where the centre stood
// over the minutes before it, not a moment's centre.
TEST(PeerModelTest, ASplitAfterACheckpointsSplitIsMeasuredFromBeforeTheCheckpoint) {
  for (const bool deeper : {true, false}) {
    for (const uint32_t first : {7u, 4u}) {
      SCOPED_TRACE(::testing::Message() << "deeper " << deeper << ", faulty from " << first);
      ExpectASplitReportedWithin200sOf(1800, 3000, [&](uint32_t m, double t) {
        const bool writer = m >= 7;
        double level = 100 + 2.0 * m;
        if (t >= 1500 && t < 1560) level *= deeper && writer ? 0.6 : 0.8;
        if (!deeper && writer && t >= 1560 && t < 1590) level *= 0.8;
        if (t >= 1800 && m >= first && m < first + 3) level *= 0.8;
        return level;
      });
    }
  }
}

// Checkpoints every 10 minutes from 1,200 s (every host's receive rate 20% lower for a minute,
// its writers 7-9 40%), each a short split that begins within 15 minutes of the last one's end;
// every host's traffic 10% higher for good from 2,100 s; hosts 4-6 20% lower for good from
// 3,300 s. Carried from split to split, the level from before the rise made the others read
// risen as much as the three fell, and the fault was never reported (a reviewer's case, session
// 60). A split carries the last one's reference for 15 minutes from when it was taken, no
// longer: the fault is reported, as without checkpoints.
TEST(PeerModelTest, ASplitLongAfterAJobWideRiseAmidCheckpointsIsReported) {
  for (const bool checkpoints : {false, true}) {
    SCOPED_TRACE(checkpoints);
    ExpectASplitReportedWithin200sOf(3300, 3600, [&](uint32_t m, double t) {
      double level = 100 + 2.0 * m;
      if (checkpoints && t >= 1200 && std::fmod(t, 600) < 60) level *= m >= 7 ? 0.6 : 0.8;
      if (t >= 2100) level *= 1.1;
      if (t >= 3300 && m >= 4 && m < 7) level *= 0.8;
      return level;
    });
  }
}

// The beat of AMinorityThatLosesWhatTheOthersGainIsNoSplit, beginning as the receive rate comes
// back from a pause of 550 s (every host at 2% from 2,000 s; power holds the group out of a
// job-level stall). No level is kept while a feature stalls, and the minutes just before the
// split held only the beat's: it was reported (a reviewer's case, session 60). The centre's last
// value before the pause stands for the pause: no split.
TEST(PeerModelTest, ABeatBeginningAsAPauseEndsIsNoSplit) {
  for (const double pause : {0.0, 480.0, 550.0, 590.0}) {
    SCOPED_TRACE(pause);
    Rng rng(75, 0);
    Job job(10, {PeerSignal("pcie_rx", Worse::kLower), PeerSignal("power", Worse::kLower)},
            PeerOptions{});
    job.Run(0, 3000, 10, [&](uint32_t m, uint32_t s, double t) {
      if (s == 1) return Fresh(Noisy(rng, 600));
      const double level = 100 + 2.0 * m;
      if (t >= 2000 && t < 2000 + pause) return Fresh(level * 0.02 * (1 + rng.Normal(0, 0.03)));
      return Fresh(level *
                   (t < 2000 + pause ? 1
                    : m >= 7         ? 0.88
                                     : 1.06) *
                   (1 + rng.Normal(0, 0.03)));
    });
    EXPECT_EQ(job.triggers(), 0);
    EXPECT_TRUE(job.shared().empty());
  }
}

// Two workers far slower than their peers are named on their own; a third that moved less and
// alone would not be makes no split with them: a split is reported only where three of its
// machines do not deviate on their own (Alibaba PAI's job 4: two workers four times slower and
// one 15% slower).
TEST(PeerModelTest, MachinesNamedOnTheirOwnMakeNoSplitWithAThird) {
  Rng rng(73, 0);
  Job job(10, {PeerSignal("step_time", Worse::kHigher)}, PeerOptions{});
  job.Run(0, 2600, 10, [&](uint32_t m, uint32_t s, double t) {
    if (t >= 2000 && m >= 8) return Fresh((680 + 10.0 * m) * 4 * (1 + rng.Normal(0, 0.03)));
    return StepTimes(rng, 2000, 1.2, [](uint32_t o, double) { return o == 7; })(m, s, t);
  });
  EXPECT_GE(job.TriggeredAt(8), 2000);
  EXPECT_GE(job.TriggeredAt(9), 2000);
  EXPECT_TRUE(job.shared().empty());
}

// A feature that is nothing on every machine (a pause counter at 0) has no strength to speak of:
// a machine that pauses is named after the whole persistence, however far its effect is against
// the feature's resolution.
TEST(PeerModelTest, AFeatureAtNothingHasNoStrongDeviation) {
  Rng rng(18, 0);
  Job job(16, {PeerSignal("pauses", Worse::kHigher)}, PeerOptions{});
  double start = -1;
  for (double t = 0; t < 600; t += 1) {
    job.Step(t, [&](uint32_t m, uint32_t, double) { return Fresh(m == 3 && t >= 400 ? 50 : 0); });
    if (const auto d = job.DeviationOn(3, kMean); d && start < 0) start = d->start;
  }
  ASSERT_GE(start, 400);
  EXPECT_GE(job.TriggeredAt(3) - start, 60);  // not 30
  EXPECT_LE(job.TriggeredAt(3) - start, 61);
}

// A machine far off (80% down) with two barely off beside it (20% down, less than half as far)
// is its own fault: it is named when its evidence is complete, and the two barely off ones are
// not named. (For each of those, machine 12 and the other are at least half as far off, so when
// their own evidence is complete the three are reported as a shared deviation with machine 12
// among its members; this test does not pin that.)
TEST(PeerModelTest, AMachineFarOffBesideTwoBarelyOffIsNamed) {
  Rng rng(18, 0);
  Job job(16, {PeerSignal("power")});
  job.Run(0, 500, 1, LevelThen(rng, 100, 400, [](uint32_t m) -> double {
            return m == 12 ? 20 : m == 13 || m == 14 ? 80 : -1;
          }));
  EXPECT_EQ(job.TriggeredAt(12), 461);
  EXPECT_EQ(job.TriggeredAt(13), -1);
  EXPECT_EQ(job.TriggeredAt(14), -1);
}

// --- Placement: a machine's own past ----------------------------------------------------------

// Machines placed alike (half the job at a quarter of the others' level: a pipeline stage)
// learn their level against the centre over the warm-up and are then judged against their own
// past: nobody is off for its placement, and machine 3 (at 25) dropping to 12.5 deviates from
// its own 25, not from the centre's 100. (The drop comes at 1200: the peers' spread starts at
// the placements' gap, when nobody is placed yet, and falls with a 5-minute half-life after the
// warm-up; at 600 this drop is still under 4 noise scales.)
TEST(PeerModelTest, MachinesPlacedAlikeAreJudgedAgainstTheirOwnPast) {
  Rng rng(19, 0);
  Job job(16, {PeerSignal("power")});
  const auto sample = [&](uint32_t m, uint32_t, double t) {
    const double placed = m % 2 ? 25 : 100;
    return Fresh(Noisy(rng, m == 3 && t >= 1200 ? placed / 2 : placed));
  };
  job.Run(0, 1200, 1, sample);
  EXPECT_TRUE(job.Deviating().empty());
  EXPECT_EQ(job.triggers(), 0);
  job.Run(1200, 1300, 1, sample);
  const std::optional<Deviation> d = job.DeviationOn(3, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_NEAR(d->expected, 25, 2);
  EXPECT_NEAR(d->effect, -0.5, 0.05);
  // 60 s of evidence, which a deviation under twice the noise threshold
  // gathers at part rate (at least half).
  EXPECT_GE(job.TriggeredAt(3), d->start + 60);
  EXPECT_LE(job.TriggeredAt(3), d->start + 120);
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
}

// A machine alone at its level from its first sample (half its peers') is compared with its
// peers as they are, not with its own past; over the warm-up it is scored but nobody is judged,
// and it is named the persistence time after the warm-up ends, whatever warmup_s is.
TEST(PeerModelTest, AMachineAloneAtItsLevelIsJudgedAgainstItsPeersAfterTheWarmUp) {
  for (const double warmup : {300.0, 100.0}) {
    SCOPED_TRACE(warmup);
    Rng rng(20, 0);
    PeerOptions o = Steady();
    o.warmup_s = warmup;
    Job job(16, {PeerSignal("power")}, o);
    const auto sample = [&](uint32_t m, uint32_t, double) {
      return Fresh(Noisy(rng, m == 9 ? 50 : 100));
    };
    job.Run(0, warmup, 1, sample);
    EXPECT_LT(*job.ZOf(9, kMean), -20);
    EXPECT_TRUE(job.model().Quiet(9));
    job.Run(warmup, warmup + 100, 1, sample);
    const std::optional<Deviation> d = job.DeviationOn(9, kMean);
    ASSERT_TRUE(d.has_value());
    EXPECT_NEAR(d->expected, 100, 1);
    EXPECT_EQ(d->start, warmup);
    EXPECT_EQ(job.TriggeredAt(9), warmup + 60);
  }
}

// A machine alone at its level is odd only beyond the effect threshold and beyond the other
// machines' own scatter of levels, as far as they show it (jobgen's seed 43,101, 8 hosts): hosts
// whose data loaders take their own share of the CPUs idle at 0.71-0.83, and the most loaded, at
// 0.64 (13% under the typical level, its nearest neighbour 10.4% away), is placed where it is, not
// named. Among GPUs that draw one power within 1%, a machine 13% under is odd, and named.
TEST(PeerModelTest, AMachineAloneAtItsLevelIsOddOnlyBeyondTheLevelsScatter) {
  for (const bool scattered : {true, false}) {
    SCOPED_TRACE(scattered);
    Rng rng(47, 0);
    Job job(8, {PeerSignal("cpu_idle")});
    const double levels[8] = {0.64, 0.71, 0.72, 0.73, 0.74, 0.78, 0.81, 0.83};
    job.Run(0, 900, 15, [&](uint32_t m, uint32_t, double) {
      return Fresh(Noisy(rng, m == 0 ? 0.64 : scattered ? levels[m] : 0.735));
    });
    EXPECT_EQ(job.Named(), scattered ? std::vector<uint32_t>{} : std::vector<uint32_t>{0});
  }
  // The scatter is the other machines', and how far it can be read from them: of four at 100,
  // 100, 105 and 75, the last is not odd (three levels say little of how far healthy levels
  // scatter: it would need 20 of their standard deviations), while of four at 100, 100.4, 99.6
  // and 75 it is.
  for (const bool tight : {false, true}) {
    SCOPED_TRACE(tight);
    Rng rng(48, 0);
    Job four(4, {PeerSignal("power")});
    const double levels[2][4] = {{100, 100, 105, 75}, {100, 100.4, 99.6, 75}};
    four.Run(0, 900, 15, [&](uint32_t m, uint32_t, double) {
      return Fresh(Noisy(rng, levels[tight ? 1 : 0][m]));
    });
    EXPECT_EQ(four.Named(), tight ? std::vector<uint32_t>{3} : std::vector<uint32_t>{});
  }
}

// Runs `job` (32 machines) as a pipeline of four stages whose power lies half below and half
// above the typical level (240 and 270; 380 and 390), sampled every 5 s until `end`: a machine's
// sample is of the kind `kind` says (silent, or a copy of its last value), and with `falls`
// machine 3 falls to 170 at 900 s.
void RunFourStages(Job& job, double end, const std::function<Sample::Kind(uint32_t, double)>& kind,
                   bool falls = false) {
  Rng rng(91, 0);
  const double stage[4] = {240, 270, 380, 390};
  std::vector<double> last(32);
  job.Run(0, end, 5, [&](uint32_t m, uint32_t, double t) {
    const Sample::Kind k = kind(m, t);
    if (k == Sample::Kind::kNone) return kNone;
    if (k == Sample::Kind::kHeld) return Held(last[m]);
    last[m] = Noisy(rng, falls && m == 3 && t >= 900 ? 170 : stage[m / 8]);
    return Fresh(last[m]);
  });
}

// Silent (no sample) where `when` holds, fresh elsewhere: RunFourStages' kind.
std::function<Sample::Kind(uint32_t, double)> SilentWhen(
    std::function<bool(uint32_t, double)> when) {
  return [when = std::move(when)](uint32_t m, double t) {
    return when(m, t) ? Sample::Kind::kNone : Sample::Kind::kFresh;
  };
}

// Jobgen's seed 81,001 (32 machines in 4 pipeline stages, 5 s): a stage machine's exporter
// restarted over the warm-up's end (298-323 s). The levels of the stages lay half below the
// typical level and half above, and without that machine the typical one was a lower stage's:
// the placements of the machines that reported were re-centred on it, the absent machine's not,
// and back from the restart it was expected at a lower stage's power and named (twice). Every
// machine's placement is re-centred alike, present or not.
TEST(PeerModelTest, AMachineAbsentWhenThePlacementsAreReCentredIsReCentredToo) {
  Job job(32, {PeerSignal("power")}, PeerOptions{});
  RunFourStages(job, 1800,
                SilentWhen([](uint32_t m, double t) { return m == 20 && t >= 295 && t < 325; }));
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
}

// Two machines alone at their levels from their first samples, at different levels, among GPUs
// that draw one power within 1% (one at half power, one at 75%). Each odd one widens the others'
// scatter: read against all the others at once (965a455, a reviewer's case), neither of eight was
// odd and neither was ever named, and of sixteen or 64 the 75 never was. The furthest is tested
// first against all the others, the next against the others but the first: both are named.
TEST(PeerModelTest, TwoMachinesOddFromTheStartAtDifferentLevelsAreBothNamed) {
  for (const uint32_t n : {8u, 16u, 64u}) {
    SCOPED_TRACE(n);
    Rng rng(49, 0);
    Job job(n, {PeerSignal("power")});
    job.Run(0, 900, 15, [&](uint32_t m, uint32_t, double) {
      return Fresh(Noisy(rng, m == n - 2 ? 50 : m == n - 1 ? 75 : 100));
    });
    EXPECT_EQ(job.Named(), (std::vector<uint32_t>{n - 2, n - 1}));
  }
}

// Of eight GPUs that draw one power within 1%, machine 6 is at half power from its start and
// named. The job hangs (1500) and restarts (1900); while it was down machine 7 fell to 70. Were
// machine 7's 70 read into the others' scatter over the restart's warm-up (965a455, a reviewer's
// case), machine 6 would be placed at its half there and, a placed machine staying placed past
// the warm-up, never be compared with its peers again. It still is, and machine 7 is named too.
TEST(PeerModelTest, AMachineNamedBeforeARestartIsStillComparedWithItsPeersAfterIt) {
  Rng rng(52, 0);
  Job job(8, {PeerSignal("power")});
  const auto sample = [&](uint32_t m, uint32_t, double t) {
    if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
    if (m == 6) return Fresh(Noisy(rng, 50));
    return Fresh(Noisy(rng, m == 7 && t >= 1900 ? 70 : 100));
  };
  job.Run(0, 1500, 5, sample);
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{6});
  job.Run(1500, 2800, 5, sample);
  ASSERT_EQ(job.stalls().size(), 1u);
  EXPECT_EQ(job.Named(), (std::vector<uint32_t>{6, 7}));
  const std::optional<Deviation> d = job.DeviationOn(6, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_NEAR(d->expected, 100, 5);
}

// Hosts whose network rates scatter as jobgen draws them (18-24 GB/s), one with its NIC at half
// rate from its first sample (10.5 GB/s). Of eight, the seven others' scatter (a standard
// deviation of 0.059 in log) puts odd at 6.1 of them from their mean (0.36; the NIC is 0.68 from
// it): named. Of five, the four others' (0.076) put it at 11.4 of them (0.87): the NIC is placed
// at its half, as a few widely scattered levels say little of how far healthy levels scatter (a
// reviewer's simulation: named in 9% of 4-host jobs, 27% of 5-host, 61% of 6-host). A bound of
// 40% from the typical level, odd whatever the scatter, named it but also a healthy host idling
// 3% among hosts idling 5-6% (below), and was not kept. A defect from before the job is
// Validate's to find.
TEST(PeerModelTest, AHalfRateNicIsOddAmongEightHostsOfScatteredBandwidthButNotAmongFive) {
  for (const uint32_t n : {5u, 8u}) {
    SCOPED_TRACE(n);
    Rng rng(51, 0);
    Job job(n, {PeerSignal("net_rx")});
    const double rates[8] = {0, 19.3, 20, 21, 23, 20.5, 22, 21.5};
    job.Run(0, 900, 15, [&](uint32_t m, uint32_t, double) {
      return Fresh(Noisy(rng, m == 0 ? 10.5 : rates[m]));
    });
    EXPECT_EQ(job.Named(), n == 8 ? std::vector<uint32_t>{0} : std::vector<uint32_t>{});
  }
}

// Five busy hosts: four whose CPUs idle 5-6% of the time, and one (rank 0: logging, checkpoint
// serialisation) 3%, 97% busy against 94-95%: a healthy host, 45% under the typical idle level,
// whose few peers scatter by 8% in log. It is placed (a reviewer's case against the 40% bound).
TEST(PeerModelTest, AHostBusierByTwoPointsOfCpuAmongFiveIsNotNamed) {
  Rng rng(54, 0);
  Job job(5, {PeerSignal("cpu_idle", Worse::kEither, 120)}, PeerOptions{});
  const double idle[5] = {0.030, 0.050, 0.052, 0.055, 0.060};
  job.Run(0, 900, 15, [&](uint32_t m, uint32_t, double) { return Fresh(Noisy(rng, idle[m])); });
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
}

// The same host among many: rank 0 (logging, checkpoint serialisation) idles 3% of the time, 63
// or 31 other hosts 5.0-6.2% (their data loaders' share, as in the five above, spread evenly). It
// is as healthy as among five, and their scatter puts several of them beyond the effect threshold
// (8 of 63, 4 of 31), fewer than a quarter: three or more beyond it make the group one that
// differs by placement, and nobody is named. A change tried in session 63 (3dd3c4f: only
// machines not odd count toward the three, so that three GPUs throttled from the job's start at
// levels of their own among 64 are named) let the generalized ESD test read rank 0's log level
// (0.61 under the typical one: ratios of levels near 0 explode) as odd against their 0.06 and
// name it (a reviewer's case); it was reverted.
TEST(PeerModelTest, AHostBusierByTwoPointsOfCpuAmongManyIsNotNamed) {
  for (const uint32_t n : {32u, 64u}) {
    SCOPED_TRACE(n);
    Rng rng(56, 0);
    Job job(n, {PeerSignal("cpu_idle", Worse::kEither, 120)}, PeerOptions{});
    job.Run(0, 900, 15, [&](uint32_t m, uint32_t, double) {
      // Hosts 1..n-1 spread evenly over 5.0-6.2%, in an order unrelated to their numbers.
      const double spread = static_cast<double>((m * 37) % (n - 1)) / (n - 2);
      return Fresh(Noisy(rng, m == 0 ? 0.030 : 0.050 + 0.012 * spread));
    });
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
    EXPECT_TRUE(job.shared().empty());
  }
}

// The same pipeline job, machine 20's exporter restarting again and again from 880 s (silent 30 s
// of every 2 minutes), and machine 3 falling from 240 to 170 at 900 s. Each time machine 20 leaves
// or returns, the typical machine of those that report crosses the gap between the stages and
// the re-centring moves the centre C between about 380 and 270. Unless what is kept of the centre
// (its slow average, its still point, its level) moves with it, each move reads as a job-wide one
// and nobody is judged for settle_s: at 71b49c3 the group was never judged again and machine 3
// never named (a reviewer's case).
TEST(PeerModelTest, AnExporterRestartingAgainAndAgainDoesNotBlindItsGroup) {
  Job job(32, {PeerSignal("power")}, PeerOptions{});
  RunFourStages(job, 3600, SilentWhen([](uint32_t m, double t) {
                  return m == 20 && t >= 880 && std::fmod(t - 880, 120) < 30;
                }),
                /*falls=*/true);
  EXPECT_GT(job.TriggeredAt(3), 900);
  EXPECT_LE(job.TriggeredAt(3), 1100);
}

// Re-centring the placements changes the unit of the centre C (the typical machine's level), and
// what is kept of C moves with it: machine 3, falling from 240 to 170 at 900 s, is named as soon
// with machine 20's 30-s exporter restart (905-935 s) as without it (until session 62 95 s
// later: nobody was judged for a minute after each re-centring; a reviewer's case).
TEST(PeerModelTest, ReCentringThePlacementsIsNoJobWideMove) {
  for (const bool restart : {false, true}) {
    SCOPED_TRACE(restart);
    Job job(32, {PeerSignal("power")}, PeerOptions{});
    RunFourStages(job, 2400, SilentWhen([&](uint32_t m, double t) {
                    return restart && m == 20 && t >= 905 && t < 935;
                  }),
                  /*falls=*/true);
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
    EXPECT_LE(job.TriggeredAt(3), 1000);
  }
}

// Where the levels lie half at 20 and half at 200 (a traffic rate of a pipeline's two halves), one
// machine of the upper half silent from 900 to 1,800 s moves the typical machine to the lower
// half and the re-centring takes C from 200 to 20. With the feature's usual level left at 200 the
// feature read as stalled, and a job-level stall was reported at 1,225 s (a reviewer's case).
TEST(PeerModelTest, AMachineSilentWhereTheLevelsLieHalfOnEitherSideOfAGapIsNoJobStall) {
  Rng rng(91, 0);
  Job job(16, {PeerSignal("rx")}, PeerOptions{});
  job.Run(0, 2400, 5, [&](uint32_t m, uint32_t, double t) {
    if (m == 12 && t >= 900 && t < 1800) return kNone;
    return Fresh(Noisy(rng, m < 8 ? 20 : 200));
  });
  EXPECT_TRUE(job.stalls().empty());
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
}

// A machine whose placement was never learned (silent over the whole window the warm-up learns
// placements from, 140-330 s; or first seen at 600 s, after the warm-up) in a group whose machines
// differ by placement starts at its first level even where that deviates: machine 5 of the stage
// at 240 (the typical machine's 380) was named at 420 and 660 s, expected at the typical level
// (a reviewer's case).
TEST(PeerModelTest, AMachineWhosePlacementWasNeverLearnedIsNotNamedForItsStagesLevel) {
  for (const bool joins_late : {false, true}) {
    SCOPED_TRACE(joins_late);
    Job job(32, {PeerSignal("power")}, PeerOptions{});
    RunFourStages(job, 1800, SilentWhen([&](uint32_t m, double t) {
                    return m == 5 && (joins_late ? t < 600 : t >= 140 && t < 330);
                  }));
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
  }
}

// The same where the machine's series still reports over that window but only copies of its last
// value (its gauge held: no evidence), as every rank's step time in jobgen's seed 131,002 (a
// pipeline of four stages at 5 s) held over most of the warm-up. The machine was there as the
// warm-up ended, its own past began at the placement it then had (1: the typical machine's level),
// and the placement learned at its first fresh sample after the warm-up (its stage's) left that
// past where it was: machine 3 was named against its own past for its stage's level (1.4 times
// the job's median step time: two healthy hosts of 131,002). Its own past begins at the placement
// its first fresh level gives it; its fall at 900 s is named.
TEST(PeerModelTest, AMachineWhoseSeriesHeldOverTheWarmUpIsNotNamedForItsStagesLevel) {
  for (const bool falls : {false, true}) {
    SCOPED_TRACE(falls);
    Job job(32, {PeerSignal("power")}, PeerOptions{});
    RunFourStages(
        job, 1800,
        [](uint32_t m, double t) {
          return m == 3 && t >= 140 && t < 330 ? Sample::Kind::kHeld : Sample::Kind::kFresh;
        },
        falls);
    ExpectNamedOnlyForItsFault(job, 3, falls, 900);
    if (falls) {
      EXPECT_LE(job.TriggeredAt(3), 1000);
    }
  }
}

// Over the warm-up a machine's level is learned from its ratio to the centre, but a deviation
// only once it has lasted the persistence time: machine 3's 20 s dip to 70 near the end of the
// warm-up is a short event, not its level. When it later drops to 50 it is expected at about
// the peers' 100: 98.4, the tail of its smoothed recovery (under 10% off) being learned;
// learning the dip as well would have placed it at 94.4.
TEST(PeerModelTest, AShortEventOverTheWarmUpIsNotLearnedAsTheMachinesLevel) {
  Rng rng(24, 0);
  Job job(16, {PeerSignal("power")});
  job.Run(0, 420, 1, [&](uint32_t m, uint32_t, double t) {
    double v = 100;
    if (m == 3 && t >= 260 && t < 280) v = 70;
    if (m == 3 && t >= 400) v = 50;
    return Fresh(Noisy(rng, v));
  });
  const std::optional<Deviation> d = job.DeviationOn(3, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_GE(d->start, 401);
  EXPECT_LE(d->start, 404);
  EXPECT_GT(d->expected, 97);
  EXPECT_LT(d->expected, 100.5);
}

// A job that hangs from its start and begins to train just before its warm-up ends (jobgen's seed
// 14,001 at a 30 s cadence). Over the hang the lowest tensor activity of a machine's GPUs is 0 on
// some machines and a few ten-thousandths on others, and no level is known yet that would call
// it a stall. Scrapes are staggered: machines 0 and 1 are scraped just after training resumes,
// the others just before, so their first sample of training, 0.3, met a centre of 0.0003 and,
// the only level of the warm-up's second half above 0, was learned as a placement of 1,000;
// both were named once the level of training was known. Placements are learned until the centre
// has settled (here until the usual level, the hang's, has caught up with training's, which
// then no longer reads as a move): nobody is named.
TEST(PeerModelTest, AWarmUpDoesNotEndWhileItsGroupCrossesATransition) {
  Rng rng(25, 0);
  Job job(16, {PeerSignal("tensor_active")});
  job.Run(0, 3600, 30, [&](uint32_t m, uint32_t, double t) {
    if (t >= 300 || (t >= 270 && m < 2)) return Fresh(Noisy(rng, 0.3));
    return Fresh(m < 2 ? 0 : Noisy(rng, 0.0003));
  });
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
  for (uint32_t m = 0; m < 16; ++m) {
    EXPECT_TRUE(job.model().Quiet(m)) << m;
    EXPECT_NEAR(*job.ZOf(m, kMean), 0, 4) << m;
  }
}

// Jobgen's seed 93,004 (32 machines, 15-s scrapes, staggered): the warm-up after a restart ended
// during an evaluation that followed a checkpoint, its window's levels those of the job crossing
// into the checkpoint. A host's receive rate, worse when lower, drops from 100 to 0.5 in the
// checkpoint and is 6 in the evaluation; machine 3 still sent at 100 in its two scrapes after the
// others had stopped (there a scrape failure), against a smoothed centre halfway down, and that
// was learned as its placement (2.6 times its peers' here): with the machines that crossed as
// they were scraped (each placed off too) it was reported as a deviation they share once training
// resumed, and its fall to 50 later was never named. A warm-up does not end while its feature
// stalls (under a fifth of its usual level): its placements are learned from the training after
// it, nobody deviates, and machine 3 falling to 50 is named.
TEST(PeerModelTest, AWarmUpDoesNotEndWhileItsFeatureStalls) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(93, 4);
    Job job(16, {PeerSignal("traffic", Worse::kLower)});
    std::vector<double> last(16, 0);
    job.Run(0, 1500, 1, [&](uint32_t m, uint32_t, double t) {
      if (static_cast<int>(t) % 15 != static_cast<int>(m) % 15) return Held(last[m]);
      double v = 100;
      if (t >= 165 && t < 260 && (m != 3 || t >= 195)) v = 0.5;
      if (t >= 260 && t < 420) v = 6;
      if (fault && m == 3 && t >= 1000) v = 50;
      last[m] = Noisy(rng, v);
      return Fresh(last[m]);
    });
    ExpectNamedOnlyForItsFault(job, 3, fault, 1000);
    EXPECT_TRUE(job.shared().empty());
  }
}

// A checkpoint in the window of a warm-up that a slow init and a hang took (jobgen's seed 127,101
// on 1,024 machines, 15-s scrapes, staggered): the init and the first iterations run at a
// twentieth of the training rate until 130 s, the job hangs until 372 s, trains, and checkpoints
// from 463 to 551 s at about a thirtieth of it. The ring the level is the median of held the init
// and the hang, so the checkpoint's centre lay above a fifth of the level: no stall, and the levels
// of the job's crossing into it and out of it were learned (machines 5 and 12 bursting to 3 times
// their level as the others went quiet, machines 2 and 9 back early), placing some far off their
// own level; they deviated from it from then on, and one was named. Judged against the recent level
// (that of the warm-up's last half) as well, the checkpoint is a stall of the warm-up: nobody
// deviates.
TEST(PeerModelTest, ACheckpointAfterASlowInitAndAHangIsAStallOfTheWarmUp) {
  for (const uint32_t n : {16u, 64u}) {
    for (const double cadence : {5.0, 15.0}) {
      SCOPED_TRACE(testing::Message() << n << " machines, cadence " << cadence);
      Rng rng(87, 0);
      Job job(n, {PeerSignal("rx", Worse::kLower)}, PeerOptions{});
      std::vector<double> last(n, 0);
      const int every = static_cast<int>(cadence);
      job.Run(0, 2400, 1, [&](uint32_t m, uint32_t, double t) {
        if (static_cast<int>(t) % every != static_cast<int>(m) % every) return Held(last[m]);
        const double own = 0.86 + 0.01 * (m % 15);
        double v = 100 * own;
        if (t < 130) {
          v = 5 * own;
        } else if (t < 372) {
          v = 0.05 * own;
        } else if (t >= 463 && t < 551) {
          v = 3 * own;
        }
        if (m % 7 == 5 && t >= 463 && t < 463 + 2 * cadence) v = 300;
        if (m % 7 == 2 && t >= 551 - 2 * cadence && t < 551) v = 100 * own;
        last[m] = Noisy(rng, v);
        return Fresh(last[m]);
      });
      EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
      for (uint32_t m = 0; m < n; ++m) EXPECT_FALSE(job.DeviationOn(m, 0).has_value()) << m;
    }
  }
}

// Jobgen's seed 121,001 (32 machines, 5 s, fault-free on this machine): the job hung from its
// first seconds to 260 s and only then began to train, so the warm-up's window (150-300 s) held the
// GPUs' idle temperatures, and the temperature, rising for minutes after it (a thermal lag, 60 s
// here), never moved by a fifth of its level against its slow average in one frame. A GPU's
// temperature is its inlet's plus its load's rise: machine 3, 11 C cooler than its peers, sits
// at 0.69 of their idle temperature and 0.80 of their working one, and was placed at 0.69. After
// a hang long enough for a restart, the restart learned 0.80, the placement from before was kept
// (it had moved alone), and the machine was named hot. Placements are learned until the centre
// lies within a fifth of its level of where it stood as the window began: machine 3 is placed
// at its working level from the start and never named.
TEST(PeerModelTest, APlacementIsNotLearnedWhileAnAffineLevelStillRises) {
  SignalInfo temperature = PeerSignal("gpu_temp", Worse::kHigher, 300);
  temperature.level_by_position = true;
  Rng rng(121, 1);
  Job job(16, {PeerSignal("power"), PeerSignal("tensor"), temperature});
  const auto hung = [](double t) { return t < 260 || (t >= 1300 && t < 1900); };
  std::vector<double> rise(16, 8);  // the load's rise over the inlet, idle: 8 C, working: 28 C
  job.Run(0, 2900, 5, [&](uint32_t m, uint32_t s, double t) {
    if (s < 2) return Fresh(Noisy(rng, hung(t) ? 2 : 100));
    rise[m] += (1 - std::exp(-5.0 / 60)) * ((hung(t) ? 8 : 28) - rise[m]);
    return Fresh(Noisy(rng, (m == 3 ? 17 : 28) + rise[m]));
  });
  ASSERT_EQ(job.stalls().size(), 1u);
  EXPECT_TRUE(job.Named().empty());
}

// Jobgen's seed 121,003 at 15 s: a restart's warm-up that a checkpoint and the job's stalls took
// left one sample of a host's NVLink rate in its window, as the job crossed out of a stall (its
// peers still at half their rate, its own scrape a burst at twice it), and the host was placed
// at 2.6 times its peers and named once the job trained again. Here 4 machines (too few to
// compare placements with those from before the restart), 15-s scrapes: the job hangs at 1,500 s
// and restarts at 2,000 s; in the restart's window its power and tensor activity stall (every
// rank waits: a job-level stall, in which no level is learned) but for one scrape at 2,190 s,
// where the traffic of machine 3 reads 2.5 times the others'. One value is no level: machine 3
// keeps its placement from before, and is not named once the job trains again.
TEST(PeerModelTest, ARestartsWindowWithOneValueKeepsThePlacementFromBefore) {
  Rng rng(121, 3);
  Job job(4, {PeerSignal("traffic", Worse::kLower), PeerSignal("power"), PeerSignal("tensor")});
  job.Run(0, 3000, 15, [&](uint32_t m, uint32_t s, double t) {
    if (t >= 1500 && t < 2000) return Fresh(Noisy(rng, s == 0 ? 0.5 : 2));  // the hang
    const bool waits = t >= 2100 && t < 2400 && (t < 2190 || t >= 2205);
    if (s > 0) return Fresh(Noisy(rng, waits ? 2 : 100));
    if (t >= 2100 && t < 2400) return Fresh(Noisy(rng, m == 3 && t >= 2190 && t < 2205 ? 125 : 50));
    return Fresh(Noisy(rng, 100));
  });
  ASSERT_EQ(job.stalls().size(), 1u);
  EXPECT_TRUE(job.Named().empty());
}

// A reviewer's sweep of the rule above (session 68): a fault that begins as a stall inside the
// warm-up ends (machine 3's link comes back from a checkpoint at half its rate) is no placement.
// 16 machines at 1 s, traffic worse when lower at 100, stalled at 0.5 from `start` for `length`.
// Named in every case, within 250 s of the stall's end, and nobody without the fault; where the
// stall runs past the warm-up's end, 196 s after it against 143 s before the rule (the placements
// are learned after it, for 60 s).
TEST(PeerModelTest, AFaultFromAStallsEndInsideTheWarmUpIsNamed) {
  for (const double start : {100.0, 150.0, 200.0, 250.0}) {
    for (const double length : {60.0, 120.0, 180.0, 240.0}) {
      for (const bool fault : {false, true}) {
        SCOPED_TRACE(::testing::Message() << start << " " << length << " " << fault);
        Rng rng(68, 1);
        Job job(16, {PeerSignal("traffic", Worse::kLower)});
        const double end = start + length;
        job.Run(0, 1200, 1, [&](uint32_t m, uint32_t, double t) {
          double v = 100;
          if (t >= start && t < end) v = 0.5;
          if (fault && m == 3 && t >= end) v = 50;
          return Fresh(Noisy(rng, v));
        });
        ExpectNamedOnlyForItsFault(job, 3, fault, end);
        if (fault) {
          EXPECT_LE(job.TriggeredAt(3) - end, 250);
        }
      }
    }
  }
}

// Jobgen's seed 43,003 at 1 s: a job restarted after a hang runs for seconds and hangs again.
// Machines 2 and 3, whose CPU idle sits at 0.85 of the others' (heavier data loaders), are
// placed there. In those seconds machines 2, 5 and 9 have cron jobs of their own (too many to
// be kept at their placements from before as the odd ones out), and the warm-up begun with the
// restart has no sample in its second half before the group stalls again (no placement is
// learned during a stall): the placements from before stand, and in the second hang machine 2,
// as placed, is no fault. Learned from those seconds, its placement read it as twice as busy as
// it is, and it was named once the warm-up ended.
TEST(PeerModelTest, AWarmUpThatAStallTakesOverLearnsNoPlacement) {
  Rng rng(45, 0);
  Job job(16, {PeerSignal("cpu_idle"), PeerSignal("tensor_active"), PeerSignal("traffic"),
               PeerSignal("nvlink")});
  job.Run(0, 2400, 1, [&](uint32_t m, uint32_t s, double t) {
    const bool training = t < 600 || (t >= 1200 && t < 1230);
    if (s > 0) return Fresh(Noisy(rng, training ? 100 : 2));
    const bool cron = (m == 2 || m == 5 || m == 9) && t >= 1195 && t < 1230;
    return Fresh(Noisy(rng, cron ? 0.35 : m == 2 || m == 3 ? 0.64 : 0.75));
  });
  ASSERT_EQ(job.stalls().size(), 2u);
  EXPECT_GT(job.stalls()[1].second.start, 1200);
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
}

// Jobgen's seed 43,101 (1,024 machines, fault-free): events of a machine's own over most of the
// warm-up's last half (150-300 s) became its placement. Machine 3's receive rate, worse when
// lower, read 130 over 170-275 s (a network burst and the smoothing's tail), and machine 5's CPU
// idle, worse either way, 90 over 160-215 s and 225-290 s (a cron job, then a noisy neighbour)
// where it sits at 115 (hosts idle at levels of their own, 100 to 145, as data loaders take their
// share). After the warm-up neither level once sat at its placement, and each is back at the
// level it held before its window and at the window's start: each is learned again where it
// stands, and neither is named. Machine 3 falling to 60 later, its level held, is named.
TEST(PeerModelTest, AWarmUpLearnedFromEventsOfTheMachinesOwnIsLearnedAgainWhereItStands) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(52, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower), PeerSignal("cpu_idle")});
    job.Run(0, 3000, 5, [&](uint32_t m, uint32_t s, double t) {
      if (s == 0 && m == 3) {
        if (fault && t >= 2000) return Fresh(Noisy(rng, 60));
        return Fresh(Noisy(rng, t >= 170 && t < 275 ? 130 : 100));
      }
      if (s == 1) {
        const bool busy = m == 5 && ((t >= 160 && t < 215) || (t >= 225 && t < 290));
        return Fresh(Noisy(rng, busy ? 90 : 100 + 15 * (m % 4)));
      }
      return Fresh(Noisy(rng, 100));
    });
    ExpectNamedOnlyForItsFault(job, 3, fault, 2000);
  }
}

// A reviewer's case (session 66) against a4fbc66, which took the level held before the window
// from the newest 8 levels before it (at 15 s the median of every level before the window reached
// back into the job's init: jobgen's seed 89,101). Machine 3 at 125 among peers at 90-125, 15-s
// scrapes: its rate falls to 95 (the level of peers 1 and 9) at 60 s, 90 s before the warm-up's
// window (150-300 s), is back at 125 from 180 s (the window's first two values low), and falls to
// 95 again at 300 s for good. The median of every level before the window (0-135 s) is 125, and
// machine 3 is named. The newest 8 (30-135 s) hold 5 of the fault's: their median, 95, was taken
// for its level before the window, and it was learned again at the fault's level, never named (in
// the reviewer's sweep, 62 of 1,440 such faults more were missed, at 12- and 15-s cadences).
TEST(PeerModelTest, AFaultBeforeTheWindowThatComesBackIsNotLearnedAsTheLevel) {
  Rng rng(11, 0);
  Job job(16, {PeerSignal("rx", Worse::kLower)});
  job.Run(0, 2400, 15, [&](uint32_t m, uint32_t, double t) {
    if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
    const bool fault = (t >= 60 && t < 180) || t >= 300;
    return Fresh(Noisy(rng, fault ? 95 : 125));
  });
  ExpectNamedOnlyForItsFault(job, 3, true, 300);
  EXPECT_LE(job.TriggeredAt(3), 600);
}

// Jobgen's seed 65,101 (1,024 machines, fault-free, 15 s scrapes, staggered): the machines
// appear over the first 15 s, many after the CPU idle's warm-up began; one of them (its level 10%
// above the centre), whose window held two cron jobs, was placed at them (a little under the
// centre), and was named 20 minutes into the job as the peers' spread fell. Its placement was taken
// as confirmed: one who joins later is as unconfirmed as those there from the start. Machine 13
// here (114, among machines at 100 to 114, and 97 in its cron jobs), first seen at 15 s, is
// learned again where it stands, not named; falling to 60 later, it is named.
TEST(PeerModelTest, AMachineThatJoinsTheWarmUpLateIsLearnedAgainAsTheOthersAre) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(52, 0);
    Job job(16, {PeerSignal("cpu_idle", Worse::kEither, 120)});
    job.LateFrom(8, 15);
    job.Run(0, 3000, 15, [&](uint32_t m, uint32_t, double t) {
      if (m != 13) return Fresh(Noisy(rng, 100 + 2 * (m % 8)));
      if (fault && t >= 2000) return Fresh(Noisy(rng, 60));
      const bool busy = (t >= 160 && t < 215) || (t >= 225 && t < 290);
      return Fresh(Noisy(rng, busy ? 97 : 114));
    });
    ExpectNamedOnlyForItsFault(job, 13, fault, 2000);
  }
}

// But one first seen minutes into the warm-up has held no level long enough before its window
// to be placed again at one (a reviewer's case): machine 13's power (a group that differs by
// placement, machines 0-3 at 150) reads 60 from its first sample at 120 s to 160 s, its peers'
// 100 over the window, and 60 again from 300 s. Placed again at the level it held before its
// window, it would never be named; it is named, as one there from the start is.
TEST(PeerModelTest, AMachineThatJoinsMinutesIntoTheWarmUpIsNotLearnedAgain) {
  Rng rng(52, 0);
  Job job(16, {PeerSignal("power")});
  job.LateFrom(8, 120);
  job.Run(0, 3000, 15, [&](uint32_t m, uint32_t, double t) {
    if (m != 13) return Fresh(Noisy(rng, m < 4 ? 150 : 100));
    return Fresh(Noisy(rng, t < 160 || t >= 300 ? 60 : 100));
  });
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{13});
}

// Jobgen's seed 59,200 (32 machines, fault-free, 5 s, benign events of 1-60 s): two network
// bursts of one host (140-190 s and 265-320 s) took 76 s of its window (150-300 s) and the
// window's first sample, and the two runs of raw values away from the median made no single event:
// it was placed at the bursts' level and named at its own 5 minutes later. Machine 3 here, the
// same: back at the typical machine's level, which it held before the window, it is learned again
// there although the window began in a burst. Machine 3 falling to 60 later is named.
TEST(PeerModelTest, EventsOverTheWindowsStartOfAMachineTypicalBeforeAndAfterAreNoPlacement) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(52, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 3000, 5, [&](uint32_t m, uint32_t, double t) {
      if (m != 3) return Fresh(Noisy(rng, 100));
      if (fault && t >= 2000) return Fresh(Noisy(rng, 60));
      const bool burst = (t >= 140 && t < 190) || (t >= 265 && t < 320);
      return Fresh(Noisy(rng, burst ? 150 : 100));
    });
    ExpectNamedOnlyForItsFault(job, 3, fault, 2000);
  }
}

// Jobgen's seeds 87,101 and 97,101 (1,024 machines, fault-free, 15 s): a host's network burst of
// about 55 s inside the warm-up's window (150-300 s) and a level before the window on the worse
// side (the job's load ramping), rebuilt from the hosts' levels at each sample. In the first the
// burst's partial rates at both ends and the window's first value a little low; in the second a
// glitch (a rate near 0) at the window's first value. The raw values' median fell between the
// two levels, no event stood out of it, and each host was placed at its burst, never back at it,
// and named 4 and 20 minutes later. Machine 3 here, the same: its better side's level began and
// ended inside the window, which no fault makes; learned again, not named; falling to 60 later,
// named.
TEST(PeerModelTest, ABurstThatBeganAndEndedInsideTheWindowIsNoPlacement) {
  // Machine 3's levels over the window's ten samples (150-285 s), 100 the centre.
  const std::vector<std::vector<double>> windows = {
      {95.7, 180, 180, 180, 180, 107.5, 101.5, 101.5, 101.5, 101.5},
      {1, 109, 200, 200, 200, 200, 114, 98, 98, 98}};
  for (size_t w = 0; w < windows.size(); ++w) {
    for (const bool fault : {false, true}) {
      SCOPED_TRACE(testing::Message() << "window " << w << (fault ? ", fault" : ""));
      Rng rng(87, 0);
      Job job(16, {PeerSignal("rx", Worse::kLower)});
      job.Run(0, 3000, 15, [&](uint32_t m, uint32_t, double t) {
        if (m != 3) return Fresh(Noisy(rng, 100));
        if (fault && t >= 2000) return Fresh(Noisy(rng, 60));
        if (t < 150) return Fresh(Noisy(rng, w == 0 ? 90 : 80));
        const size_t k = static_cast<size_t>((t - 150) / 15);
        return Fresh(Noisy(rng, k < windows[w].size() ? windows[w][k] : windows[w].back()));
      });
      ExpectNamedOnlyForItsFault(job, 3, fault, 2000);
    }
  }
}

// A reviewer's cases (session 71) against 05078d5, reverted, which learned a machine again
// wherever the level before its window and the one now both lay within the threshold of the
// centre, however far apart (jobgen's seed 98,101: a host at 0.94 of the centre while the job's
// load ramped, 1.045 after two network bursts of its own in the window, is still named). A
// machine of a level of its own inside the typical one (5-9% off the centre: its data shard, its
// NIC's placement) that falls to the other side of it late in the window or before its placement
// is confirmed (a GPU throttling minutes into the load, a link renegotiated down) is a fault; it
// was learned again at the fault's level and never named (in the reviewer's sweep of 1,176 such
// falls, 537 fewer named). Worse kHigher mirrors it (a step's compute time: 100 * 100 / v).
struct FallInsideTheTypicalLevel {
  const char* name;
  Worse worse;
  double every, own, to, onset;
  double join = -1;  // machines 8-15 first seen then
  uint32_t machine = 3;
};
TEST(PeerModelTest, AFaultFromAnOwnLevelInsideTheTypicalOneToItsOtherSideIsNamed) {
  const FallInsideTheTypicalLevel cases[] = {
      {"receive rate, 15 s", Worse::kLower, 15, 108, 95, 300},
      {"step time, 5 s", Worse::kHigher, 5, 107.5, 93.5, 285},
      {"cpu idle, 15 s", Worse::kEither, 15, 108, 92, 330},
      {"receive rate, 60 s (window 360-720 s)", Worse::kLower, 60, 108, 93, 660},
      {"receive rate, a late joiner", Worse::kLower, 15, 108, 93, 330, 15, 13},
  };
  for (const FallInsideTheTypicalLevel& c : cases) {
    for (const uint64_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE(testing::Message() << c.name << ", seed " << seed);
      Rng rng(seed, 0);
      Job job(16, {PeerSignal("x", c.worse)});
      if (c.join > 0) job.LateFrom(8, c.join);
      job.Run(0, 2400, c.every, [&](uint32_t m, uint32_t, double t) {
        double v = m != c.machine ? 100 : t >= c.onset ? c.to : c.own;
        if (c.worse == Worse::kHigher) v = 100 * 100 / v;
        return Fresh(Noisy(rng, v));
      });
      EXPECT_EQ(job.Named(), std::vector<uint32_t>{c.machine});
      EXPECT_GT(job.TriggeredAt(c.machine), c.onset);
      EXPECT_LE(job.TriggeredAt(c.machine), c.onset + 240);
    }
  }
}

// The same reviewer's flapping fault: machine 3 at 108 (receive rate, 15 s) down to 94 over
// 240-270 s, back at 108, and down to 94 for good from `back_to` (05078d5: never named).
TEST(PeerModelTest, AFaultFlappingLateInTheWindowInsideTheTypicalLevelIsNamed) {
  for (const double back_to : {285.0, 300.0, 330.0}) {
    for (const uint64_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE(testing::Message() << back_to << ", seed " << seed);
      Rng rng(seed, 0);
      Job job(16, {PeerSignal("rx", Worse::kLower)});
      job.Run(0, 2400, 15, [&](uint32_t m, uint32_t, double t) {
        if (m != 3) return Fresh(Noisy(rng, 100));
        const bool down = (t >= 240 && t < 270) || t >= back_to;
        return Fresh(Noisy(rng, down ? 94 : 108));
      });
      EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
      EXPECT_GT(job.TriggeredAt(3), 240);
    }
  }
}

// But a machine of a level of its own that falls to the typical one late in its window, or just
// after it, is named: after the job's init (every machine at 100 until 130 s, which the level
// before the window holds), each machine's receive rate sits at a level of its own (90 to 125),
// machine 3's at 122; it falls to 105, the typical machine's, from T. Before the window it looked
// typical (the init), and it is typical now, but it never came back to that level inside its
// window and left it again: one move, not events of its own.
TEST(PeerModelTest, AMachineOfItsOwnLevelFallingToTheTypicalOneInItsWindowIsNamed) {
  for (const double from : {240.0, 270.0, 310.0}) {
    SCOPED_TRACE(from);
    Rng rng(56, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 1200, 5, [&](uint32_t m, uint32_t, double t) {
      if (t < 130) return Fresh(Noisy(rng, 100));
      if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
      return Fresh(Noisy(rng, t >= from ? 105 : 122));
    });
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
  }
}

// After jobgen's seed 46,101 (1,024 machines, fault-free, 15 s), rebuilt smaller: after the job's
// init (every machine at 100) each machine's receive rate sits at a level of its own (its NICs'
// bandwidth: 90 to 125), machine 3's at 122 but for a network burst of its own (250 over 200-247
// s). Of the 10 samples of the warm-up's window (150-300 s) the burst is in 3 raw values and, with
// the smoothing's tail, 5 smoothed ones lie beyond the tolerance; their median, its placement,
// read it 12% above its usual level, where it was named 16 minutes after the warm-up. The raw
// values away from their median form one run, fewer than those near it: the median of those is
// its placement, and it is named only when it falls to 95.
TEST(PeerModelTest, AnEventOfTheMachinesOwnOverLessThanHalfTheWarmUpsWindowIsNoPlacement) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(56, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
      if (t < 130) return Fresh(Noisy(rng, 100));
      if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
      if (t >= 200 && t < 247) return Fresh(Noisy(rng, 250));
      return Fresh(Noisy(rng, fault && t >= 3000 ? 95 : 122));
    });
    ExpectNamedOnlyForItsFault(job, 3, fault, 3000);
  }
}

// After jobgen's seed 89,101 (128 machines, fault-free, 15 s): most machines' receive rates share
// one level, a few sit 18% above it (kSharedMachines or more: the group differs by placement), and
// machine 3's, higher in the job's first minutes, is 7% above it but for a network burst of its
// own (twice its level) over the last 4 samples of the warm-up's window (150-300 s), its first
// rate after the burst partial (1.25 of its level, at 285 s). Half the window's raw values lie at
// each level, the burst's run at the window's end, which no tie learns from; the smoothed median,
// 1.47 of its level, was learned and never confirmed, and the level before the window was not its
// level now (Relearn's first way): it was named at its own level (here at 510 s). Back at the
// typical level, where the window began, it is learned again there (Relearn: back from the better
// side), and named for a fault that follows.
TEST(PeerModelTest, ABurstEndingWithTheWindowInAGroupOfOneLevelIsNoPlacement) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(59, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
      if (m != 3) return Fresh(Noisy(rng, m >= 12 ? 118 : 100));
      if (t < 150) return Fresh(Noisy(rng, 125));
      if (t >= 225 && t < 285) return Fresh(Noisy(rng, 214));
      if (t == 285) return Fresh(1.25 * 107);
      return Fresh(Noisy(rng, fault && t >= 3000 ? 70 : 107));
    });
    ExpectNamedOnlyForItsFault(job, 3, fault, 3000);
  }
}

// What learning a machine again at the typical level from the better side assumes (the case
// above): its placement is no population's, and most of its group sits at that level. A machine
// of a class of faster NICs (machines 0-3 at 140, the others at 100), or of a stage of one (eight
// machines at five levels, the centre's two), whose receive rate falls to the typical level just
// after the warm-up (315 s), before its placement is confirmed, is named.
TEST(PeerModelTest, AMachineFallingToTheTypicalLevelFromAPopulationsOrAStagesIsNamed) {
  for (const bool stages : {false, true}) {
    SCOPED_TRACE(stages);
    Rng rng(59, 0);
    Job job(stages ? 8 : 16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 2400, 15, [&](uint32_t m, uint32_t, double t) {
      constexpr double kStages[] = {150, 125, 125, 100, 100, 80, 80, 60};
      const double level = stages ? kStages[m] : m < 4 ? 140 : 100;
      return Fresh(Noisy(rng, m == 0 && t >= 315 ? 100 : level));
    });
    ExpectNamedOnlyForItsFault(job, 0, true, 315);
  }
}

// A reviewer's cases (session 67) against the rule the test above names, before it needed the
// machine at its level now at the window's first sample: a machine of a level of its own above the
// typical one (one to three of a faster NIC, or placed nearer the data's source: fewer than
// kSharedMachines others share it) whose receive rate falls to the typical level late in the
// warm-up's window or just after it, before its placement is confirmed, was learned again there
// and never named (in the reviewer's sweep, 25 of 3,240 such falls named, against 2,095 before).
// Machine 0's value is `level0(t)` (receive-rate units, 100 the typical level), machines 1 to
// fast-1 at `fast_level`, the others at 100. Worse kHigher mirrors it (a step's compute time: a
// faster machine at 100 * 100 / v). Returns when machine 0 was named (-1: never) and whether any
// other machine was named.
std::pair<double, bool> MachineZeroAgainstAFewFaster(uint32_t machines, uint32_t fast,
                                                     double fast_level, double every, Worse worse,
                                                     uint64_t seed,
                                                     const std::function<double(double)>& level0) {
  Rng rng(seed, 0);
  Job job(machines, {PeerSignal("rx", worse)});
  job.Run(0, 2400, every, [&](uint32_t m, uint32_t, double t) {
    double v = m == 0 ? level0(t) : m < fast ? fast_level : 100;
    if (worse == Worse::kHigher) v = 100 * 100 / v;
    return Fresh(Noisy(rng, v));
  });
  bool others = false;
  for (uint32_t m : job.Named()) others = others || m != 0;
  return {job.TriggeredAt(0), others};
}

// Machine 0 of `fast` machines at `level` falls to `to` at `onset` (MachineZeroAgainstAFewFaster).
std::pair<double, bool> FasterMachineFalls(uint32_t machines, uint32_t fast, double level,
                                           double to, double onset, double every, Worse worse,
                                           uint64_t seed) {
  return MachineZeroAgainstAFewFaster(machines, fast, level, every, worse, seed,
                                      [&](double t) { return t >= onset ? to : level; });
}

TEST(PeerModelTest, AFasterMachineOfItsOwnFallingToTheTypicalLevelIsNamed) {
  // One to three faster machines (newer NICs) of 16, at 130 against 100; machine 0 falls to 100
  // at 315 s.
  for (const Worse worse : {Worse::kLower, Worse::kHigher}) {
    for (const uint32_t fast : {1u, 2u, 3u}) {
      SCOPED_TRACE(testing::Message()
                   << "worse " << static_cast<int>(worse) << ", " << fast << " fast");
      const auto [at, others] = FasterMachineFalls(16, fast, 130, 100, 315, 15, worse, 59);
      EXPECT_GT(at, 315);
      EXPECT_FALSE(others);
    }
  }
}

// The fault begins in the warm-up's window's last minute (270 s): the window's median is still
// the machine's own level, and it is never back at it.
TEST(PeerModelTest, AFasterMachineFallingToTheTypicalLevelLateInTheWindowIsNamed) {
  for (const double onset : {255.0, 270.0, 285.0, 300.0}) {
    SCOPED_TRACE(onset);
    const auto [at, others] = FasterMachineFalls(16, 1, 130, 100, onset, 15, Worse::kLower, 59);
    EXPECT_GT(at, onset);
    EXPECT_FALSE(others);
  }
}

// Eight machines (a small job), slow cadences.
TEST(PeerModelTest, ASmallGroupsFasterMachineFallingAtASlowCadenceIsNamed) {
  for (const double every : {15.0, 30.0}) {
    SCOPED_TRACE(every);
    const double onset = 300 + every;
    const auto [at, others] = FasterMachineFalls(8, 1, 130, 100, onset, every, Worse::kLower, 59);
    EXPECT_GT(at, onset);
    EXPECT_FALSE(others);
  }
}

// A second reviewer's cases (session 67) against the rule above when it checked only the window's
// first sample: a faster machine of its own (130 against 100: a newer NIC, or nearer the data's
// source) whose receive rate dips to the typical level for a minute of its own about the window's
// start (135-195 s at 15 s: a checkpoint's write, a data loader's pause), at its own level for the
// rest of the window, falls to the typical level soon after the warm-up (a fault: the link
// renegotiated down). Its window's first sample sat at the typical level, and it was learned again
// there: never named. Its window's first half did not. Worse kHigher mirrors it (a step's compute
// time, a faster GPU).
TEST(PeerModelTest, AFasterMachineWithADipAtTheWindowsStartFallingIsNamed) {
  for (const Worse worse : {Worse::kLower, Worse::kHigher}) {
    for (const double onset : {300.0, 330.0}) {
      SCOPED_TRACE(testing::Message() << "worse " << static_cast<int>(worse) << ", " << onset);
      const auto [at, others] =
          MachineZeroAgainstAFewFaster(16, 1, 130, 15, worse, 59, [&](double t) {
            if (t >= onset) return 100.0;
            if (t >= 135 && t < 195) return 100.0;
            return 130.0;
          });
      EXPECT_GT(at, onset);
      EXPECT_FALSE(others);
    }
  }
}

// The same machine whose fault comes in two steps (to the typical level at 300 s, to 70 five
// minutes later) is named after the first step; learned again at it, it was named only a minute
// after the second.
TEST(PeerModelTest, AFasterMachineFallingInStepsIsNamedAtTheFirstStep) {
  for (const double dip_from : {135.0, 150.0}) {
    SCOPED_TRACE(dip_from);
    const auto [at, others] =
        MachineZeroAgainstAFewFaster(16, 1, 130, 15, Worse::kLower, 59, [&](double t) {
          if (t >= 600) return 70.0;
          if (t >= 300) return 100.0;
          if (t >= dip_from && t < dip_from + 60) return 100.0;
          return 130.0;
        });
    EXPECT_GT(at, 300);
    EXPECT_LT(at, 600);
    EXPECT_FALSE(others);
  }
}

// A machine higher in the job's first minutes (125: loading its shard), at the typical level at
// the window's start, onto which traffic moves within the window for good (130 from 180 s: a
// rebalanced shard, a parameter server's hot key), falling to the typical level at 315 s (a
// fault), is named: it held the typical level over less than the window's first half.
TEST(PeerModelTest, AMachineRaisedInTheWindowForGoodFallingIsNamed) {
  for (const Worse worse : {Worse::kLower, Worse::kHigher}) {
    SCOPED_TRACE(static_cast<int>(worse));
    const auto [at, others] =
        MachineZeroAgainstAFewFaster(16, 1, 100, 15, worse, 59, [&](double t) {
          if (t < 150) return 125.0;
          if (t < 180) return 100.0;
          if (t < 315) return 130.0;
          return 100.0;
        });
    EXPECT_GT(at, 315);
    EXPECT_FALSE(others);
  }
}

// A reviewer's cases (session 71) against 27e0c4e as first written, which did not bound the
// better side's run in the window. The job's init (every machine at 100, machine 0 too) ends at
// 145 s, a little before the
// warm-up's window (150-300 s); machine 0 then sits at its own level, 130 (a faster NIC, or more
// traffic by placement), and falls to the typical level at `onset`, in the window's second half (a
// fault: its link renegotiated down). Its window was at its own level over most of it; its last
// levels before the window were the init's, typical. Named at the parent (about 60-150 s after
// the warm-up's end); it was learned again at the typical level and never named.
TEST(PeerModelTest, AFasterMachineWhoseInitEndsJustBeforeItsWindowFallingInItIsNamed) {
  for (const Worse worse : {Worse::kLower, Worse::kHigher}) {
    for (const uint32_t machines : {8u, 16u}) {
      for (const double every : {5.0, 15.0}) {
        for (const double onset : {240.0, 255.0}) {
          SCOPED_TRACE(testing::Message() << "worse " << static_cast<int>(worse) << ", " << machines
                                          << " machines, every " << every << ", onset " << onset);
          const auto [at, others] =
              MachineZeroAgainstAFewFaster(machines, 1, 130, every, worse, 59, [&](double t) {
                if (t < 145) return 100.0;
                return t >= onset ? 100.0 : 130.0;
              });
          EXPECT_GT(at, onset);
          EXPECT_FALSE(others);
        }
      }
    }
  }
}

// A faster machine that held its own level from the job's start, and had an event of its own at the
// typical level just before its window (a data loader's pause, 105-150 s), is no machine whose
// better level first shows inside the window: it falls to the typical level at 240 s (a fault).
// It was never named (only the last three levels before the window are read).
TEST(PeerModelTest, AFasterMachineWithADipOfItsOwnBeforeItsWindowFallingInItIsNamed) {
  for (const double every : {5.0, 10.0}) {
    SCOPED_TRACE(every);
    const auto [at, others] =
        MachineZeroAgainstAFewFaster(16, 1, 130, every, Worse::kLower, 59, [&](double t) {
          if (t >= 240) return 100.0;
          if (t >= 105 && t < 150) return 100.0;
          return 130.0;
        });
    EXPECT_GT(at, 240);
    EXPECT_FALSE(others);
  }
}

// A job-wide phase before the window in which every machine receives alike (an evaluation at step
// 0: every machine at 60 over 105-150 s), then machine 0 at its own 130 against 100, falling to
// 100 at 240 s. The phase reads typical for machine 0 just before its window.
TEST(PeerModelTest, AFasterMachineAfterAJobWidePhaseBeforeItsWindowFallingInItIsNamed) {
  for (const double every : {5.0, 15.0}) {
    SCOPED_TRACE(every);
    Rng rng(59, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 2400, every, [&](uint32_t m, uint32_t, double t) {
      if (t >= 105 && t < 150) return Fresh(Noisy(rng, 60));
      return Fresh(Noisy(rng, m == 0 && (t < 105 || (t >= 150 && t < 240)) ? 130 : 100));
    });
    ExpectNamedOnlyForItsFault(job, 0, true, 240);
  }
}

// The same fault in two steps after the late init (to the typical level at 240 s, to 70 at 600 s):
// named after the first step (it was named only after the second).
TEST(PeerModelTest, AFasterMachineFallingInStepsAfterALateInitIsNamedAtTheFirstStep) {
  const auto [at, others] =
      MachineZeroAgainstAFewFaster(16, 1, 130, 15, Worse::kLower, 59, [&](double t) {
        if (t >= 600) return 70.0;
        if (t >= 240) return 100.0;
        return t < 145 ? 100.0 : 130.0;
      });
  EXPECT_GT(at, 240);
  EXPECT_LT(at, 600);
  EXPECT_FALSE(others);
}

// A reviewer's case against a rule tried in session 64 and reverted (where the raw values away
// from the level of the warm-up's window lie in several runs, the raw values' middle as the
// placement: docs/detect.md): a fault that begins late in the warm-up's window (machine 3's receive
// rate at 0.6 of its level from 240 s, a NIC degraded: the window's last 4 raw values) after a
// benign dip of its own earlier in it (a data loader's stall, 165-180 s, at 0.4 of its level). Six
// of the ten raw values lie below its level, the middle two at the fault's; the smoothing's onsets
// and tails put the smoothed median between.
TEST(PeerModelTest, ALateFaultAfterADipOfItsOwnInTheWindowIsNamed) {
  for (const double dip : {0.4, 0.6}) {
    SCOPED_TRACE(dip);
    Rng rng(56, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
      if (t < 130) return Fresh(Noisy(rng, 100));
      if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
      if (t >= 165 && t <= 180) return Fresh(Noisy(rng, dip * 122));
      return Fresh(Noisy(rng, t >= 240 ? 0.6 * 122 : 122));
    });
    ExpectNamedOnlyForItsFault(job, 3, true, 240);
  }
}

// A reviewer's case (session 64), as above: a fault from 195 s (0.6 of its level, the window's last
// 7 raw values but for one) with a network burst of its own in it (one sample, 240 s, at 1.3 of its
// level).
TEST(PeerModelTest, AFaultInTheWindowWithABurstOfItsOwnInItIsNamed) {
  Rng rng(56, 0);
  Job job(16, {PeerSignal("rx", Worse::kLower)});
  job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
    if (t < 130) return Fresh(Noisy(rng, 100));
    if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
    if (t == 240) return Fresh(Noisy(rng, 1.3 * 122));
    return Fresh(Noisy(rng, t >= 195 ? 0.6 * 122 : 122));
  });
  ExpectNamedOnlyForItsFault(job, 3, true, 195);
}

// A reviewer's case (session 64), as above: the burst case above at slow cadences, whose window
// holds 6 values: a fault from the window's second value on (0.6 of its level) with a burst of its
// own at its fifth.
TEST(PeerModelTest, AFaultInASlowCadencesWindowWithABurstOfItsOwnInItIsNamed) {
  for (const double cadence : {20.0, 30.0, 60.0}) {
    SCOPED_TRACE(cadence);
    const double warmup = std::max(300.0, 12 * cadence);              // FirstWarmup
    const double window = std::ceil(warmup / 2 / cadence) * cadence;  // its first sample
    const double from = window + cadence, burst = window + 4 * cadence;
    Rng rng(56, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 7200, cadence, [&](uint32_t m, uint32_t, double t) {
      if (t < window - 2 * cadence) return Fresh(Noisy(rng, 100));
      if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
      if (t == burst) return Fresh(Noisy(rng, 1.3 * 122));
      return Fresh(Noisy(rng, t >= from ? 0.6 * 122 : 122));
    });
    ExpectNamedOnlyForItsFault(job, 3, true, from);
  }
}

// A reviewer's case (session 64), as above: the dip case in a job whose machines sit at four levels
// (a pipeline's stages): machine 3 (stage level 100) dips to 0.4 of it over 165-180 s and falls to
// 0.6 of it from 240 s.
TEST(PeerModelTest, ALateFaultAfterADipOfItsOwnInAStagedJobIsNamed) {
  Rng rng(57, 0);
  Job job(16, {PeerSignal("rx", Worse::kLower)});
  job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
    const double level = 70 + 10 * (m % 4);
    if (m == 3 && t >= 165 && t <= 180) return Fresh(Noisy(rng, 0.4 * level));
    return Fresh(Noisy(rng, m == 3 && t >= 240 ? 0.6 * level : level));
  });
  ExpectNamedOnlyForItsFault(job, 3, true, 240);
}

// A reviewer's case (session 64), as above: a link that goes down (receive rate 0, raw level -inf)
// at 213 s, after a data loader's stall of machine 3's own over 158-197 s (0.31 of its level over
// 158-190 s, and half that over 168-190 s and half its level over 190-197 s: two overlapping
// stalls); each value a rate over the 15 s before it, partial at the events' edges (the
// reviewer's random exploration, seed 200). Named at 570 s; with the rule at 1,185 s.
TEST(PeerModelTest, ALinkDownInTheWindowAfterAStallOfItsOwnIsNamedSoon) {
  const auto factor = [](double x) {
    if (x >= 213) return 0.0;
    return (x >= 158 && x < 190 ? 0.31 : 1.0) * (x >= 168 && x < 197 ? 0.5 : 1.0);
  };
  Rng rng(200, 9);
  Job job(16, {PeerSignal("rx", Worse::kLower)});
  job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
    if (t < 130) return Fresh(Noisy(rng, 100));
    if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
    double sum = 0;
    for (int i = 0; i < 30; ++i) sum += factor(t - 15 + (i + 0.5) * 0.5);
    return Fresh(Noisy(rng, 122 * sum / 30));
  });
  ExpectNamedOnlyForItsFault(job, 3, true, 213);
  EXPECT_LT(job.TriggeredAt(3), 800);
}

// After jobgen's seed 67,101 (1,024 machines, fault-free, 15 s), rebuilt smaller: machine 3's CPU
// idle sits 12% above its peers' after the init, but for a cron job of its own that took 5 of the
// 10 raw values of the warm-up's window (150-300 s), one run between values at its level on
// both sides. Half and half, the window's median was the cron job's, and it was named 14 minutes
// after the warm-up at the level it held all along. The level held on both sides of the run is
// its placement; it is named only when it falls below its peers' level.
TEST(PeerModelTest, AnEventOfTheMachinesOwnOverHalfTheWarmUpsWindowBetweenItsLevelIsNoPlacement) {
  for (const double event : {36.0, 160.0}) {  // below its level, or above it
    for (const bool fault : {false, true}) {
      SCOPED_TRACE(testing::Message() << event << " " << fault);
      Rng rng(57, 0);
      Job job(16, {PeerSignal("idle", Worse::kEither, 120)});
      job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
        if (t < 90) return Fresh(Noisy(rng, 45));
        if (m != 3) return Fresh(Noisy(rng, 70 + 2 * (m % 4)));
        // The rates of the intervals the cron job began and ended in lie between.
        if (t == 195 || t == 255) return Fresh(Noisy(rng, (82 + event) / 2));
        if (t > 195 && t < 255) return Fresh(Noisy(rng, event));
        return Fresh(Noisy(rng, fault && t >= 3000 ? 60 : 82));
      });
      ExpectNamedOnlyForItsFault(job, 3, fault, 3000);
    }
  }
}

// After jobgen's seed 111,101 (1,024 machines, fault-free, 15 s), rebuilt smaller: as above, but
// the event begins just after the window's start (150 s), so that the window's first raw value is
// its partial rate and the run of 5 values away lies at the window's start, not between values at
// the machine's level. The level the machine held just before the window (its 3 values before
// it) is the other side: the event came and went. Until session 78 the run had to have values
// at the level on both sides inside the window, the smoothed median (the event's tail) was
// learned, 1.24 times the machine's level, and it was named at its own receive rate 10 minutes
// after the warm-up. The event lies on the better side (above on a signal worse lower, below on
// one worse higher), in a group whose machines are mostly placed away from the typical level
// (there the better side's own rule, BackFromTheBetterSide, does not act); the fault on the
// worse side.
TEST(PeerModelTest, AnEventOverHalfTheWindowFromItsStartIsNoPlacementWhereTheLevelWasHeldBefore) {
  const std::tuple<double, Worse, double> cases[] = {{2.0, Worse::kLower, 0.7},
                                                     {0.5, Worse::kHigher, 1.4}};
  for (const auto& [event, worse, faulty] : cases) {
    for (const bool fault : {false, true}) {
      SCOPED_TRACE(testing::Message() << event << " " << fault);
      Rng rng(59, 0);
      Job job(16, {PeerSignal("rx", worse)});
      job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
        if (t < 60) return Fresh(Noisy(rng, 100));
        if (m != 3) return Fresh(Noisy(rng, 80 + 8 * (m % 6)));
        // The rates of the intervals the event began and ended in lie between.
        if (t == 150) return Fresh(104 * std::pow(event, 0.3));
        if (t > 150 && t < 210) return Fresh(Noisy(rng, 104 * event));
        if (t == 210) return Fresh(104 * std::pow(event, 0.55));
        return Fresh(Noisy(rng, fault && t >= 3000 ? 104 * faulty : 104));
      });
      ExpectNamedOnlyForItsFault(job, 3, fault, 3000);
    }
  }
}

// After jobgen's seed 71,101 (1,024 machines, fault-free, 15 s), rebuilt smaller: as above, a
// network burst of machine 3's own over 5 of the 10 raw values of its window (150-300 s), between
// values at its level; but those scatter over 0.11 in log (on jobgen the job's receive rates still
// rose while the window ran; here its first at 0.95 of its level and its second to last at 1.06).
// In the tie the lower middle value, the 1.06, was the one the band was drawn around: the 0.95
// fell out of it, and with 4 of 10 values near, the burst's level was learned. The job's init
// (every machine alike until 120 s) made the machine look typical just before the window, so it
// was not learned again either, and it was named at its own level. The band is drawn again around
// the median of the values it kept, and that split, a tie, stands.
TEST(PeerModelTest, AnEventOverHalfTheWindowIsNoPlacementWhereTheLevelItselfScatters) {
  // The event above the machine's level on a signal worse lower, or below it (the upper middle
  // value is then the one the band was drawn around) on one worse higher; the fault on the worse
  // side.
  const std::tuple<double, Worse, double> cases[] = {{220, Worse::kLower, 95},
                                                     {60, Worse::kHigher, 160}};
  for (const auto& [event, worse, faulty] : cases) {
    for (const bool fault : {false, true}) {
      SCOPED_TRACE(testing::Message() << event << " " << fault);
      Rng rng(58, 0);
      Job job(16, {PeerSignal("rx", worse)});
      job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
        if (t < 120) return Fresh(Noisy(rng, 100));
        if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
        if (t > 180 && t < 260) return Fresh(Noisy(rng, event));
        if (t == 150) return Fresh(0.95 * 125);
        if (t == 270) return Fresh(1.06 * 125);
        return Fresh(Noisy(rng, fault && t >= 3000 ? faulty : 125));
      });
      ExpectNamedOnlyForItsFault(job, 3, fault, 3000);
    }
  }
}

// After jobgen's seed 133,101 (1,024 machines, fault-free, 15 s; gpu-node-0439 and -0897), rebuilt
// smaller: machine 3's network burst over 4 of the 10 raw values of its window (150-285 s), the
// rate of the interval it ended in between the burst and the machine's level, and its own values
// scattered (on jobgen the job's receive rates still rose as the window ran). Sorted, the window's
// upper middle value is that partial rate: the band about it held it, the highest two of the
// machine's own values and none of the burst's, no one run; the lower middle value's band holds the
// machine's 5 values and the partial rate, 6 of 10 with the burst's 4 one run, but the lower
// middle counted only in a tie. The smoothed values' median, between the burst and the level, was
// learned (1.29 times the centre for a machine at 1.14, where others were placed too), and the
// machine was named 11% under it from 470 s. The lower middle value now stands too where its band
// holds most of the window and the rest is one run (not at the window's start): the same answer as
// for the mirror case (the event below the level on a signal worse higher), where the partial rate
// is the lower middle value and the upper one's band held the majority already. The fault on the
// worse side.
TEST(PeerModelTest, ABurstWhosePartialRateIsTheWindowsUpperMiddleIsNoPlacement) {
  // The window's raw levels (log of the value over the centre), oldest first.
  const double window[] = {0.10, 0.11, 0.42, 0.46, 0.48, 0.52, 0.24, 0.16, 0.12, 0.18};
  for (const double side : {1.0, -1.0}) {
    for (const bool fault : {false, true}) {
      SCOPED_TRACE(testing::Message() << side << " " << fault);
      Rng rng(60, 0);
      Job job(16, {PeerSignal("rx", side > 0 ? Worse::kLower : Worse::kHigher)});
      job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
        if (t < 120) return Fresh(Noisy(rng, 100));
        // The typical machines, and three at about the level the smoothed median lay at (in a job
        // of a thousand, some are placed there): the placement learned there is a population's.
        if (m != 3) return Fresh(Noisy(rng, m % 5 == 4 ? 100 * std::exp(side * 0.3) : 100));
        if (t >= 150 && t < 300) {
          return Fresh(100 * std::exp(side * window[static_cast<size_t>(t - 150) / 15]));
        }
        const double level = 100 * std::exp(side * 0.14);
        return Fresh(Noisy(rng, fault && t >= 3000 ? level * std::pow(0.7, side) : level));
      });
      ExpectNamedOnlyForItsFault(job, 3, fault, 3000);
    }
  }
}

// A reviewer's case against 1ca843c (session 92), which let the lower middle value's majority
// stand outside a tie: a fault that began in the window (machine 3's receive rate to 0.74 of its
// level from about 210 s), its first, partial rate and its 5 values about the lower middle value,
// 6 of the window's 10, the machine's own 4 one run at the window's start. Where the job's level
// stood still LevelBeforeAStep answers first (ALevelOtherMachinesShareIsNoEventOfTheMachinesOwn);
// here the job's level stepped up 8% just before the window (at 125 s), and the fault's level,
// which three other machines share (a class of hardware: the machine is not odd there), was
// learned and never named. A run away at the window's start counts only where the level kept was
// held just before the window.
TEST(PeerModelTest, AFaultBegunInTheWindowJustAfterTheJobSteppedIsNamed) {
  const double window[] = {0.00, 0.01, -0.01, 0.00, -0.20, -0.30, -0.29, -0.31, -0.30, -0.28};
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(61, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
      const double centre = t < 125 ? 100 : 108;
      if (m % 5 == 4) return Fresh(Noisy(rng, centre * std::exp(-0.30)));  // a class there
      if (m != 3) return Fresh(Noisy(rng, centre * (0.94 + 0.01 * (m % 13))));
      if (!fault || t < 150) return Fresh(Noisy(rng, centre));
      if (t < 300) return Fresh(centre * std::exp(window[static_cast<size_t>(t - 150) / 15]));
      return Fresh(Noisy(rng, centre * std::exp(-0.30)));
    });
    ExpectNamedOnlyForItsFault(job, 3, fault, 210);
  }
}

// A reviewer's case (session 66) against a4fbc66, which counted a window's value past the band on
// the side away from an event as near, in a tie (the level's own scatter, as in jobgen's seed
// 87,101). A job of two levels: machines 10-15 a stage at 74, the others at 100. Machine 3 falls
// to 74 at 90 s, before the warm-up's window (150-300 s at 15 s), for good; a network burst of its
// own (200) over 180-255 s, 5 of the window's 10 raw values between the fault's; one rate of the
// fault's (at 270 s) 20% deeper. Here no tie is read (4 values near 74, the deeper one away: two
// runs) and the smoothed median is learned: machine 3 is named. Counted as near, the deeper value
// made a tie whose every condition held (the level before the window, the fault's, is a stage's),
// and 74 was learned as machine 3's placement: never named (in the reviewer's sweep of such
// windows, 255 of 540 faults more were missed, against 9 fewer false names in 1,080 healthy runs).
TEST(PeerModelTest, AFaultsDeeperValueIsNoScatterOfItsLevelInAStagedJob) {
  Rng rng(13, 0);
  Job job(16, {PeerSignal("rx", Worse::kLower)});
  job.Run(0, 2400, 15, [&](uint32_t m, uint32_t, double t) {
    if (m >= 10) return Fresh(Noisy(rng, 74));
    if (m != 3) return Fresh(Noisy(rng, 100));
    if (t >= 180 && t < 255) return Fresh(Noisy(rng, 200));
    if (t == 270) return Fresh(74 * 0.8);
    return Fresh(Noisy(rng, t >= 90 ? 74 : 100));
  });
  ExpectNamedOnlyForItsFault(job, 3, true, 90);
  EXPECT_LE(job.TriggeredAt(3), 900);
}

// A reviewer's case against the first version of the rule above, which drew the band again
// around the kept values' median wherever the first split was no tie: machine 3 at 125 (peers
// at 90-125) is low (0 or 60) from 60 s until 195 s, its first four window values, then back,
// with a partial rate at 210 s (0.89 of its level) and 0.95 at 225 s. The first split keeps six
// values near its level, the low ones one run at the window's start: that level is learned. The
// second band dropped the partial rate and made a tie whose run lies at the window's start, which
// no tie learns from, and the smoothed median, which the event's tail had pulled down, was learned:
// the machine was named at its own level, on a signal worse higher or either way.
TEST(PeerModelTest, AnEventOverTheWindowsStartEndingWithAPartialRateIsNoPlacement) {
  for (const Worse worse : {Worse::kHigher, Worse::kEither}) {
    for (const double low : {0.0, 60.0}) {
      for (const bool fault : {false, true}) {
        SCOPED_TRACE(testing::Message() << static_cast<int>(worse) << " " << low << " " << fault);
        Rng rng(58, 0);
        Job job(16, {PeerSignal("rx", worse)});
        job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
          if (t < 120) return Fresh(Noisy(rng, 100));
          if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
          if (t >= 60 && t < 210) return Fresh(Noisy(rng, low));
          if (t == 210) return Fresh(0.89 * 125);
          if (t == 225) return Fresh(0.95 * 125);
          return Fresh(Noisy(rng, fault && t >= 3000 ? 160 : 125));
        });
        ExpectNamedOnlyForItsFault(job, 3, fault, 3000);
      }
    }
  }
}

// A reviewer's two cases against the rule above, without the level held just before the window:
// the values at the window's two ends need not be the machine's level. Machine 3, in a job whose
// machines sit at four levels (a pipeline's stages), drops to 0.6 of its level at the window's
// start (150 s), is back over 195-255 s and down for good from 270 s; or, among peers at 90-125
// and at 122 of its own, dips to 60 over 140-185 and 265-310 s (two events of its own, at the
// window's two ends) and falls to 0.75 of its level at 1,200 s. Half the window's raw values
// lie at each level, the run of its own level between the others; both were placed at the
// others' level and never named. Each is named for its fault.
TEST(PeerModelTest, ValuesAtBothEndsOfTheWindowAreNoLevelThatWasNotHeldBeforeIt) {
  for (const bool flapping : {true, false}) {
    SCOPED_TRACE(flapping);
    Rng rng(57, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
      if (flapping) {
        const double level = 70 + 10 * (m % 4);
        const bool down = m == 3 && t >= 150 && !(t >= 195 && t <= 255);
        return Fresh(Noisy(rng, down ? 0.6 * level : level));
      }
      if (t < 130) return Fresh(Noisy(rng, 100));
      if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
      if ((t >= 140 && t < 185) || (t >= 265 && t < 310)) return Fresh(Noisy(rng, 60));
      return Fresh(Noisy(rng, t >= 1200 ? 0.75 * 122 : 122));
    });
    ExpectNamedOnlyForItsFault(job, 3, true, flapping ? 150 : 1200);
  }
}

// A second reviewer's cases. In a job whose machines sit at four levels (a pipeline's stages),
// machine 3's receive rate is at 0.6 of its level from 60 s, back at it over 195-255 s (5 of the
// window's 10 raw values, between the others) and down again for good: the level before the
// window and at its two ends is the fault's, and the run's is its stage's, which other machines
// share. Without that check it was placed at the fault's level and never named. And a fault from
// 210 s whose first rate is partial (between the two levels): around the lower middle value, 6
// of the 10 values lie in the fault's run, and with the lower middle tried outside a tie it was
// placed at the fault's level and never named. A third reviewer's: the first case in a job of 8
// machines, stages of 2, where the run's level (the stage's) has one other machine placed at it,
// no population: the tie counts only where the level at the window's ends is one that 3 others or
// more are placed at, and the fault's is none. Each is named.
TEST(PeerModelTest, ALevelOtherMachinesShareIsNoEventOfTheMachinesOwn) {
  for (const uint32_t machines : {16u, 8u, 0u}) {  // 0: the partial rate, 16 machines
    SCOPED_TRACE(machines);
    const bool flapping = machines > 0;
    Rng rng(flapping ? 57 : 1, 0);
    Job job(flapping ? machines : 16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
      if (flapping) {
        const double level = 70 + 10 * (m % 4);
        const bool down = m == 3 && t >= 60 && !(t >= 195 && t <= 255);
        return Fresh(Noisy(rng, down ? 0.6 * level : level));
      }
      const double level = 60 + 20 * (m % 4);
      if (m != 3) return Fresh(Noisy(rng, level));
      if (t == 210) return Fresh(Noisy(rng, 0.9 * level));
      return Fresh(Noisy(rng, t > 210 ? 0.8 * level : level));
    });
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
  }
}

// Where events of a machine's own take most of its window at levels of their own, the smoothed
// values' median can lie at a level the machine held only on the way into or out of them; it was
// learned, and the machine was named at its own level. Jobgen's fault-free seed 117,200 (5 s): a
// host at +13% of the centre, a noisy neighbour over the window's start (-36%) and a cron job of
// 60 s in its middle (-63%), its own level in 8 of the window's 16 values, in two runs: placed
// 10% under its level, named 35 minutes on. The level it held between its events, the window's
// densest, is learned: it is not named, and a fault later is. (Seed 119,101's shape, a network
// burst over the window's first half with partial rates at its ends and a failed scrape in its
// second, its own level held just before the window in 4 of 9 values, was named 40 minutes on
// in a job of 1,024 machines; here peers as they are already keep it from being named.)
TEST(PeerModelTest, TheLevelAMachineHeldBetweenEventsOfItsOwnInItsWindowIsItsPlacement) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(81, 0);
    Job job(16, {PeerSignal("rx", Worse::kEither)}, PeerOptions{});
    job.Run(0, 3600, 5, [&](uint32_t m, uint32_t, double t) {
      if (t < 60) return Fresh(Noisy(rng, 100));
      if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
      double share = fault && t >= 2400 ? 0.75 : 1;
      if (t >= 130 && t < 165) share = 0.7;
      if (t >= 200 && t < 260) share = 0.53;
      return Fresh(Noisy(rng, share * 122));
    });
    ExpectNamedOnlyForItsFault(job, 3, fault, 2400);
  }
}

// A host alone at its CPU idle level (0.8 of the typical, peers at 0.87-1.12) whose events of its
// own took 5 of its window's 10 values at 15 s: a job idling it fully (1.0, 1.43 of the centre)
// over the window's first three, another (0.8) over two near its end, its own level before the
// window, in three values between the events and two after them. The smoothed values' median lay
// near the typical level, where it was placed and named at its own level 15 minutes on (a
// black-box reviewer's warm-up sweep, eval/detect_warmup.py's `main` 79, whose window held 8
// values, no frame having judged the host at two of its scrapes: the same shape). The level held
// between its events is its placement: two of the window's last three values at it suffice, the
// first the second event's last. It is not named, and a fault later is.
TEST(PeerModelTest, TheLevelAMachineHeldBetweenEventsIsItsPlacementWithAnEventsTailNearTheEnd) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(85, 0);
    Job job(20, {PeerSignal("cpu_idle", Worse::kEither, 120)}, PeerOptions{});
    job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
      if (m != 3) return Fresh(Noisy(rng, 70 * (0.87 + 0.014 * (m % 19))));
      double share = fault && t >= 2400 ? 0.75 : 1;
      if (t >= 140 && t < 190) share = 2.112;
      if (t >= 235 && t < 265) share = 1.436;
      return Fresh(std::min(100.0, Noisy(rng, share * 56)));  // an idle share is at most 1
    });
    ExpectNamedOnlyForItsFault(job, 3, fault, 2400);
  }
}

// A machine alone at its level (1.25 of the typical, peers at 0.9-1.12) whose network bursts of its
// own (1.42 of its rate) took 6 of its window's 10 values at 15 s, over the window's start and its
// end: placed at the bursts' level, it never sat there after the warm-up, and was back at the
// level it held before the window. Relearn took that back only for the typical level (a fault that
// went and came back leaves the machine at its peers' level, which they are placed at); a
// placement at a level no 3 others share is the machine's own events' (a black-box reviewer's
// sweep, session 81: 5 of 37 such false alerts fewer, no fault missed more). It is not named, and
// a fault later is.
TEST(PeerModelTest, APlacementNoOthersShareIsLearnedAgainWhereTheMachineIsBackAtItsLevel) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(82, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)}, PeerOptions{});
    job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
      if (m != 3) return Fresh(Noisy(rng, 100 * (0.9 + 0.015 * (m % 15))));
      double share = fault && t >= 2400 ? 0.75 : 1;
      if ((t >= 113 && t < 177) || (t >= 230 && t < 298)) share = 1.42;
      return Fresh(Noisy(rng, share * 125));
    });
    ExpectNamedOnlyForItsFault(job, 3, fault, 2400);
  }
}

// A slower NIC alone at its level (0.8 of the typical machine's receive rate, peers at 0.92-1.2)
// whose network bursts of its own (2.1 times its rate) took most of its window at 15 s, placed at
// 1.7 times its peers', a level on the better side that no 3 others share. Back after the window
// at the level it held before it, worse than the typical machine's, where no other machine sits:
// Relearn refused that level for the flapping NIC's sake, whose window held its healthy level,
// shared (a black-box reviewer's sweep, eval/detect_warmup.py's `stress` kind: 14 of 18 such
// fault-free jobs named). The bursts over the window's middle and end (its first sample at the
// machine's level), or over its start (held again only from the window's middle on: the slower
// level is the machine's own, no init's, so the first sample need not hold it). Not named; a
// fault later is.
TEST(PeerModelTest, APlacementRaisedAloneByBurstsIsLearnedAgainAtAWorseLevelOfTheMachinesOwn) {
  for (const bool start : {false, true}) {
    for (const bool fault : {false, true}) {
      SCOPED_TRACE(testing::Message() << "over the start " << start << ", fault " << fault);
      Rng rng(83, 0);
      Job job(16, {PeerSignal("rx", Worse::kLower)}, PeerOptions{});
      job.Run(0, 3600, 15, [&](uint32_t m, uint32_t, double t) {
        if (m != 3) return Fresh(Noisy(rng, 100 * (0.92 + 0.02 * (m % 15))));
        double share = fault && t >= 2400 ? 0.7 : 1;
        if (start ? t >= 113 && t < 248 : t >= 187 && t < 287) share = 2.1;
        return Fresh(Noisy(rng, share * 80));
      });
      ExpectNamedOnlyForItsFault(job, 3, fault, 2400);
    }
  }
}

// A fault that begins in the first half of the warm-up's window (a NIC renegotiated down at 190 s)
// holds most of the window's values, whose median is then its level: machine 3 left the level it
// held before the window for the worse side for good while the job's level held still, and the
// level it left is its placement: it is named after the warm-up (its peers scatter by placement,
// so that its new level is no outlier among them and it would be learned there). Not where the
// whole job moved as it stepped (its init ending at 190 s: every machine's receive rate falls from
// 300, and machine 3's further, a slower NIC's); four machines that step together are a shared
// deviation, as in the warm-up's last minutes. A step to the better side (a shard rebalanced to
// machine 3) is its level: a fault from it, back to the old level at 1,000 s, is named.
TEST(PeerModelTest, AStepToTheWorseSideInTheWindowWhileTheJobHoldsStillIsNamed) {
  enum class Shape { kFault, kWithTheJob, kBetter, kFour };
  for (const double cadence : {5.0, 15.0}) {
    for (const Shape shape : {Shape::kFault, Shape::kWithTheJob, Shape::kBetter, Shape::kFour}) {
      SCOPED_TRACE(testing::Message()
                   << "cadence " << cadence << ", shape " << static_cast<int>(shape));
      Rng rng(84, 1);
      Job job(16, {PeerSignal("rx", Worse::kLower)}, PeerOptions{});
      job.Run(0, 1800, cadence, [&](uint32_t m, uint32_t, double t) {
        const bool after = t >= 190;
        double level = m == 3 ? 100 : 100 * (0.86 + 0.02 * (m % 15));
        if (shape == Shape::kWithTheJob && !after) level = 300;
        if (after && (m == 3 || (shape == Shape::kFour && m >= 10 && m < 13))) {
          level = shape == Shape::kBetter       ? (t < 1000 ? 140 : 100)
                  : shape == Shape::kWithTheJob ? 80
                                                : 72;
        }
        return Fresh(Noisy(rng, level));
      });
      const bool named = shape == Shape::kFault || shape == Shape::kBetter;
      EXPECT_EQ(job.Named(), named ? std::vector<uint32_t>{3} : std::vector<uint32_t>{});
      if (named) {
        EXPECT_GT(job.TriggeredAt(3), shape == Shape::kBetter ? 1000 : 300);
      }
      EXPECT_EQ(job.shared().empty(), shape != Shape::kFour);
    }
  }
}

// The same on a signal worse either way (CPU idle): a host busier for good from 190 s (a runaway
// process beside the trainer), or idler (its data loader's workers dead), while its job's level
// holds still, is named after the warm-up at either step; the same fall as the job's init ends
// (every host busy at first) is not. Its peers scatter by placement (data loaders of several
// shares), so that the new level is no outlier among them (a black-box reviewer's warm-up sweep,
// eval/detect_warmup.py: 128 of 194 faults missed were on CPU idle).
TEST(PeerModelTest, AStepEitherWayOnCpuIdleInTheWindowWhileTheJobHoldsStillIsNamed) {
  enum class Shape { kBusier, kIdler, kWithTheJob };
  for (const double cadence : {5.0, 15.0}) {
    for (const Shape shape : {Shape::kBusier, Shape::kIdler, Shape::kWithTheJob}) {
      SCOPED_TRACE(testing::Message()
                   << "cadence " << cadence << ", shape " << static_cast<int>(shape));
      Rng rng(85, 1);
      Job job(16, {PeerSignal("cpu_idle", Worse::kEither, 120)}, PeerOptions{});
      job.Run(0, 1800, cadence, [&](uint32_t m, uint32_t, double t) {
        const bool after = t >= 190;
        double level = m == 3 ? 70 : 70 * (0.86 + 0.02 * (m % 15));
        if (shape == Shape::kWithTheJob && !after) level = 20;
        if (after && m == 3) level = shape == Shape::kIdler ? 98 : 50;
        return Fresh(Noisy(rng, level));
      });
      const bool named = shape != Shape::kWithTheJob;
      EXPECT_EQ(job.Named(), named ? std::vector<uint32_t>{3} : std::vector<uint32_t>{});
      if (named) {
        EXPECT_GT(job.TriggeredAt(3), 300);
      }
    }
  }
}

// The level held before the step need not be held just before the window: an event of machine
// 3's own over the window's start (its receive rate at 0.63 from 113 s to 154 s), back at its
// level after it, and a fault at the event's level from 205 s. The raw values just before the
// window are the event's; the level before the run that ends the window is the one held before
// the window, and it is the placement (the reviewer's warm-up sweep, `main` 113: of the 146 faults
// the step rule still missed, 52 are named with this). Without the fault, the event alone is no
// step: not named.
TEST(PeerModelTest, AStepAfterAnEventOfItsOwnOverTheWindowsStartIsNamed) {
  for (const double cadence : {5.0, 15.0}) {
    for (const bool fault : {false, true}) {
      SCOPED_TRACE(testing::Message() << "cadence " << cadence << ", fault " << fault);
      Rng rng(85, 2);
      Job job(16, {PeerSignal("rx", Worse::kLower)}, PeerOptions{});
      job.Run(0, 1800, cadence, [&](uint32_t m, uint32_t, double t) {
        if (m != 3) return Fresh(Noisy(rng, 100 * (0.86 + 0.02 * (m % 15))));
        const bool low = (t >= 113 && t < 154) || (fault && t >= 205);
        return Fresh(Noisy(rng, low ? 63 : 100));
      });
      ExpectNamedOnlyForItsFault(job, 3, fault, 300);
    }
  }
}

// A fault that continues an event of machine 3's own: its receive rate at 0.63 from 119 s, the
// event ending at 176 s where a fault at the same level begins, so that the machine never shows
// its own level again; or with a burst of its own at 1.85 between them (153-193 s). The window
// (150-300 s) holds no value at the level the machine held before it, and the level it left is
// still its placement: it is named after the warm-up (the reviewer's warm-up sweep, `main` 97 and
// 23: 70 of the 96 faults the step rule still missed in session 85 were such). Without the
// fault, back at its level from 176 or 193 s, nobody.
TEST(PeerModelTest, AFaultThatContinuesAnEventOfItsOwnIsNamed) {
  for (const double cadence : {5.0, 15.0}) {
    for (const bool burst : {false, true}) {
      for (const bool fault : {false, true}) {
        SCOPED_TRACE(testing::Message()
                     << "cadence " << cadence << ", burst " << burst << ", fault " << fault);
        Rng rng(88, 1);
        Job job(16, {PeerSignal("rx", Worse::kLower)}, PeerOptions{});
        job.Run(0, 1800, cadence, [&](uint32_t m, uint32_t, double t) {
          if (m != 3) return Fresh(Noisy(rng, 100 * (0.86 + 0.02 * (m % 15))));
          const double back = burst ? 193 : 176;
          double level = 100;
          if (t >= 119 && t < back) level = 63;
          if (burst && t >= 153 && t < back) level = 185;
          if (fault && t >= back) level = 63;
          return Fresh(Noisy(rng, level));
        });
        ExpectNamedOnlyForItsFault(job, 3, fault, 300);
      }
    }
  }
}

// A machine alone at 1.25 of its peers' level (no other machine within 10% of it) that falls for
// good at 154 s, just inside the window (150-300 s), to 0.72 of its level: the level most of its
// peers are placed at. It held its own level over all the time before the window, and the step is
// its own (the job's level holds still): it is named after the warm-up (on a receive rate at
// 360 s; on CPU idle, worse either way, only once its own past has followed it halfway toward
// its peers, about 700 s: a machine that comes back toward the typical level from an odd one is
// no new fault there). Until session 89 a step to a level others are placed at was never taken
// (the reviewer's warm-up sweep, `main` 252 and 57). Without the fault, nobody.
TEST(PeerModelTest, AMachineAloneAtItsLevelFallingToItsPeersLevelInTheWindowIsNamed) {
  ExpectMachine3NamedOnlyForItsFault(
      "cpu", {Worse::kEither, Worse::kLower}, 89, 1, 0.015,
      [](double t, bool fault) { return fault && t >= 154 ? 90 : 125; });
}

// A fault in the window with an event of the machine's own on top of it near the window's end:
// machine 3's receive rate down to 0.6 of its level from 170 s, and to 0.3 from 250 to 285 s
// (a burst of its own traffic lost, or another job's), back at 0.6 for the window's last two
// levels (at 5 s and at 15 s), under the min_samples a run at the level it ends at needs. Every
// value since the last at the level it held lies beyond that level the worse way: it left it for
// good, and it is named after the warm-up. Until session 90 only the run at the level the window
// ends at counted (the reviewer's warm-up sweep, `main` 42, 183 and 330: 9 of its 34 misses).
// Without the fault, the event alone: nobody.
TEST(PeerModelTest, AFaultWithAnEventOfItsOwnOnTopAtTheWindowsEndIsNamed) {
  ExpectMachine3NamedOnlyForItsFault("rx", {Worse::kLower}, 90, 1, 0.014, [](double t, bool fault) {
    const double level = fault && t >= 170 ? 60 : 100;
    return t >= 250 && t < 285 ? level / 2 : level;
  });
}

// The same fault after an event of the machine's own over the window's start: machine 3 alone at
// 1.25 of its peers' level, at 0.75 of that (its peers' level) from 130 to 168 s, back at 1.25
// for the window's first minute, and at its peers' level for good from 223 s. The level it left is
// the one it held first since the job's level stood and again just before it left it: an event of
// its own came and went before, and the step is named after the warm-up. Until session 90 every
// level before the window had to be that one (the reviewer's warm-up sweep, eq 7026, 7098, 7189
// and main 250). Without the fault, the event alone: nobody.
TEST(PeerModelTest, AMachineAloneAtItsLevelFallingToItsPeersAfterAnEventOfItsOwnIsNamed) {
  ExpectMachine3NamedOnlyForItsFault(
      "rx", {Worse::kEither, Worse::kLower}, 90, 2, 0.015, [](double t, bool fault) {
        const bool low = (t >= 130 && t < 168) || (fault && t >= 223);
        return low ? 94 : 125;
      });
}

// The other side of the case above: a machine's own event before the window, at a level its
// peers do not share, that ends just after the window begins, where the machine is back among its
// peers (jobgen's seed 122,101, fault-free: a cron job busy 98-146 s on one host's CPUs, its CPU
// idle at 0.6 of its level, after the job's init at 0.55 of the training level until 75 s). The
// centre has stood still only since the init ended, and the cron job took most of the time since:
// the level the machine held before the window was its event's, not a level of its own, and
// nobody is named.
TEST(PeerModelTest, AnEventOfItsOwnEndingAsTheWindowBeginsIsNoStepToItsPeersLevel) {
  for (const double cadence : {5.0, 15.0}) {
    SCOPED_TRACE(cadence);
    Rng rng(89, 2);
    Job job(16, {PeerSignal("cpu")}, PeerOptions{});
    job.Run(0, 1800, cadence, [&](uint32_t m, uint32_t, double t) {
      const double level = 80 * (0.95 + 0.01 * (m % 10));
      if (t < 75) return Fresh(Noisy(rng, 0.55 * level));
      return Fresh(Noisy(rng, m == 3 && t >= 98 && t < 146 ? 0.6 * level : level));
    });
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
  }
}

// A machine alone at its level (1.25 of the typical, peers at 0.9-1.11) whose two events of its
// own take most of its window (150-300 s) and the seconds before it: the level it held from the
// job's first minutes (since its level stood still), left twice for levels no other machine
// holds and back at by the window's end, is its own, however few of the window's values lie at
// it. Three shapes from the reviewer's warm-up sweep (eval/detect_warmup.py, fault-free `stress`
// jobs, each named at its own level after the warm-up until session 91): events at two levels
// over as many of the window's values as its own level (`stress` 9047, a tie); one value of its
// own between them and one at the window's end (9091); two overlapping events as one, its own
// level over the window's last 40 s (9130). Nobody is named without the fault, and machine 3 with
// it (down to 0.6 of its level from 1,200 s).
TEST(PeerModelTest, TheLevelAMachineLeftTwiceAndCameBackToIsItsPlacement) {
  const auto shape = [](std::initializer_list<std::array<double, 3>> events) {
    return [events](double t, bool fault) {
      double level = fault && t >= 1200 ? 75 : 125;
      for (const auto& [from, to, share] : events) {
        if (t >= from && t < to) level *= share;
      }
      return level;
    };
  };
  ExpectMachine3NamedOnlyForItsFault("cpu", {Worse::kEither, Worse::kLower}, 91, 1, 0.015,
                                     shape({{105, 158, 1.4}, {180, 249, 0.437}}));
  ExpectMachine3NamedOnlyForItsFault("rx", {Worse::kEither, Worse::kLower}, 91, 2, 0.015,
                                     shape({{121, 186, 1.311}, {214, 283, 0.6}}));
  ExpectMachine3NamedOnlyForItsFault("cpu", {Worse::kEither, Worse::kLower}, 91, 3, 0.015,
                                     shape({{155, 258, 0.6}}));
}

// The job's level need not have held still since the job began: every machine's receive rate
// converging from 6% above its level (a time constant of 75 s, the centre a twentieth of the level
// from where it began at 138 s, just before the window), and machine 3 stepping to the worse side
// for good at 190 s. The centre has stood within a twentieth of where it ends the window since
// its first minute: the level machine 3 held before the window is its placement, and it is named
// after the warm-up (the reviewer's warm-up sweep, `main` 390). Without the step, nobody.
TEST(PeerModelTest, AStepInTheWindowOfAJobWhoseLevelConvergesSlowlyIsNamed) {
  for (const double cadence : {5.0, 15.0}) {
    for (const bool fault : {false, true}) {
      SCOPED_TRACE(testing::Message() << "cadence " << cadence << ", fault " << fault);
      Rng rng(86, 1);
      Job job(16, {PeerSignal("rx", Worse::kLower)}, PeerOptions{});
      job.Run(0, 1800, cadence, [&](uint32_t m, uint32_t, double t) {
        const double job_level = 100 * (1 + 0.06 * std::exp(-t / 75));
        double level = m == 3 ? 1 : 0.86 + 0.02 * (m % 15);
        if (fault && m == 3 && t >= 190) level = 0.72;
        return Fresh(Noisy(rng, job_level * level));
      });
      ExpectNamedOnlyForItsFault(job, 3, fault, 300);
    }
  }
}

// A fault that begins in the warm-up's last minutes is no event of the warm-up: machine 3 (alone),
// or machines 3-6 (together: a shared cause), dropping to 60 from 270 s never sit at the
// placements learned at 100, but they are not back at a level they held before the window
// either. Machine 3 is named; the four are a shared deviation.
TEST(PeerModelTest, AFaultThatBeginsInTheWarmUpsLastMinutesIsNotLearnedAgain) {
  for (const uint32_t faulty : {1u, 4u}) {
    SCOPED_TRACE(faulty);
    Rng rng(54, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 900, 5, [&](uint32_t m, uint32_t, double t) {
      return Fresh(Noisy(rng, m >= 3 && m < 3 + faulty && t >= 270 ? 60 : 100));
    });
    if (faulty == 1) {
      EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
    } else {
      EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
      ASSERT_EQ(job.shared().size(), 3u);  // one for each statistic of the signal
      for (const auto& [time, sh] : job.shared()) EXPECT_EQ(sh.members.size(), 4u);
    }
  }
}

// A fault that comes back to a level the machine held before its window is no event of the
// window either: machine 3's NIC flaps down (receive 60) over 60-150 s, up over 150 s to T, and
// down from T for good; or machine 3 starts slow (70 until 150 s), runs at 100, and falls back to
// 70 from T. Its window began at 100, not at the level before it: it is named.
TEST(PeerModelTest, AFaultBackAtALevelHeldBeforeTheWindowIsNotLearnedAgain) {
  for (const double low : {60.0, 70.0}) {
    for (const double from : {255.0, 270.0, 285.0}) {
      SCOPED_TRACE(testing::Message() << low << " from " << from);
      Rng rng(56, 0);
      Job job(16, {PeerSignal("rx", Worse::kLower)});
      job.Run(0, 1200, 5, [&](uint32_t m, uint32_t, double t) {
        const bool down = t >= from || (t < 150 && (low == 70 || t >= 60));
        return Fresh(Noisy(rng, m == 3 && down ? low : 100));
      });
      EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
    }
  }
}

// The same when the first episode lasts past the window's first sample (about 150 s): machine 7
// is down from 60 s (or from the start) to 155-170 s, then from 270 s for good. Its level then is
// the one it held before the window and at its start, but worse than the typical machine's, on a
// signal whose lower side is worse: a fault, not an event of the window. Named, in a group whose
// machines share one level and in one that differs by placement (machines 0-3 at 80).
TEST(PeerModelTest, AFaultBackAtALevelHeldAcrossTheWindowsStartIsNamed) {
  for (const bool placed : {false, true}) {
    for (const double low : {60.0, 70.0}) {
      for (const double until : {155.0, 160.0, 170.0}) {
        SCOPED_TRACE(testing::Message() << placed << " " << low << " until " << until);
        Rng rng(56, 0);
        Job job(16, {PeerSignal("rx", Worse::kLower)});
        job.Run(0, 1200, 5, [&](uint32_t m, uint32_t, double t) {
          const bool down = t >= 270 || (t < until && (low == 70 || t >= 60));
          return Fresh(Noisy(rng, m == 7 && down ? low : placed && m < 4 ? 80 : 100));
        });
        EXPECT_EQ(job.Named(), std::vector<uint32_t>{7});
      }
    }
  }
}

// The same event on a machine of a lower level that others share (machines 0-3 with slower NICs
// at 80 among peers at 100): machine 2's receive rate read 104 over 170-275 s, a network burst.
// Back at 80 it is learned again there, worse than the typical machine but where its neighbours
// sit, and not named.
TEST(PeerModelTest, AnEventOnAMachineOfASharedLowerLevelIsLearnedAgain) {
  Rng rng(52, 0);
  Job job(16, {PeerSignal("rx", Worse::kLower)});
  job.Run(0, 3000, 5, [&](uint32_t m, uint32_t, double t) {
    if (m == 2 && t >= 170 && t < 275) return Fresh(Noisy(rng, 104));
    return Fresh(Noisy(rng, m < 4 ? 80 : 100));
  });
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{});
}

// A machine alone at its level from its first sample (receive rate 60 among peers at 100, or CPU
// idle 125 among hosts at 100) is compared with its peers as they are. Events that lift it to
// the peers' level over most of its window (160-215 s and 225-290 s) do not make its own level
// its placement when the placement is learned again: it is named, as without them.
TEST(PeerModelTest, AMachineOddFromItsStartIsNamedDespiteAnEventInItsWindow) {
  for (const bool idle : {false, true}) {
    SCOPED_TRACE(idle);
    Rng rng(52, 0);
    Job job(16, {idle ? PeerSignal("cpu_idle") : PeerSignal("rx", Worse::kLower)});
    job.Run(0, 3000, 5, [&](uint32_t m, uint32_t, double t) {
      const bool event = (t >= 160 && t < 215) || (t >= 225 && t < 290);
      return Fresh(Noisy(rng, m == 5 && !event ? (idle ? 125 : 60) : 100));
    });
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{5});
  }
}

// Jobgen's seed 50,101 (128 machines, fault-free, 15 s): two network bursts of a machine's own
// filled more than half of the warm-up's window, and the second outlasted the warm-up's end by
// 24 s; a placement that the level sat at for one sample counted as confirmed, the relearning
// never ran, and the machine was named three minutes later back at its own rate. Machine 3's
// receive rate reads 130 over 200-324 s; a placement is confirmed only once the level has sat at
// it for the persistence time (60 s here) without a break: back at 100 from 324 s, it is learned
// again where it stands and not named. A burst that lasts to 420 s (120 s past the warm-up) is
// the machine's level as far as the detector can tell, and the machine is named once back at
// its own (a benign event longer than the persistence is a divergence).
TEST(PeerModelTest, APlacementIsConfirmedOnlyOnceTheLevelHasSatAtItForThePersistence) {
  for (const double end : {324.0, 420.0}) {
    SCOPED_TRACE(end);
    Rng rng(56, 0);
    Job job(16, {PeerSignal("rx", Worse::kLower)});
    job.Run(0, 1200, 5, [&](uint32_t m, uint32_t, double t) {
      return Fresh(Noisy(rng, m == 3 && t >= 200 && t < end ? 130 : 100));
    });
    EXPECT_EQ(job.Named(), end < 400 ? std::vector<uint32_t>{} : std::vector<uint32_t>{3});
    if (end > 400) {
      EXPECT_GT(job.TriggeredAt(3), end);
    }
  }
}

// A group that differs by placement (machines 0-3, a stage, at 80; the others at 100): machine
// 3's level scatters (10% noise, the others' 1%) and an event of its own lifted most of its window
// (170-280 s, after the window's first sample) to 108, so it sits 26% under that placement
// afterwards: not confirmed, yet within its noise of it (no deviation). Its first real fault, a
// drop to 40 at 900 s, is named, not learned again: 40 is no level it held before its window. On
// a signal worse either way, so that this alone decides it, not the worse side.
TEST(PeerModelTest, AnUnconfirmedPlacementDoesNotHideALaterFault) {
  Rng rng(55, 0);
  Job job(16, {PeerSignal("rx")});
  job.Run(0, 1500, 5, [&](uint32_t m, uint32_t, double t) {
    if (m != 3) return Fresh(Noisy(rng, m < 3 ? 80 : 100));
    if (t >= 900) return Fresh(Noisy(rng, 40));
    const double level = t >= 170 && t < 280 ? 108 : 80;
    return Fresh(level * (1 + 0.1 * rng.Normal(0, 1)));
  });
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
  EXPECT_GT(job.TriggeredAt(3), 900);
}

// A restart keeps the placement from before it of a machine whose level moved (a straggler since
// before the job hung): its level never sits at that placement, on purpose, and it is named
// again after the restart's warm-up, not learned again where it stands.
TEST(PeerModelTest, APlacementKeptFromBeforeARestartIsNotLearnedAgain) {
  Rng rng(53, 0);
  Job job(16, {PeerSignal("power")});
  const auto sample = [&](uint32_t m, uint32_t, double t) {
    if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
    return Fresh(Noisy(rng, m == 3 && t >= 1000 ? 70 : 100));
  };
  job.Run(0, 1900, 5, sample);
  ASSERT_EQ(job.stalls().size(), 1u);
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
  const int before = job.triggers();
  job.Run(1900, 2600, 5, sample);
  EXPECT_GT(job.triggers(), before);
  const std::optional<Deviation> d = job.DeviationOn(3, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_NEAR(d->expected, 100, 3);
}

// The same straggler, named at the first sample it is judged on after the restart's warm-up:
// its level has been away from the placement kept from before over the window its new level was
// learned from (twice the persistence), and its run goes back into it, so it need not deviate for
// the persistence again
// (jobgen's seed 84,004 at 5 s: a straggler since before a hang, named 60 s after the warm-up
// that followed the watchdog's restart). A machine that begins to deviate as the warm-up ends
// (machine 9) still needs the persistence.
TEST(PeerModelTest, AStragglerKeptOverARestartIsNamedAsTheWarmupEnds) {
  Rng rng(61, 0);
  const PeerOptions options = Steady();
  Job job(16, {PeerSignal("power")}, options);
  double judged_from = -1;  // when machine 9 first deviates after the restart
  const auto sample = [&](uint32_t m, uint32_t, double t) {
    if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
    const bool slow = (m == 3 && t >= 1000) || (m == 9 && judged_from >= 0 && t >= judged_from);
    return Fresh(Noisy(rng, slow ? 70 : 100));
  };
  job.Run(0, 1900, 5, sample);
  ASSERT_EQ(job.stalls().size(), 1u);
  ASSERT_EQ(job.Named(), std::vector<uint32_t>{3});
  double named_again = -1;
  for (double t = 1900; t < 2600; t += 5) {
    const int before = job.triggers();
    job.Step(t, sample);
    // The first frame in which machine 3 has a run again: the warm-up has ended.
    if (judged_from < 0 && !job.model().Quiet(3)) judged_from = t + 5;
    if (named_again < 0 && job.triggers() > before) named_again = t;
  }
  ASSERT_GE(judged_from, 0);
  EXPECT_GT(named_again, 2100);
  EXPECT_LE(named_again, judged_from + 5);
  EXPECT_GE(job.TriggeredAt(9), judged_from + options.persistence_s - 5);
}

// A reviewer's case (session 65) against the first version of the rule above, which counted
// the persistence whatever the window held. Machine 3's level moves over the restart for an event
// of its own (no fault): over 2110 s to `end` (the restart's warm-up, 300 s for these signals as
// FirstWarmup caps RestartWarmup, ends about 2200 s), shorter than the signal's own persistence
// (cpu_idle 120 s, a temperature 300 s). The window its new level was learned from is 150 s,
// under twice the persistence: the event took more than half of it without lasting the
// persistence. It is not named.
TEST(PeerModelTest, AKeptMachinesEventShorterThanItsSignalsPersistenceIsNotNamed) {
  struct Case {
    SignalInfo signal;
    double level, event, end;
  };
  const Case cases[] = {
      {PeerSignal("cpu_idle", Worse::kEither, 120), 100, 125, 2205},
      {PeerSignal("cpu_idle", Worse::kEither, 120), 100, 125, 2215},
      {PeerSignal("cpu_idle", Worse::kEither, 120), 100, 125, 2225},
      {PeerSignal("gpu_temp", Worse::kHigher, 300), 60, 70, 2215},
      {PeerSignal("gpu_temp", Worse::kHigher, 300), 60, 70, 2260},
      {PeerSignal("gpu_temp", Worse::kHigher, 300), 60, 70, 2380},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.signal.name + " to " + std::to_string(c.end));
    Rng rng(65, 0);
    Job job(16, {c.signal});
    job.Run(0, 3000, 5, [&](uint32_t m, uint32_t, double t) {
      if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
      return Fresh(Noisy(rng, m == 3 && t >= 2110 && t < c.end ? c.event : c.level));
    });
    ASSERT_EQ(job.stalls().size(), 1u);
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{}) << "machine 3 at " << job.TriggeredAt(3);
  }
}

// A reviewer's case (session 65): one machine's power at 80 among peers at 100 from the restart
// on (its rank reloads slower), through the restart's warm-up (240 s at 5 s, to about 2140 s),
// back `end`. It has deviated from the placement it held before for 4 minutes or more, longer than
// the persistence: named as the warm-up ends, where before the warm-up counted for nothing and it
// was named only if still off a persistence after it. (At the job's start there is no placement
// to be away from: such a machine is learned at its level, and named back at its own only once
// that lasts, APlacementIsConfirmedOnlyOnceTheLevelHasSatAtItForThePersistence.)
TEST(PeerModelTest, AMachineOffItsKeptPlacementOverTheWholeWarmupIsNamedAsItEnds) {
  for (const double end : {2160.0, 2175.0, 2190.0}) {
    SCOPED_TRACE(end);
    Rng rng(66, 0);
    Job job(16, {PeerSignal("power")});
    job.Run(0, 3000, 5, [&](uint32_t m, uint32_t, double t) {
      if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
      return Fresh(Noisy(rng, m == 3 && t >= 1900 && t < end ? 80 : 100));
    });
    ASSERT_EQ(job.stalls().size(), 1u);
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
    EXPECT_GT(job.TriggeredAt(3), 1900 + 240);
    EXPECT_LE(job.TriggeredAt(3), 1900 + 240 + 20);
  }
}

// Machines 0-3 a stage at 80, the others at 100 (1% noise), on `signal`, every `every` s up to
// `to`; the job hangs over 1500-1900 s and restarts, and machine 2 runs at 100 after it: it moved
// the better way, and its placement from before (80) is kept. `own(t, rng)` gives machine 2's
// sample where it returns one (an event of its own).
std::unique_ptr<Job> RunAStageMachineKeptTheBetterWay(
    const SignalInfo& signal, double every, double to,
    const std::function<std::optional<Sample>(double, Rng&)>& own) {
  Rng rng(67, 0);
  auto job = std::make_unique<Job>(16, std::vector<SignalInfo>{signal});
  job->Run(0, to, every, [&](uint32_t m, uint32_t, double t) {
    if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
    if (m == 2) {
      if (const std::optional<Sample> x = own(t, rng)) return *x;
    }
    return Fresh(Noisy(rng, m == 2 && t >= 1900 ? 100 : m < 4 ? 80 : 100));
  });
  return job;
}

// A reviewer's case (session 65) against the same first version: machine 2 of a stage at 80
// (machines 0-3; the others at 100, transmit rate, lower is worse) runs at 100 after the restart:
// it moved the better way, and its placement from before (80) is kept. Its level was never away
// from that placement the worse way. A short dip of its own (to 50 over 2130-2170 s, 40 s, under
// the persistence) that is under way as the warm-up ends (about 2140 s) is no fault: it is not
// named. A dip that lasts (a fault) is named, after the warm-up's end.
TEST(PeerModelTest, AShortDipAsTheWarmupEndsOfAMachineKeptTheBetterWayIsNotNamed) {
  for (const double end : {2170.0, 3000.0}) {
    SCOPED_TRACE(end);
    const std::unique_ptr<Job> job = RunAStageMachineKeptTheBetterWay(
        PeerSignal("tx", Worse::kLower), 5, 3000, [&](double t, Rng& rng) -> std::optional<Sample> {
          if (t >= 2130 && t < end) return Fresh(Noisy(rng, 50));
          return std::nullopt;
        });
    ASSERT_EQ(job->stalls().size(), 1u);
    EXPECT_EQ(job->Named(), end < 3000 ? std::vector<uint32_t>{} : std::vector<uint32_t>{2})
        << "machine 2 at " << job->TriggeredAt(2);
    if (end == 3000) {
      EXPECT_GE(job->TriggeredAt(2), 2130 + 60 - 5);
    }
  }
}
// A reviewer's case (session 65) against e001ea5, which counted a window's level beyond the
// placement's tolerance as away, not as far as the machine deviates now. Machine 3 (transmit
// rate, lower is worse) runs 13% under its peers from the restart on (1900 s):
// beyond the placement tolerance of the placement kept from before (so it is kept), but among
// peers that scatter 5% (its own values 0.5%) under z_min spreads: no deviation of its own, never
// named for its level. A short dip of its own (to 50 over 2130-2170 s, 40 s, under the
// persistence) is under way as the restart's warm-up ends (about 2145 s). The parent names
// nobody; nothing deviated for the persistence. A dip that lasts (to 3000 s) is named.
TEST(PeerModelTest, AShortDipOfAMachineKeptUnderTheNoiseThresholdIsNotNamed) {
  for (const double dip_end : {2170.0, 2180.0, 3000.0}) {
    SCOPED_TRACE(dip_end);
    const bool fault = dip_end >= 3000;  // the dip lasts: a fault, named
    Rng rng(71, 0);
    Job job(16, {PeerSignal("tx", Worse::kLower)});
    double z_after = 0;
    const auto sample = [&](uint32_t m, uint32_t, double t) {
      if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
      if (m != 3) return Fresh(100 * (1 + rng.Normal(0, 0.05)));
      if (t >= 2130 && t < dip_end) return Fresh(Noisy(rng, 50));
      return Fresh(t >= 1900 ? 87 * (1 + rng.Normal(0, 0.005)) : Noisy(rng, 100));
    };
    bool deviates_after = false;  // machine 3 has a run after the dip: a fault of its level
    for (double t = 0; t < 3000; t += 5) {
      job.Step(t, sample);
      if (t >= 2300 && t < 2305) z_after = job.ZOf(3, kMean).value_or(0);
      if (t >= dip_end + 30 && !job.model().Quiet(3)) deviates_after = true;
    }
    ASSERT_EQ(job.stalls().size(), 1u);
    if (fault) {
      EXPECT_EQ(job.Named(), std::vector<uint32_t>{3});
      continue;
    }
    EXPECT_GT(z_after, -4) << "machine 3 deviates on its own after the dip";
    EXPECT_FALSE(deviates_after);
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{})
        << "machine 3 at " << job.TriggeredAt(3) << " judged from "
        << job.model().JudgedFrom(0, kMean);
  }
}

// A reviewer's case (session 65) against e001ea5, whose run went back into the window however
// long ago it ended. Machine 3's power sits at 80 among peers at 100 from the restart (1900 s) on,
// through the restart's warm-up (as AMachineOffItsKeptPlacementOverTheWholeWarmupIsNamedAsItEnds),
// but its exporter holds its last value from 2120 s (its series still reports: held copies, no
// fresh sample) until 2700 s. It returns at 100 after a short dip of 30 s at 80 (under the
// persistence). Ten minutes lie between the window and its return, with no fresh sample: a gap that
// ends any run (AGapInTheSamplesRestartsTheRun). The parent names nobody.
TEST(PeerModelTest, AKeptMachineBackAfterAGapWithAShortDipIsNotNamed) {
  Rng rng(72, 0);
  Job job(16, {PeerSignal("power")});
  double held = 80;
  job.Run(0, 3300, 5, [&](uint32_t m, uint32_t, double t) {
    if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
    if (m != 3) return Fresh(Noisy(rng, 100));
    if (t >= 2120 && t < 2700) return Held(held);
    if (t >= 1900 && t < 2730) {
      held = Noisy(rng, 80);
      return Fresh(held);
    }
    return Fresh(Noisy(rng, 100));
  });
  ASSERT_EQ(job.stalls().size(), 1u);
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{})
      << "machine 3 at " << job.TriggeredAt(3) << " judged from "
      << job.model().JudgedFrom(0, kMean);
}

// RunAStageMachineKeptTheBetterWay (transmit rate, every 5 s) with a dip of machine 2's own to
// `depth`: fresh samples from `d1` for `fresh` s, its exporter holding the last of them for `held`
// s, fresh at `depth` again for `again` s, then back at 100. Expects nobody named.
void ExpectAKeptDipSplitByAHeldGapIsNotNamed(double depth, double d1, double fresh, double held,
                                             double again) {
  const double held_from = d1 + fresh, back = held_from + held, end = back + again;
  double last = depth;
  const std::unique_ptr<Job> job = RunAStageMachineKeptTheBetterWay(
      PeerSignal("tx", Worse::kLower), 5, 3200, [&](double t, Rng& rng) -> std::optional<Sample> {
        if (t >= held_from && t < back) return Held(last);
        if (t >= d1 && t < end) {
          last = Noisy(rng, depth);
          return Fresh(last);
        }
        return std::nullopt;
      });
  ASSERT_EQ(job->stalls().size(), 1u);
  EXPECT_EQ(job->Named(), std::vector<uint32_t>{})
      << "machine 2 at " << job->TriggeredAt(2) << " judged from "
      << job->model().JudgedFrom(0, kMean);
}

// A reviewer's case (session 65) against f9eab68. Machine 2 of a stage at 80 (machines 0-3; the
// others at 100, transmit rate, lower is worse) runs at 100 after the restart (1900 s): kept the
// better way, as in AShortDipAsTheWarmupEndsOfAMachineKeptTheBetterWayIsNotNamed. A dip of its own
// to 50 for 15 s of fresh samples in the window, then its exporter holds that value (held copies,
// no fresh sample) for 40 s, then fresh samples at 50 again for 35 s as the warm-up ends, then back
// at 100. No run of fresh deviating samples lasts the persistence, and 40 s without a fresh sample
// ends any run (AGapInTheSamplesRestartsTheRun). `shift` moves the pattern: 0 puts it across the
// warm-up's end; 500 s later (a control) it lies wholly in judged time. The parent names nobody;
// f9eab68 names machine 2 at 2145 s (the first judged sample) for shifts -5, 0 and 5: KeptAwaySince
// checks the gap only between the window's newest level and now, not between its levels, and
// held copies leave no level, so the window's levels before the held gap join the run.
TEST(PeerModelTest, AKeptMachinesDipSplitByAHeldGapInTheWindowIsNotNamed) {
  for (const double shift : {-5.0, 0.0, 5.0, 500.0}) {
    SCOPED_TRACE(shift);
    ExpectAKeptDipSplitByAHeldGapIsNotNamed(50, 2075 + shift, 15, 40, 35);
  }
}

// The same kept machine with a deeper dip of its own, to 30 (its level 37% under the placement
// of 80 kept from before, past a full-strength deviation even as the smoothing lags): fresh samples
// at 30 for 25 s from `d1`, its exporter holding that value for 30 s, fresh at 30 again for 45 s,
// across the warm-up's end (about 2145 s), then back at 100. Each run of fresh deviating samples
// is shorter than the persistence (60 s), and 30 s without a fresh sample ends a run. Unlike the
// shallower dip above, the window's levels before the held gap lie off the placement as far as
// those after it: only the gap between two window levels (a run's gap and the window's spacing,
// in KeptAwaySince) keeps the run from reaching back over both parts to a persistence's evidence.
TEST(PeerModelTest, AKeptMachinesDeepDipSplitByAHeldGapInTheWindowIsNotNamed) {
  for (const double shift : {-10.0, 0.0, 10.0, 500.0}) {
    SCOPED_TRACE(shift);
    ExpectAKeptDipSplitByAHeldGapIsNotNamed(30, 2055 + shift, 25, 30, 45);
  }
}

// A reviewer's case (session 65): the same kept machine, its dip split instead by a partial
// recovery: 40 over [d1, d1 + 25), 74 (7.5% under its placement: no deviation of its raw value) for
// three samples, 40 again for 40 s, then 100. Three fresh samples that do not deviate end a run:
// two runs of 25 s and 40 s, neither the persistence. The smoothed value stays under the
// placement's threshold through the partial recovery (it lags the raw value).
TEST(PeerModelTest, AKeptMachinesDipSplitByAPartialRecoveryInTheWindowIsNotNamed) {
  for (const double d1 : {2090.0, 2095.0, 2100.0, 2105.0}) {
    SCOPED_TRACE(d1);
    const double partial = d1 + 25, again = partial + 15, end = again + 40;
    const std::unique_ptr<Job> job = RunAStageMachineKeptTheBetterWay(
        PeerSignal("tx", Worse::kLower), 5, 3000, [&](double t, Rng& rng) -> std::optional<Sample> {
          if (t >= d1 && t < end) return Fresh(Noisy(rng, t >= partial && t < again ? 74 : 40));
          return std::nullopt;
        });
    ASSERT_EQ(job->stalls().size(), 1u);
    EXPECT_EQ(job->Named(), std::vector<uint32_t>{})
        << "machine 2 at " << job->TriggeredAt(2) << " judged from "
        << job->model().JudgedFrom(0, kMean);
  }
}

// A reviewer's case (session 65) against f9eab68:
// AShortDipOfAMachineKeptUnderTheNoiseThresholdIsNotNamed without its dip.
// Machine 3 runs 13% under its peers from the restart on (1900 s), its peers scattering 5% (its own
// values 0.5%): kept, but no deviation of its own past the thresholds once the spread is learned.
// At the parent (seed 71) it deviates just past the thresholds at 2145-2155 s (the first judged
// samples), its run ending at 2160 s with 5 s of evidence. With f9eab68 its first run reaches back
// over the whole window (its levels there lie as far off the placement as it deviates at that
// one sample) and it is named at 2145 s with no event at all.
TEST(PeerModelTest, AMachineKeptUnderTheNoiseThresholdIsNotNamed) {
  for (const uint64_t seed : {71, 72, 73, 74}) {
    SCOPED_TRACE(seed);
    Rng rng(seed, 0);
    Job job(16, {PeerSignal("tx", Worse::kLower)});
    double first_run = -1;
    const auto sample = [&](uint32_t m, uint32_t, double t) {
      if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
      if (m != 3) return Fresh(100 * (1 + rng.Normal(0, 0.05)));
      return Fresh(t >= 1900 ? 87 * (1 + rng.Normal(0, 0.005)) : Noisy(rng, 100));
    };
    for (double t = 0; t < 3000; t += 5) {
      job.Step(t, sample);
      if (t >= 1900 && first_run < 0 && !job.model().Quiet(3)) first_run = t;
    }
    ASSERT_EQ(job.stalls().size(), 1u);
    EXPECT_EQ(job.Named(), std::vector<uint32_t>{})
        << "machine 3 at " << job.TriggeredAt(3) << " judged from "
        << job.model().JudgedFrom(0, kMean) << ", its first run at " << first_run;
  }
}

// RunAStageMachineKeptTheBetterWay with a dip of machine 2's own to 50, lasting `length`
// seconds from `lead` seconds before the restart's warm-up ends (found by a first run without
// the dip). Returns the machines named.
std::vector<uint32_t> NamedForADipAcrossTheWarmupsEnd(const SignalInfo& signal, double every,
                                                      double length, double lead) {
  const auto run = [&](double judged_from) {
    const double from = judged_from - lead;
    return RunAStageMachineKeptTheBetterWay(
        signal, every, 4000, [&](double t, Rng& rng) -> std::optional<Sample> {
          if (judged_from >= 0 && t >= from && t < from + length) return Fresh(Noisy(rng, 50));
          return std::nullopt;
        });
  };
  const double judged_from = run(-1)->model().JudgedFrom(0, kMean);
  return run(judged_from)->Named();
}

// A reviewer's cases (session 65): whatever of a benign dip shorter than the persistence the
// warm-up's window holds, and however the window's smoothed levels lag it, a kept machine's run
// back into the window never makes it a deviation that lasted the persistence: at a 5-s cadence
// (the persistence 60 s, or the signal's own 120 s) and at 15-60 s.
TEST(PeerModelTest, ADipShorterThanThePersistenceAcrossAKeptMachinesWarmupEndIsNotNamed) {
  const SignalInfo tx = PeerSignal("tx", Worse::kLower);
  for (const double length : {40.0, 55.0}) {
    for (const double lead : {55.0, 45.0, 35.0, 20.0, 10.0}) {
      SCOPED_TRACE(testing::Message() << length << " s, " << lead << " s before");
      EXPECT_EQ(NamedForADipAcrossTheWarmupsEnd(tx, 5, length, lead), std::vector<uint32_t>{});
    }
  }
  for (const double lead : {110.0, 80.0, 40.0}) {
    SCOPED_TRACE(testing::Message() << "own persistence, " << lead << " s before");
    EXPECT_EQ(NamedForADipAcrossTheWarmupsEnd(PeerSignal("tx", Worse::kLower, 120), 5, 115, lead),
              std::vector<uint32_t>{});
  }
  for (const double every : {15.0, 30.0, 60.0}) {
    for (const double lead : {54.0, 44.0, 34.0}) {
      SCOPED_TRACE(testing::Message() << "every " << every << " s, " << lead << " s before");
      EXPECT_EQ(NamedForADipAcrossTheWarmupsEnd(tx, every, 55, lead), std::vector<uint32_t>{});
    }
  }
  // A dip that lasts is named.
  EXPECT_EQ(NamedForADipAcrossTheWarmupsEnd(tx, 5, 300, 30), std::vector<uint32_t>{2});
}

// After jobgen's seed 83,001 (32 machines, 5-15 s): two network bursts of machine 3's own took
// most of its window, and it was placed at their level; back at its own, 22% under that
// placement, its scatter hid the gap, never confirmed and never named. The job hung for
// minutes and restarted; the restart's warm-up learned the machine at its own level, and the
// placement from before was kept as if its level had moved from it (a straggler since before
// the stall), and it was named at the level it had held for half an hour. A placement the
// machine has been away from for longer than the stall could have gone unseen is not kept; a
// fault after the restart is still named.
TEST(PeerModelTest, APlacementTheMachineLeftLongBeforeTheStallIsNotKeptOverTheRestart) {
  for (const bool fault : {false, true}) {
    SCOPED_TRACE(fault);
    Rng rng(60, 0);
    Job job(16, {PeerSignal("tx", Worse::kLower)});
    job.Run(0, 3600, 5, [&](uint32_t m, uint32_t, double t) {
      if (t >= 1500 && t < 1900) return Fresh(Noisy(rng, 2));  // the job hangs; then a restart
      if (m != 3) return Fresh(Noisy(rng, 90 + 5 * (m % 8)));
      if (fault && t >= 2800) return Fresh(Noisy(rng, 50));
      // Its scatter before the stall (on jobgen, bursts of its own raised its noise), not after.
      const double level = t >= 140 && t < 310 ? 134 : 105;
      return Fresh(level * (1 + (t < 1500 ? 0.1 : 0.01) * rng.Normal(0, 1)));
    });
    ASSERT_EQ(job.stalls().size(), 1u);
    ExpectNamedOnlyForItsFault(job, 3, fault, 2800);
  }
}

// Machines at levels 90-125 (1% noise, 5 s); machine 7 (at 125) slows to 95 from `from` on and
// stays slow; the job hangs over each of `hangs` (then a restart). Machine 7 is named before the
// last hang and, by `after`, again after it, against its placement from before (125), not
// learned at 95.
void ExpectAStragglerNamedAgainAfterTheRestart(uint64_t seed, double from,
                                               const std::vector<std::pair<double, double>>& hangs,
                                               double after) {
  Rng rng(seed, 0);
  Job job(16, {PeerSignal("tx", Worse::kLower)});
  const auto sample = [&](uint32_t m, uint32_t, double t) {
    for (const auto& [begin, end] : hangs) {
      if (t >= begin && t < end) return Fresh(Noisy(rng, 2));
    }
    return Fresh(Noisy(rng, m == 7 && t >= from ? 95 : 90 + 5 * (m % 8)));
  };
  const double last_end = hangs.back().second;
  job.Run(0, last_end, 5, sample);
  ASSERT_EQ(job.stalls().size(), hangs.size());
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{7});
  const int before = job.triggers();
  job.Run(last_end, after, 5, sample);
  EXPECT_GT(job.triggers(), before);
  const std::optional<Deviation> d = job.DeviationOn(7, kMean);
  EXPECT_TRUE(d.has_value());
  if (d) {
    EXPECT_NEAR(d->expected, 125, 5);
  }
}

// A reviewer's case (session 64) against the first version of the rule above, which counted a
// placement as held only where the machine had sat at it lately: the straggler begins before its
// placement is confirmed (the first warm-up ends at 300 s; confirmation takes 60 s at it) and
// stays slow through a hang (1500-1900 s) and the restart.
TEST(PeerModelTest, AStragglerBegunBeforeConfirmationIsKeptOverARestart) {
  for (const double from : {280.0, 310.0, 330.0}) {
    SCOPED_TRACE(from);
    ExpectAStragglerNamedAgainAfterTheRestart(53, from, {{1500, 1900}}, 2600);
  }
}

// A reviewer's case (session 64), as above, over two restarts in a row. The first hang (1500-1900
// s) restarts the job; its warm-up ends at 2145 s. The straggler begins at `from` (before it has
// sat 60 s at its placement) and the job hangs again at 2600-3000 s.
TEST(PeerModelTest, AStragglerBegunJustAfterARestartsWarmupIsKeptOverTheNext) {
  for (const double from : {2150.0, 2170.0, 2190.0}) {
    SCOPED_TRACE(from);
    ExpectAStragglerNamedAgainAfterTheRestart(54, from, {{1500, 1900}, {2600, 3000}}, 3700);
  }
}

// Power and step time of 16 machines, a sample every `every` s from 0 to `end`: while hung(t)
// power falls to 2 and each step time is held at its last value; otherwise machine m's step time
// is level(m, t) (none where missing(m, t)).
void RunStepTimes(Job& job, Rng& rng, double every, double end,
                  const std::function<bool(double)>& hung,
                  const std::function<double(uint32_t, double)>& level,
                  const std::function<bool(uint32_t, double)>& missing = nullptr) {
  std::vector<double> last(16, 1.0);
  job.Run(0, end, every, [&](uint32_t m, uint32_t s, double t) {
    if (s == 0) return Fresh(Noisy(rng, hung(t) ? 2 : 100));
    if (missing && missing(m, t)) return kNone;
    if (hung(t)) return Held(last[m]);
    last[m] = Noisy(rng, level(m, t));
    return Fresh(last[m]);
  });
}

// The job hangs at 1,500 s, its step times held; the restart's first iterations (2,300-2,345 s,
// 1.3 times as long) end in a hang of its collectives that takes over its warm-up (no placement
// learned: each stays where it was before), and the job resumes at 2,650 s.
bool HungTwice(double t) { return (t >= 1500 && t < 2300) || (t >= 2345 && t < 2650); }
double RestartsSlower(double t) { return t >= 2300 && t < 2345 ? 1.3 : 1; }

// The shared deviations on the step time's mean, each as its members.
std::vector<std::vector<uint32_t>> SharedStepTimes(const Job& job) {
  std::vector<std::vector<uint32_t>> out;
  for (const auto& [time, sh] : job.shared()) {
    if (sh.feature != FeatureOf(1, Stat::kMean)) continue;
    out.emplace_back();
    for (const PeerModel::Shared::Member& member : sh.members) out.back().push_back(member.machine);
  }
  return out;
}

// Jobgen's seed 99,002 (64 machines, 10-30 s): machines 2 and 5 slow from 600 s, each named for
// it; machine 9's step time grows from 1,430 s, just before the hangs above. As the job resumes
// the three deviate together, their runs beginning as one. Machines 2 and 5 deviate as far as
// they did when named: their faults, going on, with one new run beside them are no shared cause,
// and machine 9 is named.
TEST(PeerModelTest, MachinesNamedBeforeAHangMakeNoSharedDeviationOfANewOneAfterIt) {
  Rng rng(57, 0);
  Job job(16, {PeerSignal("power"), PeerSignal("step_time", Worse::kHigher)});
  RunStepTimes(job, rng, 15, 3300, HungTwice, [](uint32_t m, double t) {
    if ((m == 2 || m == 5) && t >= 600) return 2.0 * RestartsSlower(t);
    if (m == 9 && t >= 1430) return (1 + 0.6 * std::min(1.0, (t - 1430) / 60)) * RestartsSlower(t);
    return RestartsSlower(t);
  });
  EXPECT_EQ(job.stalls().size(), 1u);  // the second hang begins inside the warm-up: not judged
  EXPECT_EQ(job.Named(), (std::vector<uint32_t>{2, 5, 9}));
  EXPECT_TRUE(job.shared().empty());
}

// A reviewer's cases (session 72) against a first version of the rule above that left every
// fault named before, going on, out of a shared deviation. As the job resumes after the hangs,
// machines 3 and 4 of a rack slow by half, one shared cause, with machine 2, named for its own
// fault (+50% from 600 s) that ended in the hang (`cured`: its mark from then stands, as no judged
// sample came between) or goes on; or with machines 2 and 5, both named and going on (a rack of
// four). Two new runs are a shared cause: one shared deviation, neither 3 nor 4 named.
TEST(PeerModelTest, TwoNewRunsBesideMachinesNamedBeforeAHangAreStillOneSharedCause) {
  for (const bool cured : {false, true}) {
    for (const bool two_named : {false, true}) {
      if (cured && two_named) continue;
      SCOPED_TRACE(std::to_string(cured) + " " + std::to_string(two_named));
      Rng rng(80, 0);
      Job job(16, {PeerSignal("power"), PeerSignal("step_time", Worse::kHigher)});
      RunStepTimes(job, rng, 5, 3900, HungTwice, [&](uint32_t m, double t) {
        const bool named = m == 2 || (two_named && m == 5);
        if ((named || m == 3 || m == 4) && t >= 2650) return 1.5;
        return (named && t >= 600 && !(cured && t >= 1500) ? 1.5 : 1.0) * RestartsSlower(t);
      });
      EXPECT_EQ(job.Named(), (two_named ? std::vector<uint32_t>{2, 5} : std::vector<uint32_t>{2}));
      const std::vector<std::vector<uint32_t>> shared = SharedStepTimes(job);
      ASSERT_EQ(shared.size(), 1u);
      EXPECT_TRUE(std::ranges::find(shared[0], 3u) != shared[0].end());
      EXPECT_TRUE(std::ranges::find(shared[0], 4u) != shared[0].end());
    }
  }
}

// The cost of the rule, a reviewer's case (session 72): machines 2 and 5, named for their own
// faults (twice the others' step time from 600 s, going on), and machine 3 of their rack, which a
// shared cause slows by a fifth as the job resumes at 2,650 s, leaving 2 and 5 where they were:
// machine 3 is named, one new run beside faults going on. So it is where no hang comes between
// (the rack slowed at 1,800 s): before the rule, only a hang that began the three runs together
// made them one shared deviation.
TEST(PeerModelTest, ARackEventLeavingTwoNamedMachinesWhereTheyWereNamesTheThird) {
  for (const bool hang : {false, true}) {
    SCOPED_TRACE(hang);
    Rng rng(91, 0);
    Job job(16, {PeerSignal("power"), PeerSignal("step_time", Worse::kHigher)});
    const double rack_from = hang ? 2650 : 1800;
    RunStepTimes(
        job, rng, 5, 3900, [&](double t) { return hang && HungTwice(t); },
        [&](uint32_t m, double t) {
          const double own = (m == 2 || m == 5) && t >= 600 ? 2.0 : 1.0;
          return (t >= rack_from && (m == 2 || m == 5 || m == 3) ? std::max(own, 1.2) : own) *
                 (hang ? RestartsSlower(t) : 1);
        });
    EXPECT_EQ(job.Named(), (std::vector<uint32_t>{2, 3, 5}));
    EXPECT_GT(job.TriggeredAt(3), rack_from);
    EXPECT_TRUE(SharedStepTimes(job).empty());
  }
}

// The same without a hang: machine 2 (named, +50% from 600 s) is silent 1,500-1,650 s (its
// exporter), and machines 3 and 4 slow by half as it returns. Its run begins again with theirs:
// one shared deviation of the three, as before the rule (the reviewer's case).
TEST(PeerModelTest, TwoNewRunsBesideANamedMachineBackFromSilenceAreOneSharedCause) {
  Rng rng(76, 0);
  Job job(16, {PeerSignal("power"), PeerSignal("step_time", Worse::kHigher)});
  RunStepTimes(
      job, rng, 5, 3000, [](double) { return false; },
      [](uint32_t m, double t) {
        if (m == 2 && t >= 600) return 1.5;
        return (m == 3 || m == 4) && t >= 1650 ? 1.5 : 1.0;
      },
      [](uint32_t m, double t) { return m == 2 && t >= 1500 && t < 1650; });
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{2});
  EXPECT_EQ(SharedStepTimes(job), (std::vector<std::vector<uint32_t>>{{2, 3, 4}}));
}

// After the warm-up a machine's level is learned only while it does not deviate: a machine
// that drops to half after the warm-up and stays there an hour is still off its peers' 100.
TEST(PeerModelTest, ALastingDeviationIsNotLearnedAsTheMachinesLevel) {
  Rng rng(21, 0);
  Job job(16, {PeerSignal("power")});
  job.Run(0, 4000, 1, LevelThen(rng, 100, 400, [](uint32_t m) { return m == 3 ? 50 : -1; }));
  const std::optional<Deviation> d = job.DeviationOn(3, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_NEAR(d->expected, 100, 1);
  EXPECT_NEAR(d->effect, -0.5, 0.02);
  EXPECT_EQ(d->start, 401);
}

// --- Its own past ---------------------------------------------------------------------------

// Ten machines whose levels wander 15% over four hours, each at its own phase (workers that
// drift apart and back, as Alibaba PAI's do): the peers' spread is several times what any one
// machine scatters about its own recent level. Machine 6's value from `from` on is `after`
// times its level; one sample every 10 s.
Job::SampleOf Wandering(Rng& rng, double from, double after) {
  return [&rng, from, after](uint32_t m, uint32_t, double t) {
    const double level = 100 * (1 + 0.15 * std::sin(2 * M_PI * t / 14400 + m));
    return Fresh(Noisy(rng, m == 6 && t >= from ? after * level : level));
  };
}

// A machine that becomes 30% slower than it was is named against its own past, though its
// peers' spread (their levels wander apart) hides it from the peer comparison.
TEST(PeerModelTest, AMachineMuchSlowerThanItsOwnPastIsNamedThoughItsPeersScatter) {
  Rng rng(40, 0);
  Job job(10, {PeerSignal("step_time", Worse::kHigher)});
  job.Run(0, 1800, 10, Wandering(rng, 1800, 1.3));
  EXPECT_TRUE(job.Named().empty());
  job.Run(1800, 2000, 10, Wandering(rng, 1800, 1.3));
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{6});
  EXPECT_GE(job.TriggeredAt(6), 1860);
  EXPECT_LE(job.TriggeredAt(6), 1900);
  const std::optional<Deviation> d = job.DeviationOn(6, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->own_past);
  EXPECT_NEAR(d->effect, 0.3, 0.06);
}

// Where a signal is worse either way, a machine that returns to its peers' typical level (from
// 1/1.3 of it, 23% below, where it sat from its start) is no fault against its own past; one that
// falls further, to 60% of where it was, is.
TEST(PeerModelTest, AMachineReturningTowardItsPeersIsNoFaultAgainstItsOwnPast) {
  for (const double after : {1.3, 0.6}) {
    SCOPED_TRACE(after);
    Rng rng(41, 0);
    Job job(10, {PeerSignal("power")});
    const Job::SampleOf wandering = Wandering(rng, 0, 1 / 1.3);
    job.Run(0, 1800, 10, wandering);
    job.Run(1800, 2100, 10, [&](uint32_t m, uint32_t s, double t) {
      const Sample x = wandering(m, s, t);
      return m == 6 ? Fresh(x.value * after) : x;
    });
    EXPECT_EQ(job.Named(), after > 1 ? std::vector<uint32_t>{} : std::vector<uint32_t>{6});
  }
}

// The same against a placement, where the signal is worse either way: machines 4 and 5 drew 80
// among peers at 100 over the warm-up (placed alike, or learned while a benign event of their own
// lasted); from 600 machine 5 reads 100, the peers' level: no fault, never named. Its placement
// then follows it toward 100, and by 3,500 s machine 4 is alone at 80: placed at the warm-up's
// end, it stays placed and is not named either. Machine 5 read at 60, away from the peers, is
// named.
TEST(PeerModelTest, AMachineReturningTowardItsPeersIsNoFaultAgainstItsPlacement) {
  for (const double after : {100.0, 60.0}) {
    SCOPED_TRACE(after);
    Rng rng(51, 0);
    Job job(16, {PeerSignal("power")});
    job.Run(0, 5000, 5, [&](uint32_t m, uint32_t, double t) {
      if (m == 5 && t >= 600) return Fresh(Noisy(rng, after));
      return Fresh(Noisy(rng, m == 4 || m == 5 ? 80 : 100));
    });
    EXPECT_EQ(job.Named(), after == 100 ? std::vector<uint32_t>{} : std::vector<uint32_t>{5});
  }
}

// A machine that joins after the warm-up has no own past until its first sample: it is not
// compared with a past of 0 (for a signal worse when higher, everything is far above 0), and
// its first level becomes its past.
TEST(PeerModelTest, AMachineThatJoinsLaterHasNoOwnPastBeforeItsFirstSample) {
  Rng rng(42, 0);
  Job job(8, {PeerSignal("step_time", Worse::kHigher)});
  const auto sample = [&](uint32_t m, uint32_t, double t) {
    return m == 7 && t < 600 ? kNone : Fresh(Noisy(rng, 100));
  };
  job.Run(0, 600, 1, sample);
  for (double t = 600; t < 700; ++t) {
    job.Step(t, sample);
    EXPECT_TRUE(job.model().Quiet(7)) << t;
  }
  EXPECT_TRUE(job.Named().empty());
}

// Levels over a float's range (a ratio to the centre of 1e40) never make a machine's own past
// infinite or NaN: on a signal worse when lower, the machine far above its peers is named by
// nobody.
TEST(PeerModelTest, ALevelBeyondAFloatLeavesTheOwnPastFinite) {
  Rng rng(43, 0);
  Job job(8, {PeerSignal("bandwidth", Worse::kLower)});
  job.Run(0, 900, 1,
          [&](uint32_t m, uint32_t, double) { return Fresh(Noisy(rng, m == 7 ? 1e10 : 1e-30)); });
  EXPECT_TRUE(job.Named().empty());
  for (uint32_t m = 0; m < 8; ++m) {
    for (const Deviation& d : job.model().DeviationsOf(m, 8)) {
      EXPECT_TRUE(std::isfinite(d.expected)) << m;
      EXPECT_TRUE(std::isfinite(d.z)) << m;
    }
  }
}

// --- Groups and edge cases --------------------------------------------------------------------

// Each group is judged against its own peers: group 1 at half group 0's level is no
// deviation, and its machine 6 dropping to 25 is off its group's 50. Machines beyond the end of
// group_of are in group 0 (machine 8, at group 0's 100, is not alone at its level in group 1).
TEST(PeerModelTest, EachGroupIsJudgedAgainstItsOwnPeers) {
  Rng rng(22, 0);
  const std::vector<uint32_t> group_of = {0, 0, 0, 0, 1, 1, 1, 1};
  Job job(9, {PeerSignal("power")}, Steady(), group_of);
  job.Run(0, 500, 1, [&](uint32_t m, uint32_t, double t) {
    const double level = m < group_of.size() && group_of[m] == 1 ? 50 : 100;
    return Fresh(Noisy(rng, m == 6 && t >= 400 ? 25 : level));
  });
  const std::optional<Deviation> d = job.DeviationOn(6, kMean);
  ASSERT_TRUE(d.has_value());
  EXPECT_NEAR(d->expected, 50, 1);
  EXPECT_NEAR(d->effect, -0.5, 0.02);
  EXPECT_EQ(job.TriggeredAt(6), 461);
  EXPECT_EQ(job.Named(), std::vector<uint32_t>{6});
}

// Groups of fewer than min_peers (4) machines are not judged at all: one machine alone, two or
// three, even with one of them at half the others' level, are never scored nor named.
TEST(PeerModelTest, FewerMachinesThanMinPeersAreNotJudged) {
  for (const uint32_t machines : {1u, 2u, 3u}) {
    SCOPED_TRACE(machines);
    Job job(machines, {PeerSignal("power")});
    for (int t = 0; t < 600; ++t) {
      job.Step(t, [](uint32_t m, uint32_t, double) { return Fresh(m == 0 ? 50 : 100); });
      EXPECT_TRUE(job.model().scored().empty());
    }
    EXPECT_TRUE(job.model().Quiet(0));
    EXPECT_EQ(job.triggers(), 0);
  }
}

// With min_peers lowered, one machine alone is its own centre (z 0), and of two machines the
// centre is the higher (the upper of the two middle values) and their spread 1.4826 x their
// distance: the lower is -1 / 1.4826 = -0.674 noise scales off, however far apart they are, so
// two machines never deviate from each other.
TEST(PeerModelTest, OneOrTwoMachinesNeverDeviateFromEachOther) {
  PeerOptions o = Steady();
  o.min_peers = 1;
  Job alone(1, {PeerSignal("power")}, o);
  alone.Run(0, 600, 1, [](uint32_t, uint32_t, double t) { return Fresh(t < 400 ? 100 : 10); });
  EXPECT_FLOAT_EQ(*alone.ZOf(0, kMean), 0);
  EXPECT_TRUE(alone.model().Quiet(0));

  o.min_peers = 2;
  Job two(2, {PeerSignal("power")}, o);
  two.Step(0, [](uint32_t m, uint32_t, double) { return Fresh(m == 0 ? 50 : 100); });
  EXPECT_NEAR(*two.ZOf(0, kMean), -1 / kMadToSigma, 1e-4);
  EXPECT_FLOAT_EQ(*two.ZOf(1, kMean), 0);
  two.Run(1, 600, 1, [](uint32_t m, uint32_t, double t) {
    return Fresh(m == 0 && t >= 400 ? 10 : m == 0 ? 50 : 100);
  });
  // Each is placed at its own level (two levels scatter as far as they lie apart), so the
  // lower is about as far off after its drop to a fifth.
  EXPECT_NEAR(*two.ZOf(0, kMean), -1 / kMadToSigma, 0.05);
  EXPECT_TRUE(two.model().Quiet(0));
  EXPECT_TRUE(two.model().Quiet(1));
  EXPECT_EQ(two.triggers(), 0);
}

// A machine with no sample (missing: count 0) is not scored, and leaves its peers once it has
// been silent for three of its intervals (at least 5 s): of four machines reporting every
// second, machine 3 stops after 99; at 104 the other three are still judged (four current
// machines), from 105 nobody is (three are fewer than min_peers). A machine whose samples are
// held copies still reports: it stays among the peers.
TEST(PeerModelTest, AMachineWithoutSamplesLeavesItsPeersAfterThreeIntervals) {
  for (const bool held : {false, true}) {
    SCOPED_TRACE(held);
    Rng rng(23, 0);
    Job job(4, {PeerSignal("power")});
    const auto sample = [&](uint32_t m, uint32_t, double t) {
      const double v = Noisy(rng, 100);
      if (m == 3 && t >= 100) return held ? Held(v) : kNone;
      return Fresh(v);
    };
    job.Run(0, 105, 1, sample);
    EXPECT_EQ(job.model().scored().size(), 3u * 3);
    EXPECT_FALSE(job.ZOf(3, kMean).has_value());
    job.Run(105, 120, 1, sample);
    EXPECT_EQ(job.model().scored().size(), held ? 3u * 3 : 0u);
  }
}

}  // namespace
}  // namespace vigil::detect
