#include "vigil/telemetry/series.h"

#include <gtest/gtest.h>

#include <cmath>

namespace vigil::telemetry {
namespace {

RawSample Sample(double t, std::string_view metric, double v, std::string_view component = "gpu0") {
  RawSample s;
  s.time = t;
  s.machine = "m1";
  s.metric = metric;
  s.component = component;
  s.value = v;
  return s;
}

TEST(NormalizerTest, CountersBecomeRatesAndResetsAreHandled) {
  Normalizer n(SignalMap::Default(), false);
  Point p;
  EXPECT_FALSE(n.Normalize(Sample(10, "node_network_receive_bytes_total", 1000, "ib0"), &p));
  ASSERT_TRUE(n.Normalize(Sample(12, "node_network_receive_bytes_total", 3000, "ib0"), &p));
  EXPECT_DOUBLE_EQ(p.value, 1000);  // 2000 bytes in 2 s
  EXPECT_EQ(p.span, 2);             // value x span: the increase
  EXPECT_EQ(n.signals()[p.signal].name, "net_rx_bytes");
  EXPECT_EQ(n.components().Name(p.component), "ib0");
  ASSERT_TRUE(n.Normalize(Sample(13, "node_network_receive_bytes_total", 500, "ib0"), &p));
  EXPECT_DOUBLE_EQ(p.value, 500);  // reset: the increase is the new value
  EXPECT_EQ(n.counts().counter_bases, 1);
  EXPECT_EQ(n.counts().counter_resets, 1);
}

// A counter that goes back by a little did not reset (a reset starts again from zero): a sample
// that lags, a second scraper's (a Prometheus HA pair), or a count that went back (the
// reviewer's warm-up sweep, eval/detect_warmup.py, whose receive counters count down where two
// events of a host's own overlap its fault). Read as a reset, its rate was the whole count over
// one interval, 10^4 times the real one. It is held (no new sample, but a scrape for the series'
// presence), and the next sample's increase counts from the highest count, over the time since
// it. A drop to an eighth or less of the count is a reset.
TEST(NormalizerTest, ACounterBackByALittleIsNoReset) {
  Normalizer n(SignalMap::Default(), false);
  Point p;
  const auto rx = [](double t, double bytes) {
    return Sample(t, "node_network_receive_bytes_total", bytes, "ib0");
  };
  EXPECT_FALSE(n.Normalize(rx(0, 1e12), &p));
  ASSERT_TRUE(n.Normalize(rx(10, 1e12 + 1e10), &p));
  EXPECT_DOUBLE_EQ(p.value, 1e9);
  ASSERT_TRUE(n.Normalize(rx(20, 1e12 + 0.9e10), &p));  // back by 1e9
  EXPECT_TRUE(p.held);
  EXPECT_TRUE(p.rescraped);  // a scrape all the same: the exporter answered
  EXPECT_EQ(p.span, 0);
  EXPECT_DOUBLE_EQ(p.value, 1e9);  // the last rate, held
  ASSERT_TRUE(n.Normalize(rx(30, 1e12 + 1.3e10), &p));
  EXPECT_FALSE(p.held);
  EXPECT_EQ(p.span, 20);
  EXPECT_DOUBLE_EQ(p.value, 0.15e9);  // 3e9 over the 20 s since the highest count
  EXPECT_EQ(n.counts().counter_steps_back, 1);
  EXPECT_EQ(n.counts().counter_resets, 0);
  ASSERT_TRUE(n.Normalize(rx(40, 1.3e10 / 8), &p));  // down to an eighth: a reset
  EXPECT_FALSE(p.held);
  EXPECT_DOUBLE_EQ(p.value, 1.3e10 / 8 / 10);
  EXPECT_EQ(n.counts().counter_resets, 1);
  // A counter's base stepped back from has no rate to hold yet.
  EXPECT_FALSE(n.Normalize(Sample(0, "node_network_transmit_bytes_total", 1e12, "ib0"), &p));
  EXPECT_FALSE(n.Normalize(Sample(10, "node_network_transmit_bytes_total", 0.99e12, "ib0"), &p));
}

// A query_range answer at a 1 s step over 15 s scrapes repeats each scrape 15 times: the
// repeats are marked held (no new evidence) and keep their value, and a counter's rate is its
// increase over the 15 s between scrapes, not one spike per scrape.
TEST(NormalizerTest, AGridsRepeatsAreHeldAndCountersKeepTheirRate) {
  Normalizer n(SignalMap::Default(), false);
  Point p;
  int fresh = 0, held = 0;
  for (int t = 0; t < 300; ++t) {
    const int scrape = t / 15;  // the grid holds the last scrape
    const double bytes = 1000.0 * 15 * scrape + 7 * (scrape % 3);
    if (!n.Normalize(Sample(t, "node_network_receive_bytes_total", bytes, "ib0"), &p)) continue;
    (p.held ? held : fresh)++;
    EXPECT_EQ(p.span, p.held ? 0 : 15) << "t " << t;  // a copy brings no increase
    if (t >= 60) {
      EXPECT_NEAR(p.value, 1000, 1) << "t " << t;  // 15,000 bytes per 15 s
    }
  }
  EXPECT_EQ(fresh, 19);  // one a scrape after the base
  EXPECT_EQ(n.counts().held, 300 - 20);
  // A native 1 s series that changes every second holds nothing.
  for (int t = 0; t < 100; ++t) {
    ASSERT_TRUE(n.Normalize(Sample(t, "DCGM_FI_DEV_POWER_USAGE", 300 + t % 7), &p));
    EXPECT_FALSE(p.held && t > 10) << t;
    EXPECT_EQ(p.span, t == 0 ? 0 : 1);  // since the series' previous sample
  }
  // A value that never changes is a new sample every kMaxHold seconds.
  fresh = 0;
  for (int t = 0; t < 600; ++t) {
    ASSERT_TRUE(n.Normalize(Sample(t, "DCGM_FI_DEV_GPU_UTIL", 100), &p));
    fresh += !p.held;
  }
  EXPECT_EQ(fresh, 600 / static_cast<int>(Normalizer::kMaxHold));
}

// A gauge of a continuous quantity (a trainer's step time) that repeats its last value exactly is
// its exporter holding it (through a checkpoint): no new evidence however long it lasts, but a
// repeat at the series' cadence is a scrape (the series reports). Zero, and whole-number gauges
// (utilisation in percent), rest at one value: after the hold, their repeats are samples.
TEST(NormalizerTest, AContinuousGaugeThatRepeatsIsFrozen) {
  Normalizer n(SignalMap::Default(), false);
  Point p;
  for (int t = 0; t < 100; t += 5) {
    ASSERT_TRUE(n.Normalize(Sample(t, "training_step_seconds", 2.3 + 0.01 * (t % 7), ""), &p));
    EXPECT_FALSE(p.held);
  }
  int rescraped = 0;
  for (int t = 100; t < 400; t += 5) {
    ASSERT_TRUE(n.Normalize(Sample(t, "training_step_seconds", 2.31, ""), &p));
    EXPECT_EQ(p.held, t > 100) << t;
    rescraped += p.rescraped;
  }
  EXPECT_GE(rescraped, 25);  // about every other one: the hold is 1.5 scrapes
  int fresh = 0;
  for (int t = 400; t < 700; t += 5) {
    ASSERT_TRUE(n.Normalize(Sample(t, "training_step_seconds", 0, ""), &p));
    fresh += !p.held;
  }
  EXPECT_GE(fresh, 25);  // every other one
  // Utilisation in whole percent: after the hold, a repeated value is a new sample.
  fresh = 0;
  for (int t = 0; t < 300; t += 5) {
    const double util = t < 100 ? 90 + t % 9 : 2;
    ASSERT_TRUE(n.Normalize(Sample(t, "DCGM_FI_DEV_GPU_UTIL", util), &p));
    fresh += t >= 100 && !p.held;
  }
  EXPECT_GE(fresh, 20);
}

// Jobgen's seed 100,001: a job that begins with a hang of its collectives holds its step-time
// gauge at its first value for three minutes, before the series has shown that it changes at each
// scrape; after each hold, a repeat is a sample. The hang is one rest however many of its repeats
// were samples: once the gauge has changed at 15 of 16 samples since (30 here), a checkpoint's
// repeats are held, not evidence. Counted as three, they kept the step times of all 64 machines
// from counting as continuous for the whole job.
TEST(NormalizerTest, AContinuousGaugeThatBeganWithAHangIsFrozenOnceItHasChanged) {
  Normalizer n(SignalMap::Default(), false);
  Point p;
  for (int t = 0; t < 200; t += 15) {
    ASSERT_TRUE(n.Normalize(Sample(t, "training_step_seconds", 9.7, ""), &p));
  }
  for (int t = 200; t < 700; t += 15) {
    ASSERT_TRUE(n.Normalize(Sample(t, "training_step_seconds", 2.3 + 0.01 * (t % 7), ""), &p));
    EXPECT_FALSE(p.held);
  }
  for (int t = 700; t < 820; t += 15) {  // a checkpoint
    ASSERT_TRUE(n.Normalize(Sample(t, "training_step_seconds", 2.31, ""), &p));
    EXPECT_EQ(p.held, t > 700) << t;
  }
}

// Jobgen's seed 127,101 on 128 machines at 15 s: a job whose first iteration ran for 105 s and
// that then paused every few minutes (a hang from 130 to 370 s, a checkpoint from 460 to 550 s)
// rests every rank's step-time gauge at each pause; counted once each, the rests kept the gauge
// under 15 changes in 16 samples at 12 minutes, and a host's last iteration before an evaluation
// (1.1575 s, held through its 150 s) came back as a fresh sample every other scrape and was named.
// A rest of three holds or more is the job's pause and counts for nothing: the evaluation's
// repeats are held.
TEST(NormalizerTest, AJobsPausesDoNotKeepItsStepTimeFromCountingAsContinuous) {
  Normalizer n(SignalMap::Default(), false);
  Point p;
  double last = 0;
  int fresh_in_evaluation = 0;
  for (int t = 0; t < 870; t += 15) {
    const bool paused = (t >= 130 && t < 370) || (t >= 460 && t < 550) || t >= 720;
    if (t < 105) {
      last = 9.7;
    } else if (!paused) {
      last = t == 705 ? 1.1575 : 0.95 + 0.0001 * ((t / 15) % 13);
    }
    ASSERT_TRUE(n.Normalize(Sample(t, "training_step_seconds", last, ""), &p));
    if (t >= 720) fresh_in_evaluation += !p.held;
  }
  EXPECT_EQ(fresh_in_evaluation, 0);
}

// A reviewer's case (session 72): a GPU's engine-active fraction idle at exactly 0 for ten
// minutes before a job (one rest, counted once), then busy for 20 scrapes (counted continuous
// since), then saturated at exactly 1 for ten minutes: a fraction rests at its bounds, and those
// repeats are samples after the hold, as an idle GPU's 0 is. A rest at 0.97 is held (what the
// rule assumes of a fraction that changed at nearly every sample before).
TEST(NormalizerTest, AFractionAtItsBoundsIsNoHeldValue) {
  Normalizer n(SignalMap::Default(), false);
  Point p;
  const auto fresh_over = [&](int from, int to, double value) {
    int fresh = 0;
    for (int t = from; t < to; t += 15) {
      EXPECT_TRUE(n.Normalize(Sample(t, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", value), &p));
      fresh += !p.held;
    }
    return fresh;
  };
  EXPECT_GE(fresh_over(0, 600, 0), 8);
  for (int t = 600; t < 900; t += 15) {
    ASSERT_TRUE(n.Normalize(Sample(t, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.9 + 0.001 * (t % 7)), &p));
  }
  EXPECT_GE(fresh_over(900, 1500, 1), 8);
  for (int t = 1500; t < 1800; t += 15) {
    ASSERT_TRUE(n.Normalize(Sample(t, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.9 + 0.001 * (t % 7)), &p));
  }
  EXPECT_EQ(fresh_over(1800, 2400, 0.97), 1);
}

TEST(NormalizerTest, DuplicatesOutOfOrderAndNaNAreDroppedAndCounted) {
  Normalizer n(SignalMap::Default(), false);
  Point p;
  EXPECT_TRUE(n.Normalize(Sample(10, "DCGM_FI_DEV_GPU_UTIL", 90), &p));
  EXPECT_FALSE(n.Normalize(Sample(10, "DCGM_FI_DEV_GPU_UTIL", 91), &p));
  EXPECT_FALSE(n.Normalize(Sample(9, "DCGM_FI_DEV_GPU_UTIL", 91), &p));
  EXPECT_FALSE(n.Normalize(Sample(11, "DCGM_FI_DEV_GPU_UTIL", std::nan("")), &p));
  EXPECT_TRUE(n.Normalize(Sample(9, "DCGM_FI_DEV_GPU_UTIL", 91, "gpu1"), &p));  // its own series
  EXPECT_EQ(n.counts().duplicate, 1);
  EXPECT_EQ(n.counts().out_of_order, 1);
  EXPECT_EQ(n.counts().not_finite, 1);
  EXPECT_EQ(n.counts().accepted, 2);
}

TEST(NormalizerTest, PassthroughDecidesAboutUnknownMetrics) {
  Point p;
  Normalizer strict(SignalMap::Default(), false);
  EXPECT_FALSE(strict.Normalize(Sample(1, "my_signal", 1), &p));
  EXPECT_EQ(strict.counts().unmapped, 1);
  Normalizer open(SignalMap::Default(), true);
  ASSERT_TRUE(open.Normalize(Sample(1, "my_signal", 1), &p));
  EXPECT_EQ(open.signals()[p.signal].name, "my_signal");
  EXPECT_EQ(open.signals()[p.signal].role, SignalRole::kPeer);
  // A known metric whose label condition fails is not passed through.
  EXPECT_FALSE(open.Normalize(Sample(1, "node_cpu_seconds_total", 1, "cpu0"), &p));
}

TEST(DictionaryTest, DenseIdsInOrderOfFirstSight) {
  Dictionary d;
  EXPECT_EQ(d.Intern("b"), 0u);
  EXPECT_EQ(d.Intern("a"), 1u);
  EXPECT_EQ(d.Intern("b"), 0u);
  EXPECT_EQ(d.Find("a"), 1u);
  EXPECT_FALSE(d.Find("c"));
  EXPECT_EQ(d.Name(1), "a");
}

}  // namespace
}  // namespace vigil::telemetry
