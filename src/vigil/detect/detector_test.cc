#include "vigil/detect/detector.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "vigil/core/random.h"

namespace vigil::detect {
namespace {

using telemetry::RawSample;

// Feeds a job of `machines` machines, each reporting `signal` on two GPUs every second, through
// a normaliser, with per-sample noise; `value(machine, t)` gives the true value.
class Harness {
 public:
  explicit Harness(DetectorOptions o = {})
      : names_(telemetry::SignalMap::Default(), true), detector_(o, names_), rng_(7, 0) {}

  template <typename Fn>
  void Run(int machines, int from, int to, const std::string& metric, Fn&& value,
           const std::vector<int>& silent = {}) {
    for (int t = from; t < to; ++t) {
      for (int m = 0; m < machines; ++m) {
        if (std::find(silent.begin(), silent.end(), m) != silent.end()) continue;
        for (int g = 0; g < 2; ++g) {
          Feed(t, m, metric, g, value(m, t) * (1 + rng_.Normal(0, 0.01)));
        }
      }
    }
  }
  // Step times from 16 ranks over [0, to): rank m reports when (t + phase(m)) % interval is 0
  // (a scrape's cadence, staggered), with 1% noise drawn from a generator of its own seed.
  template <typename Phase, typename Fn>
  void RunSteps(int to, int interval, Phase&& phase, uint64_t seed, Fn&& value) {
    Rng rng(seed, 0);
    for (int t = 0; t < to; ++t) {
      for (int m = 0; m < 16; ++m) {
        if ((t + phase(m)) % interval != 0) continue;
        Feed(t, m, "training_step_seconds", 0, value(m, t) * (1 + rng.Normal(0, 0.01)));
      }
    }
  }
  void Feed(double t, int m, const std::string& metric, int gpu, double v) {
    Feed(t, m, metric, "gpu" + std::to_string(gpu), v);
  }
  void Feed(double t, int m, const std::string& metric, const std::string& component, double v) {
    telemetry::Point p;
    if (Normalize(t, m, metric, component, v, &p)) detector_.Feed(p);
  }
  // A point as Feed makes it, with a value that is not finite: what a library caller that skips
  // the Normalizer (which drops such samples) could pass.
  void FeedNotFinite(double t, int m, const std::string& metric) {
    telemetry::Point p;
    if (!Normalize(t, m, metric, "gpu0", 1, &p)) return;
    p.value = std::nan("");
    detector_.Feed(p);
  }
  std::vector<Alert> Finish() {
    detector_.Flush();
    return detector_.TakeAlerts();
  }
  // Finish's alerts, by machine.
  std::vector<Alert> FinishByMachine() {
    std::vector<Alert> alerts = Finish();
    std::sort(alerts.begin(), alerts.end(),
              [](const Alert& a, const Alert& b) { return a.machine < b.machine; });
    return alerts;
  }
  Detector& detector() { return detector_; }

 private:
  bool Normalize(double t, int m, const std::string& metric, const std::string& component, double v,
                 telemetry::Point* p) {
    const std::string machine = "m" + std::to_string(m);  // RawSample holds views
    RawSample s;
    s.time = t;
    s.machine = machine;
    s.metric = metric;
    s.component = component;
    s.value = v;
    return names_.Normalize(s, p);
  }

  telemetry::Normalizer names_;
  Detector detector_;
  Rng rng_;
};

TEST(DetectorTest, JobWideChangesRaiseNothing) {
  Harness h;
  // Training, a checkpoint where everyone drops to 5%, then an evaluation phase at 60%.
  h.Run(16, 0, 600, "DCGM_FI_DEV_GPU_UTIL", [](int, int t) {
    if (t >= 200 && t < 260) return 5.0;
    if (t >= 400) return 60.0;
    return 97.0 - 10 * ((t % 4) == 0);
  });
  EXPECT_TRUE(h.Finish().empty());
}

// 16 machines report power and tensor activity every second for 400 s; from 300 s machine 5's
// power falls by 30% (under the strong effect), and with `corroborated` its tensor activity too.
// `also(t, m)` runs after each machine's samples.
void SlowPowerJob(Harness& h, bool corroborated,
                  const std::function<void(int, int)>& also = nullptr) {
  Rng rng(13, 0);
  for (int t = 0; t < 400; ++t) {
    for (int m = 0; m < 16; ++m) {
      const bool faulty = m == 5 && t >= 300;
      const double noise = 1 + rng.Normal(0, 0.01);
      h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", 0, (faulty ? 420.0 : 600.0) * noise);
      h.Feed(t, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 0,
             (faulty && corroborated ? 0.35 : 0.5) * noise);
      if (also) also(t, m);
    }
  }
}

// A divergence, seen on two signals of a machine (power and tensor activity) or on one, is named
// once it has lasted the persistence time (60 s).
TEST(DetectorTest, PersistentDivergenceIsNamedAfterAMinute) {
  for (const bool corroborated : {true, false}) {
    SCOPED_TRACE(::testing::Message() << "corroborated " << corroborated);
    Harness h;
    SlowPowerJob(h, corroborated);
    const std::vector<Alert> alerts = h.Finish();
    ASSERT_EQ(alerts.size(), 1u);
    const Alert& a = alerts[0];
    EXPECT_EQ(a.machine, "m5");
    EXPECT_EQ(AlertKindName(a.kind), "divergence");
    EXPECT_GE(a.onset, 299);
    EXPECT_LE(a.onset, 303);
    EXPECT_GE(a.detected - 300, 60);
    EXPECT_LE(a.detected - 300, 70);
    ASSERT_FALSE(a.evidence.empty());
    EXPECT_EQ(a.evidence[0].signal, "gpu_power");
    EXPECT_LT(a.evidence[0].deviation, -4);
    EXPECT_NEAR(a.evidence[0].peer_median, 600, 20);
  }
}

// A host whose GEMMs stop using their tensor cores (TF32 or the tensor-core kernels turned off in
// one container: they run on the CUDA cores) is the job's straggler, busy all the time at its
// waiting peers' utilisation and power: its tensor activity alone shows it, far under theirs
// (docs/detect.md, the default signal map). Session 68 counted tensor activity only when higher,
// against DCGM's aliasing, and a reviewer showed this lost (this test). Machine 5 from 600 s
// at `share` of its peers' tensor activity, on one of its GPUs (its min), then on both.
TEST(DetectorTest, AHostWhoseGpusLoseTheirTensorCoresIsNamed) {
  for (const double share : {0.7, 0.5, 0.3, 0.1}) {
    for (const int lost : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << share << " " << lost);
      Harness h;
      Rng rng(68, 4);
      for (int t = 0; t < 1500; t += 15) {
        for (int m = 0; m < 16; ++m) {
          for (int g = 0; g < 2; ++g) {
            const double noise = 1 + rng.Normal(0, 0.01);
            const bool slow = m == 5 && g < lost && t >= 600;
            h.Feed(t + m * 0.5, m, "DCGM_FI_DEV_GPU_UTIL", g, 100);
            h.Feed(t + m * 0.5, m, "DCGM_FI_DEV_POWER_USAGE", g, 400 * noise);
            h.Feed(t + m * 0.5, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", g,
                   0.18 * (slow ? share : 1) * noise);
          }
        }
      }
      const std::vector<Alert> alerts = h.Finish();
      ASSERT_EQ(alerts.size(), 1u);
      EXPECT_EQ(alerts[0].machine, "m5");
      EXPECT_GE(alerts[0].detected, 600);
    }
  }
}

// The persistence time is a minute (benign events in the field, a GPU clock dip or a noisy
// neighbour, last up to one): a machine whose power and tensor activity fall by 30% for 55 s is
// not named, and one whose fall for good is named a minute after they did (plus the smoothing).
TEST(DetectorTest, AMinuteLongEventIsNotNamed) {
  for (const int lasting : {55, 300}) {
    SCOPED_TRACE(lasting);
    Harness h;
    Rng rng(13, 0);
    for (int t = 0; t < 700; ++t) {
      for (int m = 0; m < 16; ++m) {
        const bool slow = m == 5 && t >= 350 && t < 350 + lasting;
        const double noise = 1 + rng.Normal(0, 0.01);
        h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", 0, (slow ? 420.0 : 600.0) * noise);
        h.Feed(t, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 0, (slow ? 0.35 : 0.5) * noise);
      }
    }
    const std::vector<Alert> alerts = h.Finish();
    if (lasting < 60) {
      EXPECT_TRUE(alerts.empty());
      continue;
    }
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].machine, "m5");
    EXPECT_GE(alerts[0].detected - 350, 60);
    EXPECT_LE(alerts[0].detected - 350, 70);
  }
}

// A strong divergence accrues evidence faster (PeerOptions::strong_effect, 0.4 of the expected
// value): power at half its peers' (0.5 off) is named after 48 s, at a fifth (0.8 off, twice the
// strong effect) after half the persistence, 30 s, but an event at a fifth for 25 s is not; with
// strong_effect 0 each after the minute.
TEST(DetectorTest, AStrongDivergenceIsNamedSooner) {
  const struct {
    double share;  // of the peers' power
    int lasting;
    double strong_effect;
    double named_after;  // -1: never
  } cases[] = {{0.5, 300, 0.4, 48}, {0.2, 300, 0.4, 30}, {0.2, 25, 0.4, -1}, {0.2, 300, 0, 60}};
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.share << " for " << c.lasting << " s, strong effect " << c.strong_effect);
    DetectorOptions o;
    o.peer.strong_effect = c.strong_effect;
    Harness h(o);
    Rng rng(13, 0);
    for (int t = 0; t < 700; ++t) {
      for (int m = 0; m < 16; ++m) {
        const bool slow = m == 5 && t >= 350 && t < 350 + c.lasting;
        h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", 0,
               (slow ? c.share : 1.0) * 600 * (1 + rng.Normal(0, 0.01)));
      }
    }
    const std::vector<Alert> alerts = h.Finish();
    if (c.named_after < 0) {
      EXPECT_TRUE(alerts.empty());
      continue;
    }
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].machine, "m5");
    EXPECT_GE(alerts[0].detected - 350, c.named_after);
    EXPECT_LE(alerts[0].detected - 350, c.named_after + 5);
  }
}

// A value that is not finite is dropped: one NaN would otherwise stay in its machine's smoothed
// value for good and leave the peers' median without an order, so that no one is named again.
TEST(DetectorTest, AValueThatIsNotFiniteIsDropped) {
  Harness h;
  SlowPowerJob(h, /*corroborated=*/true, [&](int t, int m) {
    if (t == 100 && (m == 5 || m == 9)) h.FeedNotFinite(t + 0.5, m, "DCGM_FI_DEV_POWER_USAGE");
  });
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m5");
}

TEST(DetectorTest, SilentMachineAndComponentAreNamedAfterTheGrace) {
  Harness h;
  h.Run(8, 0, 100, "DCGM_FI_DEV_GPU_UTIL", [](int, int) { return 95.0; });
  // m3 stops reporting at 100; m6 loses gpu1 at 100.
  for (int t = 100; t < 160; ++t) {
    for (int m = 0; m < 8; ++m) {
      if (m == 3) continue;
      for (int g = 0; g < 2; ++g) {
        if (m == 6 && g == 1) continue;
        h.Feed(t, m, "DCGM_FI_DEV_GPU_UTIL", g, 95);
      }
    }
  }
  const std::vector<Alert> alerts = h.FinishByMachine();
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].machine, "m3");
  EXPECT_EQ(alerts[0].rule, "machine");
  EXPECT_EQ(alerts[0].onset, 99);
  EXPECT_NEAR(alerts[0].detected, 115, 2);
  EXPECT_EQ(alerts[1].machine, "m6");
  EXPECT_EQ(alerts[1].rule, "component");
  EXPECT_EQ(alerts[1].component, "gpu1");
  EXPECT_EQ(alerts[1].onset, 99);
  EXPECT_NEAR(alerts[1].detected, 115, 2);
}

// An exporter that stops takes every GPU of its machine along: one alert, not eight.
// Every GPU of m4 stops at 100 while its host reports: the exporter restarting for 30 s is no
// alert; a dead driver (for good) is one alert once the GPUs have been silent for 2 minutes.
TEST(DetectorTest, ComponentsThatStopTogetherAreOneAlert) {
  for (const bool for_good : {false, true}) {
    Harness h;
    for (int t = 0; t < 400; ++t) {
      for (int m = 0; m < 6; ++m) {
        h.Feed(t, m, "cpu_idle", 8, 0.5);  // the host still reports (as "gpu8")
        if (m == 4 && t >= 100 && (for_good || t < 130)) continue;
        for (int g = 0; g < 8; ++g) h.Feed(t, m, "DCGM_FI_DEV_GPU_UTIL", g, 90 + (t + g) % 7);
      }
    }
    const std::vector<Alert> alerts = h.Finish();
    if (!for_good) {
      EXPECT_TRUE(alerts.empty());
      continue;
    }
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].machine, "m4");
    EXPECT_EQ(alerts[0].rule, "component");
    EXPECT_EQ(alerts[0].component, "gpu0");
    EXPECT_EQ(alerts[0].evidence.size(), 8u);  // gpu0 to gpu7
    EXPECT_NEAR(alerts[0].detected - alerts[0].onset, 120, 2);
  }
}

// The same restart scraped every 5 s, back after 20 s: the first row of the scrape that comes
// back (gpu0's) is fed before the frames of the seconds before it are judged, while the other
// GPUs' rows of that scrape are still to come. That row is no sibling reporting without them
// (jobgen seed 5200: an 18 s dcgm-exporter restart named gpu2 missing).
TEST(DetectorTest, AnExporterBackFromARestartIsNoMissingComponent) {
  Harness h;
  for (int t = 0; t < 400; ++t) {
    for (int m = 0; m < 6; ++m) {
      if (t % 5 != 0 || (m == 0 && t > 100 && t < 120)) continue;
      for (int g = 0; g < 8; ++g) h.Feed(t + 0.1, m, "DCGM_FI_DEV_GPU_UTIL", g, 90 + (t + g) % 7);
    }
    for (int m = 0; m < 6; ++m) h.Feed(t + 0.6, m, "cpu_idle", 8, 0.5);  // the host, every 1 s
  }
  EXPECT_TRUE(h.Finish().empty());
}

// Each alert's machine, rule, component and detection time, for a failure's message.
std::string Listed(const std::vector<Alert>& alerts) {
  std::string out;
  for (const Alert& a : alerts) {
    out += fmt::format("{} {} {} at {}; ", a.machine, a.rule, a.component, a.detected);
  }
  return out;
}

// The same restart at a 1-s cadence, rows in the same order, where gpu0's rows say little about
// the others': gpu0 idles (its value held, every row a copy the normaliser marks as such), or
// gpu0 itself was silent for a minute earlier (its interval between scrapes read as up to a
// minute for a while after). Neither restart names a GPU; gpu0's own minute does, after the grace.
TEST(DetectorTest, AnExporterBackFromARestartIsNoMissingComponentWhateverItsFirstRow) {
  for (const int back : {-1, 20, 40, 80}) {  // -1: gpu0 idles; else the restart this long after
    SCOPED_TRACE(::testing::Message() << "restart " << back << " s after gpu0 came back");
    const int restart = back < 0 ? 130 : 160 + back;
    Harness h;
    for (int t = 0; t < 400; ++t) {
      for (int m = 0; m < 6; ++m) {
        if (m == 0 && t >= restart && t < restart + 20) continue;
        for (int g = 0; g < 8; ++g) {
          if (back >= 0 && m == 0 && g == 0 && t >= 100 && t < 160) continue;
          h.Feed(t + 0.1, m, "DCGM_FI_DEV_GPU_UTIL", g, back < 0 && g == 0 ? 0 : 90 + (t + g) % 7);
        }
      }
      for (int m = 0; m < 6; ++m) h.Feed(t + 0.6, m, "cpu_idle", 8, 0.5);  // the host
    }
    const std::vector<Alert> alerts = h.Finish();
    if (back < 0) {
      EXPECT_TRUE(alerts.empty()) << Listed(alerts);
      continue;
    }
    ASSERT_EQ(alerts.size(), 1u) << Listed(alerts);
    EXPECT_EQ(alerts[0].component, "gpu0");
    EXPECT_NEAR(alerts[0].detected, 115, 2);
  }
}

// A machine that reboots (every series silent for 3 minutes) is named missing after the grace,
// once; when it comes back, the first row of its first scrape (the host's) is not its GPUs' rows,
// and no GPU is named. Each scrape's first row is a held value (the host's idle share, steady):
// the GPUs' fresh rows at the same time still count as the machine's scrape (they did not, and
// with no interval learned the machine was named after 3 minutes, not 15 s).
TEST(DetectorTest, AMachineBackFromARebootIsNoMissingComponent) {
  Harness h;
  for (int t = 0; t < 500; ++t) {
    for (int m = 0; m < 6; ++m) {
      if (m == 2 && t >= 130 && t < 310) continue;
      h.Feed(t + 0.1, m, "cpu_idle", 8, 0.5);  // the host first
      for (int g = 0; g < 8; ++g) h.Feed(t + 0.1, m, "DCGM_FI_DEV_GPU_UTIL", g, 90 + (t + g) % 7);
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u) << Listed(alerts);
  EXPECT_EQ(alerts[0].machine, "m2");
  EXPECT_EQ(alerts[0].rule, "machine");
  EXPECT_NEAR(alerts[0].detected, 146, 2);
}

// Rows of eight machines, each with DCGM (eight GPUs, every 15 s, at t + 0.1 m) and a host's row
// (every `host` s, at t + 0.1 m + 7.5): `gpu_lost(t, m, g)` and `host_lost(t, m)` leave rows out.
// Fed in time order to a detector of options `o`; the alerts of machine `who` (every machine where
// it is negative), rule `rule` (every rule where it is empty).
std::vector<Alert> GpusAndHost(int end, int host,
                               const std::function<bool(int, int, int)>& gpu_lost,
                               const std::function<bool(int, int)>& host_lost, int who,
                               const std::string& rule, const DetectorOptions& o = {}) {
  Harness h(o);
  std::vector<std::tuple<double, int, int>> rows;  // time, host, GPU (-1: the host's row)
  for (int t = 0; t < end; t += 15) {
    for (int m = 0; m < 8; ++m) {
      const double at = t + 0.1 * m;
      for (int g = 0; g < 8; ++g) {
        if (!gpu_lost(t, m, g)) rows.emplace_back(at, m, g);
      }
      if (t % host == 0 && !host_lost(t, m)) rows.emplace_back(at + 7.5, m, -1);
    }
  }
  std::sort(rows.begin(), rows.end());
  for (const auto& [at, m, g] : rows) {
    const int k = static_cast<int>(at / 15);
    if (g < 0) {
      h.Feed(at, m, "cpu_idle", "", 0.5 + 0.01 * ((k / (host / 15) + m) % 5));
    } else {
      h.Feed(at, m, "DCGM_FI_DEV_POWER_USAGE", g, 600 + (k + m + g) % 7);
    }
  }
  std::vector<Alert> out;
  for (const Alert& a : h.FinishByMachine()) {
    if ((who < 0 || a.machine == "m" + std::to_string(who)) && (rule.empty() || a.rule == rule)) {
      out.push_back(a);
    }
  }
  return out;
}

// DCGM every 15 s for eight GPUs and the host half a scrape later, rows fed in time order. m2
// reboots, silent from 600 s: named missing, once. Its node exporter comes back first (787.7 s),
// DCGM 7.5 s later (795.2 s); its GPUs had been silent 203 s by then, and the first was named
// (a reviewer's case, session 61). A machine's components are judged from its return where it
// was named missing: none is named, unless its DCGM never comes back (the driver failed to load
// after the reboot), and then 2 minutes after the machine's return.
TEST(DetectorTest, AMachineBackFromARebootWithItsHostRowsFirstIsNoMissingComponent) {
  for (const bool driver_back : {true, false}) {
    SCOPED_TRACE(driver_back);
    const std::vector<Alert> alerts = GpusAndHost(
        1500, 15,
        [&](int t, int m, int) { return m == 2 && t >= 600 && (!driver_back || t < 795); },
        [](int t, int m) { return m == 2 && t >= 600 && t < 780; }, -1, "");
    ASSERT_EQ(alerts.size(), driver_back ? 1u : 2u) << Listed(alerts);
    EXPECT_EQ(alerts[0].rule, "machine");
    if (!driver_back) {
      EXPECT_EQ(alerts[1].rule, "component");
      EXPECT_NEAR(alerts[1].detected, 787.7 + 120, 3) << Listed(alerts);
    }
  }
}

TEST(DetectorTest, EveryoneSilentIsNotAFault) {
  Harness h;
  h.Run(8, 0, 100, "DCGM_FI_DEV_GPU_UTIL", [](int, int) { return 95.0; });
  h.Run(8, 300, 400, "DCGM_FI_DEV_GPU_UTIL", [](int, int) { return 95.0; });
  EXPECT_TRUE(h.Finish().empty());
}

TEST(DetectorTest, FastPathRules) {
  Harness h;
  for (int t = 0; t < 100; ++t) {
    for (int m = 0; m < 6; ++m) {
      // A stale XID 13 from before the job on m0 never alerts; XID 79 on m1 at 50 does.
      h.Feed(t, m, "DCGM_FI_DEV_XID_ERRORS", 0, m == 0 ? 13 : (m == 1 && t >= 50 ? 79 : 0));
      h.Feed(t, m, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 0, m == 2 && t >= 60 ? 1 : 0);
      h.Feed(t, m, "DCGM_FI_DEV_PCIE_LINK_WIDTH", 0, m == 3 && t >= 70 ? 8 : 16);
      h.Feed(t, m, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", 0, 16);
      // A NIC down from the start (unused port) is not news; m4's going down at 40 is.
      const std::string machine = "m" + std::to_string(m);
      h.Feed(t, m, "node_network_up", 5, m == 5 ? 0 : (m == 4 && t >= 40 ? 0 : 1));
    }
  }
  const std::vector<Alert> alerts = h.FinishByMachine();
  ASSERT_EQ(alerts.size(), 4u);
  EXPECT_EQ(alerts[0].machine, "m1");
  EXPECT_EQ(alerts[0].rule, "xid 79");
  EXPECT_EQ(alerts[0].detected, 50);
  EXPECT_EQ(alerts[0].component, "gpu0");
  EXPECT_EQ(alerts[1].rule, "ecc_uncorrectable");
  EXPECT_EQ(alerts[1].detected, 60);
  EXPECT_EQ(alerts[2].rule, "pcie_width");
  EXPECT_EQ(alerts[2].detected, 70);
  EXPECT_EQ(alerts[3].machine, "m4");
  EXPECT_EQ(alerts[3].rule, "link_down");
  EXPECT_EQ(AlertKindName(alerts[3].kind), "rule");
}

// Found by telemetry_csv_fuzz: an XID of 8.9e13 was converted to int (undefined behaviour). A
// value no XID has matches no fatal code and raises nothing.
TEST(DetectorTest, XidBeyondAnyCodeRaisesNothing) {
  Harness h;
  for (int t = 0; t < 20; ++t) {
    for (int m = 0; m < 4; ++m) {
      h.Feed(t, m, "DCGM_FI_DEV_XID_ERRORS", 0, m == 0 && t >= 10 ? 8.9e13 : (m == 1 ? -3e9 : 0));
    }
  }
  EXPECT_TRUE(h.Finish().empty());
}

TEST(DetectorTest, PcieGenerationMustStayLowForTheHold) {
  DetectorOptions o;
  o.gen_hold = 30;
  Harness h(o);
  for (int t = 0; t < 100; ++t) {
    for (int m = 0; m < 4; ++m) {
      // m0 downclocks for 20 s (idle power saving); m1 stays at gen 3 from t = 40.
      const double gen = (m == 0 && t >= 10 && t < 30) || (m == 1 && t >= 40) ? 3 : 5;
      h.Feed(t, m, "DCGM_FI_DEV_PCIE_LINK_GEN", 0, gen);
      h.Feed(t, m, "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", 0, 5);
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m1");
  EXPECT_EQ(alerts[0].rule, "pcie_gen");
  EXPECT_EQ(alerts[0].onset, 40);
  EXPECT_EQ(alerts[0].detected, 70);
}

TEST(DetectorTest, OneAlertPerCauseWhileItLasts) {
  Harness h;
  for (int t = 0; t < 100; ++t) {
    for (int m = 0; m < 4; ++m) {
      h.Feed(t, m, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 0, m == 0 ? t / 10 : 0);
    }
  }
  EXPECT_EQ(h.Finish().size(), 1u);
}

TEST(DetectorTest, StepTimeOfEachWorkerIsASignalLikeAnyOther) {
  Harness h;
  h.Run(32, 0, 600, "training_step_seconds",
        [](int m, int t) { return m == 17 && t >= 400 ? 4.4 : 3.4; });
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m17");
  EXPECT_EQ(alerts[0].evidence[0].signal, "step_time");
  // 29% slower, seen on its step time alone: named after the persistence time.
  EXPECT_LE(alerts[0].detected - 400, 70);
}

// Scrapes every `interval` seconds, each machine at its own phase (as Prometheus spreads its
// targets), optionally repeated on a one-second grid as a query_range answer repeats them.
// `value(machine, t)` gives the true value; NaN: the machine does not report.
template <typename Fn>
void Scrape(Harness& h, int machines, int from, int to, int interval, bool grid,
            const std::string& metric, Fn&& value, Rng& rng) {
  std::vector<double> last(static_cast<size_t>(machines), std::nan(""));
  for (int t = from; t < to; ++t) {
    for (int m = 0; m < machines; ++m) {
      const bool scraped = (t + m * 7) % interval == 0;
      const double v = value(m, t);
      if (std::isnan(v)) {
        last[static_cast<size_t>(m)] = std::nan("");
        continue;
      }
      if (scraped) last[static_cast<size_t>(m)] = v * (1 + rng.Normal(0, 0.01));
      if ((scraped || grid) && !std::isnan(last[static_cast<size_t>(m)])) {
        h.Feed(t, m, metric, 0, last[static_cast<size_t>(m)]);
      }
    }
  }
}

// The issue's query_range case: one odd scrape repeated 15 times by the grid is one sample,
// not 15; a fault that lasts is named after about the persistence time whatever the cadence.
TEST(DetectorTest, AHeldValueIsNoNewEvidenceAndCadenceDoesNotMatter) {
  for (const int interval : {1, 5, 15, 30}) {
    for (const bool grid : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "interval " << interval << " grid " << grid);
      Harness h;
      Rng rng(11, 0);
      // m2 has one odd scrape at about 300 s; m5 draws 30% less power from 600 s on.
      Scrape(
          h, 16, 0, 900, interval, grid, "DCGM_FI_DEV_POWER_USAGE",
          [&](int m, int t) {
            if (m == 2 && t >= 300 && t < 300 + interval) return 300.0;
            return m == 5 && t >= 600 ? 420.0 : 600.0;
          },
          rng);
      const std::vector<Alert> alerts = h.Finish();
      ASSERT_EQ(alerts.size(), 1u);
      EXPECT_EQ(alerts[0].machine, "m5");
      EXPECT_GE(alerts[0].detected - 600, 60);
      // Plus up to three intervals, and the smoothing's 3 s to 10% off.
      EXPECT_LE(alerts[0].detected - 600, 60 + 3 * interval + 4);
    }
  }
}

// A machine silent while its staggered peers report is named, after three of its intervals.
TEST(DetectorTest, SilenceIsJudgedAgainstEachMachinesOwnInterval) {
  for (const int interval : {1, 15, 30}) {
    for (const bool grid : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "interval " << interval << " grid " << grid);
      Harness h;
      Rng rng(3, 0);
      Scrape(
          h, 12, 0, 600, interval, grid, "DCGM_FI_DEV_GPU_UTIL",
          [](int m, int t) { return m == 4 && t >= 400 ? std::nan("") : 95.0; }, rng);
      const std::vector<Alert> alerts = h.Finish();
      ASSERT_EQ(alerts.size(), 1u);
      EXPECT_EQ(alerts[0].machine, "m4");
      EXPECT_EQ(AlertKindName(alerts[0].kind), "missing");
      EXPECT_LE(alerts[0].detected - 400, std::max(15, 3 * interval) + 2);
    }
  }
}

// A machine's exporters scrape it at their own phases (node-exporter 0.6 s after DCGM, both every
// 30 s): its interval is its series' cadence, not the gap between two exporters, so it is not
// named silent between scrapes, from the start on.
TEST(DetectorTest, TwoExportersOfOneMachineAreNotOneFastSeries) {
  Harness h;
  for (int t = 0; t < 600; t += 30) {
    for (int m = 0; m < 8; ++m) {
      h.Feed(t + 0.1 * m, m, "DCGM_FI_DEV_POWER_USAGE", 0, 600 + (t + m) % 7);
      h.Feed(t + 0.1 * m + 0.6, m, "cpu_idle", 8, 0.5 + 0.01 * ((t + m) % 5));
    }
  }
  EXPECT_TRUE(h.Finish().empty());
}

// Two exporters every 15 s, half a scrape apart: the machine reports every 7.5 s, but its own
// interval is its series' 15 s. One missed scrape of each (30 s without a sample) is no silence,
// nor is it where the trainer's step time, every 3 s, stops as the job waits; the machine going
// down is, after three of its series' intervals.
TEST(DetectorTest, ExportersHalfAScrapeApartAreNoFasterSeries) {
  Harness h;
  for (int half = 0; half < 1800; ++half) {  // half seconds
    const int t = half / 2;
    const int scrape = half / 30;
    for (int m = 0; m < 8; ++m) {
      const bool down = m == 3 && t >= 700;
      const bool waits = t >= 420 && t < 480;
      if (half % 6 == 0 && !down && !waits) {
        h.Feed(t + 0.2 * m, m, "training_step_seconds", 0, 3 + 0.01 * ((half / 6 + m) % 7));
      }
      // Machine 5 misses DCGM's scrape at 450 s and node-exporter's at 442.5 and 457.5 s.
      if (half % 30 == 0 && !down && !(m == 5 && scrape == 30)) {
        h.Feed(15 * scrape + 0.1 * m, m, "DCGM_FI_DEV_POWER_USAGE", 0, 600 + (scrape + m) % 7);
      }
      if (half % 30 == 15 && !down && !(m == 5 && (scrape == 29 || scrape == 30))) {
        h.Feed(15 * scrape + 7.5 + 0.1 * m, m, "cpu_idle", 8, 0.5 + 0.01 * ((scrape + m) % 5));
      }
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m3");
  EXPECT_EQ(AlertKindName(alerts[0].kind), "missing");
  EXPECT_GE(alerts[0].detected - alerts[0].onset, 45);
  EXPECT_LE(alerts[0].detected - alerts[0].onset, 45 + 2);
}

// Machine m's scrape at t (a multiple of 15 s): DCGM's three GPU series where `dcgm`, and every
// 60 s the node exporter's two, half a DCGM scrape later.
void FeedDcgmAndNodeExporter(Harness& h, int t, int m, bool dcgm) {
  const double at = t + 0.1 * m;
  if (dcgm) {
    h.Feed(at, m, "DCGM_FI_DEV_POWER_USAGE", 0, 600 + (t / 15 + m) % 7);
    h.Feed(at, m, "DCGM_FI_DEV_GPU_UTIL", 0, 90 + (t / 15 + m) % 5);
    h.Feed(at, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 0, 0.5 + 0.01 * ((t / 15 + m) % 3));
  }
  if (t % 60 == 0) {
    h.Feed(at + 7.5, m, "cpu_idle", "", 0.5 + 0.01 * ((t / 60 + m) % 5));
    h.Feed(at + 7.5, m, "node_network_receive_bytes_total", "eth0", 1e9 * (t + 7.5));
  }
}

// DCGM every 15 s, the node exporter every 60 s. m3's DCGM exporter dies for good at 600 s: its
// GPUs are named silent. The median of the machine's series' intervals kept the dead exporter's
// 15 s, and named the machine missing at each gap of its node exporter, once a minute (a
// reviewer's case, session 59: 19 alerts in half an hour). A series is gone once the machine has
// reported after it was three of its intervals overdue: m3 is named missing once, at 652.5 s,
// before its node exporter's next sample says it still reports (a surviving exporter slower than
// three of the dead one's intervals; within them, never), and not again. m5, down at 1,200 s with
// both exporters, is named three DCGM intervals after its last sample.
TEST(DetectorTest, AnExporterDeadForGoodLeavesTheMachinesInterval) {
  Harness h;
  for (int t = 0; t < 1800; t += 15) {
    for (int m = 0; m < 8; ++m) {
      if (m == 5 && t >= 1200) continue;  // down
      FeedDcgmAndNodeExporter(h, t, m, !(m == 3 && t >= 600));
    }
  }
  const std::vector<Alert> alerts = h.FinishByMachine();
  ASSERT_EQ(alerts.size(), 3u) << Listed(alerts);
  EXPECT_EQ(alerts[0].machine, "m3");
  EXPECT_EQ(alerts[1].machine, "m3");
  EXPECT_EQ(alerts[0].rule == "component" ? alerts[1].rule : alerts[0].rule, "machine");
  EXPECT_EQ(alerts[2].machine, "m5");
  EXPECT_EQ(alerts[2].rule, "machine");
  EXPECT_LE(alerts[2].detected - alerts[2].onset, 3 * 15 + 2);
}

// DCGM every 15 s, the node exporter every 60 s. m3's DCGM exporter restarts, silent from 600 s
// to 720 s (its GPUs are named silent), and m3 goes down at `down`: 900 s, or one or two 15-s
// gaps after the exporter came back. The two minutes had become its DCGM series' interval,
// falling 5% a sample, and m3 was named missing after about four minutes (a reviewer's case,
// session 59); where three gaps of the old cadence were needed to restore the interval, it was
// named about 6 minutes late when down at 750 or 765 s (a reviewer's case, session 60). A steady
// series' long gap is silence, and the next gap restores its interval: m3 is named three DCGM
// intervals after its last sample. (In the restart, m3 is named missing before its node
// exporter's next sample, as in AnExporterDeadForGoodLeavesTheMachinesInterval.) m5's DCGM
// exporter moves to a 60-s cadence at 600 s: it is named missing once, before its first slow
// sample, and not again.
TEST(DetectorTest, AnExportersRestartIsNoNewCadence) {
  for (const int down : {750, 765, 900}) {
    SCOPED_TRACE(down);
    Harness h;
    for (int t = 0; t < 1500; t += 15) {
      for (int m = 0; m < 8; ++m) {
        if (m == 3 && t >= down) continue;
        const bool restarting = m == 3 && t >= 600 && t < 720;
        const bool slower = m == 5 && t >= 600 && t % 60 != 0;
        FeedDcgmAndNodeExporter(h, t, m, !restarting && !slower);
      }
    }
    std::vector<Alert> m3, slower;
    for (const Alert& a : h.FinishByMachine()) {
      if (a.machine == "m3" && a.rule == "machine" && a.detected >= down) m3.push_back(a);
      if (a.machine == "m5" && a.rule == "machine") slower.push_back(a);
    }
    ASSERT_EQ(m3.size(), 1u) << Listed(m3);
    EXPECT_LE(m3[0].detected - m3[0].onset, 3 * 15 + 2) << Listed(m3);
    EXPECT_EQ(slower.size(), 1u) << Listed(slower);
  }
}

// DCGM every 15 s for eight GPUs, the node exporter every 60 s. m3's DCGM exporter restarts,
// silent from 600 s to 720 s, and its gpu3 stops reporting at `lost` (one or two 15-s gaps after
// the exporter came back, or 900 s) while its other GPUs go on. A component's interval followed
// its gaps alone: the two minutes became gpu3's, falling 5% a scrape, and gpu3 was named 5-6
// minutes after its last sample. A component's interval follows the same rule as a series'
// (AnExportersRestartIsNoNewCadence): gpu3 is named three DCGM intervals after its last sample.
TEST(DetectorTest, AnExportersRestartIsNoNewCadenceForItsComponents) {
  for (const int lost : {750, 765, 900}) {
    SCOPED_TRACE(lost);
    Harness h;
    for (int t = 0; t < 1500; t += 15) {
      for (int m = 0; m < 8; ++m) {
        const double at = t + 0.1 * m;
        for (int g = 0; g < 8; ++g) {
          if (m == 3 && ((t >= 600 && t < 720) || (g == 3 && t >= lost))) continue;
          h.Feed(at, m, "DCGM_FI_DEV_POWER_USAGE", g, 600 + (t / 15 + m + g) % 7);
        }
        if (t % 60 == 0) h.Feed(at + 7.5, m, "cpu_idle", "", 0.5 + 0.01 * ((t / 60 + m) % 5));
      }
    }
    std::vector<Alert> gpu3;
    for (const Alert& a : h.FinishByMachine()) {
      if (a.machine == "m3" && a.rule == "component" && a.detected >= lost) gpu3.push_back(a);
    }
    ASSERT_EQ(gpu3.size(), 1u) << Listed(gpu3);
    EXPECT_EQ(gpu3[0].component, "gpu3");
    EXPECT_LE(gpu3[0].detected - gpu3[0].onset, 3 * 15 + 2) << Listed(gpu3);
  }
}

// Every host scraped by two Prometheus replicas at a 60-s cadence, their samples merged (not
// deduplicated): each host's two scrapes 10 s apart, the hosts at their own phases. A series'
// gaps are 10 s and 50 s, and nobody is down. Where each 10-s gap restored the 10-s interval,
// every host was named missing every minute (228 alerts in 30 minutes; a reviewer's case,
// session 60). None is.
TEST(DetectorTest, TwoScrapesOfASeriesCloseTogetherAreNoSilence) {
  Harness h;
  std::vector<std::tuple<double, int, int>> scrapes;  // time, host, sample number
  for (int t = 0; t < 1800; t += 60) {
    for (int m = 0; m < 8; ++m) {
      scrapes.emplace_back(t + 7.3 * m, m, t / 30);
      scrapes.emplace_back(t + 7.3 * m + 10, m, t / 30 + 1);
    }
  }
  std::sort(scrapes.begin(), scrapes.end());
  for (const auto& [at, m, k] : scrapes) {
    h.Feed(at, m, "DCGM_FI_DEV_POWER_USAGE", 0, 600 + (k + m) % 7);
    h.Feed(at, m, "DCGM_FI_DEV_GPU_UTIL", 0, 90 + (k + m) % 5);
    h.Feed(at, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 0, 0.5 + 0.01 * ((k + m) % 3));
  }
  const std::vector<Alert> alerts = h.Finish();
  EXPECT_TRUE(alerts.empty()) << alerts.size() << " alerts: " << Listed(alerts);
}

// DCGM every 15 s, the node exporter every 60 s. From 600 s m5's DCGM exporter answers the first
// `answered` of every `period` scrapes: it times out on most (2 of 6: gaps of 15 and 75 s, again
// and again) or crash-loops (4 of 8 or 10: gaps of 15, 15, 15 and a long one); its node exporter
// still answers. m8, scraped every 2 s, keeps frames coming between scrapes (as a large
// cluster's staggered scrapes do). Where a gap or three of the old cadence after a long gap
// restored the 15-s interval, m5 was named missing at every long gap (13, 10 and 8 alerts in 20
// minutes; reviewers' cases, session 60). Only a steady series' first long gap is silence: m5 is
// named at its first long gap and at its second, which shows the gaps recur, and not again.
TEST(DetectorTest, AnExporterThatMissesScrapesAgainAndAgainIsNamedAtMostTwice) {
  for (const auto& [answered, period] : {std::pair{2, 6}, std::pair{4, 8}, std::pair{4, 10}}) {
    SCOPED_TRACE(::testing::Message() << answered << " of " << period);
    Harness h;
    for (int t = 0; t < 1800; t += 15) {
      for (int m = 0; m < 8; ++m) {
        const bool lost = m == 5 && t >= 600 && (t / 15 - 40) % period >= answered;
        FeedDcgmAndNodeExporter(h, t, m, !lost);
      }
      for (int s = 1; s < 15; s += 2) h.Feed(t + s, 8, "cpu_idle", "", 0.5 + 0.01 * (s % 5));
    }
    std::vector<Alert> m5;
    for (const Alert& a : h.FinishByMachine()) {
      if (a.machine == "m5" && a.rule == "machine") m5.push_back(a);
    }
    EXPECT_LE(m5.size(), 2u) << Listed(m5);
  }
}

// DCGM every 15 s for eight GPUs, each GPU's rows stamped 0.01 s after the one before (a
// collector that stamps each GPU's reading), the host every 15 s half a scrape later, rows fed in
// time order. From 600 s, m3's DCGM exporter restarts every 7 minutes and is silent for a minute
// each time (75 s between samples): shorter than the 2 minutes an exporter is given. A GPU stamped
// later in the same scrape counted as a sibling that reported after the others' last rows, so the
// first restart was named after 45 s; where a component's interval followed a series' rule,
// every restart was (9 alerts in an hour; a reviewer's case, session 61). A sibling counts only
// where it reported more than half an interval after the component's last row (a later scrape):
// none is named.
TEST(DetectorTest, AnExportersShortRestartsAreNotNamedWhateverTheRowsStamps) {
  Harness h;
  std::vector<std::tuple<double, int, int>> rows;  // time, host, GPU (-1: the host's row)
  for (int t = 0; t < 4200; t += 15) {
    for (int m = 0; m < 8; ++m) {
      const double at = t + 0.1 * m;
      const bool restarting = m == 3 && t >= 600 && (t - 600) % 420 < 60;
      if (!restarting) {
        for (int g = 0; g < 8; ++g) rows.emplace_back(at + 0.01 * g, m, g);
      }
      rows.emplace_back(at + 7.5, m, -1);
    }
  }
  std::sort(rows.begin(), rows.end());
  for (const auto& [at, m, g] : rows) {
    const int k = static_cast<int>(at / 15);
    if (g < 0) {
      h.Feed(at, m, "cpu_idle", "", 0.5 + 0.01 * ((k + m) % 5));
    } else {
      h.Feed(at, m, "DCGM_FI_DEV_POWER_USAGE", g, 600 + (k + m + g) % 7);
    }
  }
  std::vector<Alert> m3;
  for (const Alert& a : h.FinishByMachine()) {
    if (a.machine == "m3") m3.push_back(a);
  }
  EXPECT_TRUE(m3.empty()) << Listed(m3);
}

// DCGM every 15 s for eight GPUs, the node exporter every 60 s, rows fed in time order. From
// 600 s, m5's DCGM exporter answers 21 scrapes (5 minutes) and then is silent for 10 (2 minutes
// and 45 s between samples; an exporter OOM-killed and restarted after its back-off), again and
// again; or, from 2,500 s, it does not come back (the driver dead). Its GPUs' silences are over
// the 2 minutes an exporter is given, and the first is named. At 3fdab40 the long gap became the
// GPUs' interval and no later one was named; where a component's interval followed a series'
// rule, every 5-minute stretch was a steady cadence and the GPUs were named at every silence (6
// alerts in an hour; a reviewer's case, session 61). A silence of the exporter that begins less
// than `--rearm` after it came back from one it was named for is the same flapping: the GPUs are
// named once, and, where the exporter is dead for good, again once silent half as long again as
// the longest silence it came back from. (The machine, named by its series' rule at each silence,
// is not counted here.)
TEST(DetectorTest, AGpuExporterDownForMinutesAgainAndAgainHasItsGpusNamedOnce) {
  for (const bool dies : {false, true}) {
    SCOPED_TRACE(dies);
    const std::vector<Alert> gpus = GpusAndHost(
        3600, 60,
        [&](int t, int m, int) {
          return m == 5 && t >= 600 && ((t / 15 - 40) % 31 >= 21 || (dies && t >= 2500));
        },
        [](int, int) { return false; }, 5, "component");
    ASSERT_EQ(gpus.size(), dies ? 2u : 1u) << Listed(gpus);
    EXPECT_NEAR(gpus[0].detected - gpus[0].onset, 120, 2) << Listed(gpus);
    if (dies) {
      EXPECT_GT(gpus[1].onset, 2400) << Listed(gpus);
      EXPECT_GE(gpus[1].detected - gpus[1].onset, 1.5 * 165) << Listed(gpus);
      EXPECT_LE(gpus[1].detected - gpus[1].onset, 1.5 * 165 + 15) << Listed(gpus);
    }
  }
}

// A reviewer's cases of a component's silence (session 61): named later, more often or wrongly
// than at 3fdab40 by a first version of the rules of flapping and of a reboot, or at both.

// DCGM every 15 s for eight GPUs, the host every 15 s half a scrape later. m5's DCGM exporter is
// down for 30 minutes (600 s to 2,400 s: maintenance, a hung hostengine), named after 2 minutes;
// it is back for 9.5 minutes and then the driver dies for good (no row from 2,970 s). 3fdab40
// names the GPUs 308 s after their last row (a component's interval, 600 s after the outage,
// had fallen back to about 100 s); HEAD takes the dead driver for the same crash loop as the
// outage (silent again less than --rearm after it came back) and names it only once silent 1.5
// times the outage: 2,723 s (45 minutes) after its last row, a wait that grew with the outage.
// The wait is at most kMaxFlappingWait (5 minutes).
TEST(DetectorTest, ADriverDeadSoonAfterALongExporterOutageIsNamedWithinMinutes) {
  const std::vector<Alert> gpus = GpusAndHost(
      6600, 15, [](int t, int m, int) { return m == 5 && ((t >= 600 && t < 2400) || t >= 2970); },
      [](int, int) { return false; }, 5, "component");
  ASSERT_EQ(gpus.size(), 2u) << Listed(gpus);
  EXPECT_NEAR(gpus[0].detected - gpus[0].onset, 120, 2) << Listed(gpus);
  EXPECT_GT(gpus[1].onset, 2900) << Listed(gpus);
  EXPECT_LE(gpus[1].detected - gpus[1].onset, 360) << Listed(gpus);
}

// DCGM every 15 s for eight GPUs, the host every 15 s half a scrape later. m2 reboots (silent
// from 600 s to 780 s) and its GPUs come back late: `late` (DCGM 3 minutes after the host,
// 960 s: the driver and the fabric manager slow to start) or, with `!late`, its DCGM's last row
// one scrape before the host's (570 s: a scrape lost at shutdown) and the reboot 10 minutes long.
// Either way its GPUs are named after the first reboot, at both commits. m2 reboots again 9
// minutes after its GPUs came back, and this time the driver does not load: no GPU row after it.
// 3fdab40 names the GPUs 23 s (`late`) or 135 s after the machine's second return; the first
// version took the second silence for the first one's flapping and waited 1.5 times the first
// silence (GPU rows missing 375 s or 645 s): 563 s and 750 s after the return. A reboot begins
// anew (no flapping), and the GPUs are named 2 minutes after the return. (With `!late` the GPUs,
// back 15 s after the host, are not named after the first reboot, as they were at 3fdab40.)
TEST(DetectorTest, AMachineRebootedTwiceWhoseGpusDoNotComeBackTheSecondTimeIsNamedSoon) {
  for (const bool late : {true, false}) {
    SCOPED_TRACE(late);
    // The first reboot: host rows missing from `down` to `up`, GPU rows from `gpus_down` to
    // `gpus_up`; the second from `again` for 180 s, GPU rows from `again` on (or a scrape before).
    const int down = 600, up = late ? 780 : 1200, gpus_down = late ? 600 : 585,
              gpus_up = late ? 960 : 1215, again = gpus_up + 540;
    const std::vector<Alert> gpus = GpusAndHost(
        4800, 15,
        [&](int t, int m, int) {
          return m == 2 && ((t >= gpus_down && t < gpus_up) || t >= again - (late ? 0 : 15));
        },
        [&](int t, int m) {
          return m == 2 && ((t >= down && t < up) || (t >= again && t < again + 180));
        },
        2, "component");
    // The first reboot's GPUs named (`late`: back 3 minutes after the host) or not (15 s).
    ASSERT_EQ(gpus.size(), late ? 2u : 1u) << Listed(gpus);
    const double second_return = again + 180 + 0.2 + 7.5;
    EXPECT_GT(gpus.back().onset, again - 30) << Listed(gpus);
    EXPECT_LE(gpus.back().detected, second_return + 180) << Listed(gpus);
  }
}

// DCGM every 15 s for eight GPUs, the host every 15 s half a scrape later. From 600 s m3's gpu3
// is missing from its exporter's scrapes for 75 s every 7 minutes (an intermittent fault: DCGM's
// reads of that GPU time out) while its seven siblings report. 3fdab40 names gpu3 once (its
// interval, raised by the first 90-s gap, made the later ones no silence); HEAD restores gpu3's
// 15-s interval after each gap (a8b9f3f: each gap follows more than 20 steady ones), and the
// first rule of flapping covered only an exporter silent as a whole: gpu3 was named at every gap,
// 9 times in an hour. A component silent alone flaps as its exporter does: named once.
TEST(DetectorTest, AGpuMissingFromItsExporterAgainAndAgainIsNamedAtMostTwice) {
  const std::vector<Alert> gpu3 = GpusAndHost(
      4200, 15,
      [](int t, int m, int g) { return m == 3 && g == 3 && t >= 600 && (t - 600) % 420 < 75; },
      [](int, int) { return false; }, 3, "component");
  ASSERT_GE(gpu3.size(), 1u);
  EXPECT_EQ(gpu3[0].component, "gpu3");
  EXPECT_LE(gpu3.size(), 2u) << Listed(gpu3);
}

// DCGM every 15 s for eight GPUs; the host (the node exporter) every `host` s: 60 s, missing the
// scrape at 660 s (a timeout, or the exporter restarted with DCGM's), or 120 s. m5's DCGM
// exporter dies for good at 615 s (its last row 600.5 s, after the host's at 608 s). The machine is
// named missing for the silence of its faster exporter (45 s), and its next host row, 120 s
// after its last, makes it a machine "back from a reboot" (f7869d3: silent as a whole at least
// kExporterGrace, from no later than the GPUs' next row): f7869d3 judged the GPUs from the
// host's return and named them 248 s after their last row; 3fdab40 names them 128 s after, at the
// host's return. A reboot is now a silence of the machine longer than twice its slowest series'
// interval too (a missed scrape of each is none).
TEST(DetectorTest, ADeadDriverIsNamedAfterTheGraceWhenOnlyItsExporterStopped) {
  for (const int host : {60, 120}) {
    SCOPED_TRACE(host);
    const std::vector<Alert> gpus = GpusAndHost(
        1800, host, [](int t, int m, int) { return m == 5 && t >= 615; },
        [](int t, int m) { return m == 5 && t == 660; }, 5, "component");
    ASSERT_EQ(gpus.size(), 1u) << Listed(gpus);
    EXPECT_EQ(gpus[0].evidence.size(), 8u) << Listed(gpus);
    EXPECT_LE(gpus[0].detected - gpus[0].onset, 150) << Listed(gpus);
  }
}

// DCGM every 15 s for eight GPUs, the host every 15 s half a scrape later. m3's gpu3 is missing
// alone for 150 s from 600 s (named while its siblings report) and comes back; 9.5 minutes later
// the driver dies (no GPU row from 1,320 s). 3fdab40 names the eight GPUs in one alert, 120 s
// after their last row; the first rule of flapping counted gpu3's own silence as one of its
// exporter's, took the driver's death for the same flapping for gpu3 alone, and named the other
// seven at 120 s and gpu3 in an alert of its own 2 minutes later. An episode of flapping is of
// one kind of silence, alone or with the whole exporter.
TEST(DetectorTest, ADeadDriverIsOneAlertAfterOneOfItsGpusWasMissingAlone) {
  const std::vector<Alert> gpus = GpusAndHost(
      2400, 15,
      [](int t, int m, int g) { return m == 3 && ((g == 3 && t >= 600 && t < 750) || t >= 1320); },
      [](int, int) { return false; }, 3, "component");
  ASSERT_EQ(gpus.size(), 2u) << Listed(gpus);
  EXPECT_EQ(gpus[0].component, "gpu3");
  EXPECT_EQ(gpus[1].evidence.size(), 8u) << Listed(gpus);
  EXPECT_NEAR(gpus[1].detected - gpus[1].onset, 120, 2) << Listed(gpus);
}

// The reviewer's case of f7869d3 with the node exporter's row really first: m2 reboots (no row
// from 600 s), its host's row is back at 787.7 s and DCGM's at 795.2 s (in
// AMachineBackFromARebootWithItsHostRowsFirstIsNoMissingComponent DCGM's rows come back first,
// at 780.2 s, and its `driver_back` case passes at 3fdab40 too). 3fdab40 named the GPUs at 788
// s, and so did f7869d3 where DCGM's last row before the reboot is one scrape before the host's
// (570.2 s: a scrape lost while the machine shut down): the machine's silence began more than a
// GPU interval after the GPUs' last row, "no reboot". A component silent since no earlier than an
// exporter's grace before the machine went down is judged from its return: none is named.
TEST(DetectorTest, AMachineBackFromARebootWhoseDcgmStoppedAScrapeEarlyIsNoMissingComponent) {
  for (const int gpus_down : {600, 585}) {
    SCOPED_TRACE(gpus_down);
    const std::vector<Alert> gpus = GpusAndHost(
        1500, 15, [&](int t, int m, int) { return m == 2 && t >= gpus_down && t < 795; },
        [](int t, int m) { return m == 2 && t >= 600 && t < 780; }, 2, "component");
    EXPECT_TRUE(gpus.empty()) << Listed(gpus);
  }
}

// The same reboot read from Prometheus' query_range at a 1-s step (every series at each second,
// its latest scrape's value, until a failed scrape's staleness marker): DCGM scraped every 15 s
// at 0.1 m, the node exporter every 60 s at 0.1 m + 7.5. m2 is down from 640 s (DCGM's failed
// scrape at 645.2 s ends its GPUs' rows, the host's at 667.7 s its own) and back at 847.7 s
// (host) and 855.2 s (DCGM). The host's held copies run 22 s past the GPUs' last row, more than
// a GPU interval: "no reboot" at f7869d3, and the GPUs were named at 848 s, 7 s before they
// report (3fdab40 as well). None is named.
TEST(DetectorTest, AMachineBackFromARebootOnAOneSecondGridIsNoMissingComponent) {
  Harness h;
  struct Scrape {
    double time;
    int m, g;  // g: -1 for the host's
    bool ok;
  };
  std::vector<Scrape> scrapes;
  for (int m = 0; m < 8; ++m) {
    for (int t = 0; t < 1500; t += 15) {
      const double at = t + 0.1 * m;
      for (int g = 0; g < 8; ++g) scrapes.push_back({at, m, g, !(m == 2 && at >= 640 && at < 855)});
      if (t % 60 == 0) scrapes.push_back({at + 7.5, m, -1, !(m == 2 && at >= 640 && at < 840)});
    }
  }
  std::sort(scrapes.begin(), scrapes.end(),
            [](const Scrape& a, const Scrape& b) { return a.time < b.time; });
  std::vector<double> latest(8 * 9, -1);  // per machine and series: the latest good scrape
  size_t next = 0;
  for (int s = 0; s < 1500; ++s) {
    while (next < scrapes.size() && scrapes[next].time <= s) {
      const Scrape& x = scrapes[next++];
      latest[x.m * 9 + x.g + 1] = x.ok ? x.time : -1;
    }
    for (int m = 0; m < 8; ++m) {
      for (int g = -1; g < 8; ++g) {
        const double at = latest[m * 9 + g + 1];
        if (at < 0) continue;
        const int k = static_cast<int>(at / 15);
        if (g < 0) {
          h.Feed(s, m, "cpu_idle", "", 0.5 + 0.01 * ((k / 4 + m) % 5));
        } else {
          h.Feed(s, m, "DCGM_FI_DEV_POWER_USAGE", g, 600 + (k + m + g) % 7);
        }
      }
    }
  }
  std::vector<Alert> gpus;
  for (const Alert& a : h.FinishByMachine()) {
    if (a.machine == "m2" && a.rule == "component") gpus.push_back(a);
  }
  EXPECT_TRUE(gpus.empty()) << Listed(gpus);
}

// DCGM every 15 s for eight GPUs, the host every 15 s half a scrape later. m5 reboots (every row
// missing from 300 s to 600 s: named missing as a machine, back after 5 minutes, a reboot), and
// 15 minutes later, from 1,500 s, its DCGM exporter crash-loops: 21 scrapes (5 minutes) answered,
// then 10 lost (2 minutes 45 s between rows), again and again for an hour. As in
// AGpuExporterDownForMinutesAgainAndAgainHasItsGpusNamedOnce, the GPUs are named at most twice,
// however long ago the machine rebooted (a reviewer's case, session 61: every silence after a
// reboot was taken for one across it, which begins anew, and the GPUs were named 8 times).
TEST(DetectorTest, AGpuExporterCrashLoopingLongAfterARebootHasItsGpusNamedOnce) {
  const std::vector<Alert> gpus = GpusAndHost(
      5400, 15,
      [](int t, int m, int) {
        return m == 5 && ((t >= 300 && t < 600) || (t >= 1500 && (t / 15 - 100) % 31 >= 21));
      },
      [](int t, int m) { return m == 5 && t >= 300 && t < 600; }, 5, "component");
  ASSERT_GE(gpus.size(), 1u);
  EXPECT_LE(gpus.size(), 2u) << Listed(gpus);
}

// DCGM every 15 s for eight GPUs, the host every 15 s half a scrape later. m3 reboots (every row
// missing from 300 s to 600 s), and from 2,400 s its gpu3 is missing alone from its exporter's
// scrapes for 75 s every 7 minutes (as in
// AGpuMissingFromItsExporterAgainAndAgainIsNamedAtMostTwice); or m3's only exporter is DCGM (no
// host rows), down for 3 minutes (300 s to 480 s, the machine named missing; a hung hostengine
// restarted), and gpu3 flaps so from 1,500 s: every outage of such a machine is a reboot. gpu3 is
// named at most twice, however long ago the machine rebooted (a reviewer's case, session 61: 9 and
// 10 times, every silence after a reboot taken for one across it).
TEST(DetectorTest, AGpuMissingAloneAgainAndAgainLongAfterARebootIsNamedAtMostTwice) {
  for (const bool dcgm_only : {false, true}) {
    SCOPED_TRACE(dcgm_only);
    const int up = dcgm_only ? 480 : 600, flaps = dcgm_only ? 1500 : 2400;
    const std::vector<Alert> gpu3 = GpusAndHost(
        dcgm_only ? 5400 : 6000, 15,
        [&](int t, int m, int g) {
          return m == 3 &&
                 ((t >= 300 && t < up) || (g == 3 && t >= flaps && (t - flaps) % 420 < 75));
        },
        [&](int t, int m) { return dcgm_only || (m == 3 && t >= 300 && t < up); }, 3, "component");
    ASSERT_GE(gpu3.size(), 1u);
    EXPECT_EQ(gpu3.back().component, "gpu3");
    EXPECT_LE(gpu3.size(), 2u) << Listed(gpu3);
  }
}

// DCGM every 15 s for eight GPUs, the host every 15 s half a scrape later. m3's gpu3 is missing
// alone for 4 minutes (600 s to 840 s: named) and comes back; `after` seconds later it dies for
// good (no row of it again) while its seven siblings report. With the default --rearm (600 s,
// `after` 570 s) and with --rearm 3600 (`after` 1,800 s) the dead GPU is named within 3 minutes
// of its last row: a flapping GPU alone waits at most an exporter's grace (it waited 5 minutes, as
// an exporter does; 3fdab40 named it after 158 s and 53 s).
TEST(DetectorTest, AGpuDeadAloneAfterItWasMissingAloneIsNamedWithinMinutes) {
  for (const auto& [rearm, after] : {std::pair{600.0, 570}, std::pair{3600.0, 1800}}) {
    SCOPED_TRACE(rearm);
    DetectorOptions o;
    o.rearm = rearm;
    const int dies = 840 + after;
    const std::vector<Alert> gpu3 = GpusAndHost(
        dies + 1200, 15,
        [&](int t, int m, int g) {
          return m == 3 && g == 3 && ((t >= 600 && t < 840) || t >= dies);
        },
        [](int, int) { return false; }, 3, "component", o);
    ASSERT_EQ(gpu3.size(), 2u) << Listed(gpu3);
    EXPECT_GT(gpu3[1].onset, dies - 30) << Listed(gpu3);
    EXPECT_LE(gpu3[1].detected - gpu3[1].onset, 180) << Listed(gpu3);
  }
}

// Every 15 s, a GPU's power and the host's idle share vary, and four gauges rest at one value (an
// XID of 0, the link's width, its maximum and its generation): the Normalizer passes each of those
// on as a fresh sample only once a minute, and the median of the series' intervals was 60 s, so
// that m3, down at 700 s, was named after 225 s (a reviewer's case, session 59). Only series whose
// values vary say how often the machine reports: it is named three of their intervals after.
TEST(DetectorTest, ValuesThatNeverChangeDoNotSlowTheMachinesInterval) {
  Harness h;
  for (int t = 0; t < 1200; t += 15) {
    for (int m = 0; m < 8; ++m) {
      if (m == 3 && t >= 700) continue;  // down
      const double at = t + 0.1 * m;
      h.Feed(at, m, "DCGM_FI_DEV_POWER_USAGE", 0, 600 + (t / 15 + m) % 7);
      h.Feed(at, m, "DCGM_FI_DEV_XID_ERRORS", 0, 0);
      h.Feed(at, m, "DCGM_FI_DEV_PCIE_LINK_WIDTH", 0, 16);
      h.Feed(at, m, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", 0, 16);
      h.Feed(at, m, "DCGM_FI_DEV_PCIE_LINK_GEN", 0, 5);
      h.Feed(at + 7.5, m, "cpu_idle", "", 0.5 + 0.01 * ((t / 15 + m) % 5));
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u) << Listed(alerts);
  EXPECT_EQ(alerts[0].machine, "m3");
  EXPECT_EQ(alerts[0].rule, "machine");
  EXPECT_LE(alerts[0].detected - alerts[0].onset, 3 * 15 + 2);
}

// Every 60 s, DCGM and node-exporter half a scrape apart. A machine that goes down sends its
// node-exporter's last row after its GPUs' last: it is named missing as a machine, once three of
// its series' intervals have passed, and its GPUs are not named before it for the DCGM
// exporter's silence. A machine whose DCGM exporter dies while node-exporter reports has its
// GPUs named, after three of their intervals.
TEST(DetectorTest, AMachineDownIsNamedNotItsGpusFirst) {
  Harness h;
  for (int scrape = 0; scrape < 40; ++scrape) {
    for (const double phase : {0.0, 30.0}) {
      for (int m = 0; m < 8; ++m) {
        const double t = 60.0 * scrape + phase + 0.1 * m;
        if (m == 3 && scrape >= 20) continue;  // down
        if (phase == 30) {
          h.Feed(t, m, "cpu_idle", 8, 0.5 + 0.01 * ((scrape + m) % 5));
          continue;
        }
        if (m == 6 && scrape >= 20) continue;  // its DCGM exporter died
        for (int g = 0; g < 2; ++g) {
          h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, 600 + (scrape + m + g) % 7);
        }
      }
    }
  }
  const std::vector<Alert> alerts = h.FinishByMachine();
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].machine, "m3");
  EXPECT_EQ(alerts[0].rule, "machine");
  EXPECT_NEAR(alerts[0].onset, 60 * 19 + 30.3, 0.01);
  EXPECT_NEAR(alerts[0].detected - alerts[0].onset, 180, 3);
  EXPECT_EQ(alerts[1].machine, "m6");
  EXPECT_EQ(alerts[1].rule, "component");
  EXPECT_NEAR(alerts[1].detected - alerts[1].onset, 180, 3);
}

// The trainer's step-time gauge holds its last value through a checkpoint (no iteration). A
// worker slow for 20 s just before it is not named: the held value is no evidence.
TEST(DetectorTest, AGaugeHeldThroughAPauseIsNoEvidence) {
  Harness h;
  Rng rng(5, 0);
  for (int t = 0; t < 1200; t += 5) {
    const bool checkpoint = t >= 700 && t < 820;
    for (int m = 0; m < 16; ++m) {
      static double last[16];
      if (!checkpoint) {
        last[m] = (m == 3 && t >= 680 ? 3.0 : 2.3) * (1 + rng.Normal(0, 0.01));
        if (t >= 820) last[m] = 2.3 * (1 + rng.Normal(0, 0.01));
      }
      h.Feed(t + 0.2 * m, m, "training_step_seconds", 0, last[m]);
    }
  }
  EXPECT_TRUE(h.Finish().empty());
}

// A job's first iterations run many times longer (compilation, autotuning): the step time's
// usual level is what it is later, not that peak (against which the later level would be a
// stall, judged against half the peak), so a straggler after the warm-up is named.
TEST(DetectorTest, ALongFirstIterationIsNotTheUsualLevel) {
  for (const bool straggler : {false, true}) {
    Harness h;
    Rng rng(9, 0);
    for (int t = 0; t < 1500; t += 5) {
      for (int m = 0; m < 16; ++m) {
        // Machines finish the first iteration at different times.
        double v = t < 40 + 3 * m ? 12.0 : 2.3;
        if (straggler && m == 6 && t >= 1200) v *= 1.4;
        h.Feed(t + 0.2 * m, m, "training_step_seconds", 0, v * (1 + rng.Normal(0, 0.01)));
      }
    }
    const std::vector<Alert> alerts = h.Finish();
    if (!straggler) {
      EXPECT_TRUE(alerts.empty());
      continue;
    }
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].machine, "m6");
    // Seen on the step time alone (the persistence time); the peers' spread, raised while
    // they crossed the first iteration's end at different moments, falls over minutes (halving
    // every 5), so the evidence grows at part rate.
    EXPECT_LE(alerts[0].detected - 1200, 120);
  }
}

// Four machines (a pipeline stage in another phase, a rack behind one switch) move together:
// one job alert naming them in its evidence, no machine named on its own.
TEST(DetectorTest, MachinesThatDeviateTogetherAreOneJobAlert) {
  Harness h;
  Rng rng(17, 0);
  for (int t = 0; t < 900; ++t) {
    for (int m = 0; m < 16; ++m) {
      const bool moved = m >= 12 && t >= 600;
      const double noise = 1 + rng.Normal(0, 0.01);
      h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", 0, (moved ? 350.0 : 600.0) * noise);
      h.Feed(t, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 0, (moved ? 0.3 : 0.5) * noise);
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "*");
  EXPECT_EQ(AlertKindName(alerts[0].kind), "job");
  EXPECT_EQ(alerts[0].rule, "shared");
  ASSERT_EQ(alerts[0].evidence.size(), 4u);
  EXPECT_EQ(alerts[0].evidence[0].stat, "m12");
  EXPECT_EQ(alerts[0].evidence[0].reference, "peers");
  EXPECT_NEAR(alerts[0].onset, 600, 3);
}

// A job-wide stall to zero: small noise around zero is not a deviation from the peers (their
// spread and the signal's usual level come from before the stall).
TEST(DetectorTest, AJobWideStallNamesNoHealthyPeer) {
  Harness h;
  h.Run(32, 0, 1200, "DCGM_FI_DEV_GPU_UTIL", [](int m, int t) {
    if (t >= 400 && t < 900) return 0.2 + 0.05 * (m % 5);  // everyone idle, tiny offsets
    return 95.0;
  });
  // Five minutes of it is one job-level stall, naming no machine.
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(AlertKindName(alerts[0].kind), "job");
  EXPECT_EQ(alerts[0].machine, "*");
}

// Machines that differ by placement (half the job four times slower) are compared with their
// own past: nobody is named for its placement, and two that slow down a further three times
// are.
TEST(DetectorTest, MachinesPlacedDifferentlyAreJudgedAgainstTheirOwnPast) {
  Harness h;
  h.Run(16, 0, 1800, "training_step_seconds", [](int m, int t) {
    const double placed = m % 2 ? 4.0 : 1.0;
    return placed * ((m == 3 || m == 6) && t >= 1200 ? 3.0 : 1.0);
  });
  const std::vector<Alert> alerts = h.FinishByMachine();
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].machine, "m3");
  EXPECT_EQ(alerts[1].machine, "m6");
  EXPECT_LE(alerts[0].detected - 1200, 70);  // the step time alone: the persistence time
}

// A warm-up is learned from its second half. Four pipeline stages at levels 1 to 2.5: m5 sends
// 300 times its peers' traffic through the init (its first minute), m9 bursts to 1.6x its level
// for 50 s late in the warm-up, and m13 sits 12% above its stage from its first sample, with no
// machine within 10% of it. Nobody is named for any of it: a running mean from the start
// carried m5's init beyond the warm-up (jobgen: 18% off for good, named), and in a job whose
// machines differ by placement a level of one's own is no sign.
TEST(DetectorTest, AWarmUpIsLearnedFromItsSecondHalf) {
  Harness h;
  h.Run(16, 0, 1200, "DCGM_FI_PROF_PCIE_RX_BYTES", [](int m, int t) {
    double v = 1e9 * (1.0 + 0.5 * (m / 4)) * (m == 13 ? 1.12 : 1.0);
    if (m == 5 && t < 60) v *= 300;
    if (m == 9 && t >= 220 && t < 270) v *= 1.6;
    return v;
  });
  const std::vector<Alert> alerts = h.Finish();
  for (const Alert& a : alerts) ADD_FAILURE() << DumpJson(AlertToJson(a));
}

// At a 60-s cadence a 5-minute warm-up's window (its second half) holds three samples, and a
// benign burst of one machine's traffic in two of them was its placement: back at its own level
// it read 38% low and was named (jobgen's seeds 75,003 and 75,004 at 30 and 60 s). The job's
// first warm-up lasts twelve of the machines' intervals (12 minutes here), so that its window
// holds six, and the burst is no level. A fault after it is still named within four samples.
TEST(DetectorTest, AtA60sCadenceTheWarmUpsWindowHoldsSixSamples) {
  Harness h;
  Rng rng(5, 0);
  for (int t = 0; t < 1800; ++t) {
    for (int m = 0; m < 16; ++m) {
      if ((t + 60 - 4 * m) % 60 != 0) continue;  // staggered: m scraped at 4m s past the minute
      double v = 1e9;
      if (m == 9 && (t == 216 || t == 276)) v *= 1.6;  // a burst over two rates
      if (m == 3 && t >= 1000) v *= 0.5;
      h.Feed(t, m, "DCGM_FI_PROF_PCIE_RX_BYTES", 0, v * (1 + rng.Normal(0, 0.01)));
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u) << Listed(alerts);
  EXPECT_EQ(alerts[0].machine, "m3");
  EXPECT_LE(alerts[0].detected, 1000 + 4 * 60);
}

// A job restarted after a job-level stall is learned again, but a machine whose level moved
// from its placement before the stall (a straggler that began just before a hang) is compared
// with its own past and named; when most machines moved (ranks placed anew), nobody is. The
// restart's warm-up is shorter than the job's first (240 s: four times the persistence, over
// half of the 300 s): the straggler is named before a full one would have ended.
TEST(DetectorTest, AfterARestartAMachineIsComparedWithItsOwnPast) {
  for (const bool everyone_moves : {false, true}) {
    SCOPED_TRACE(everyone_moves);
    Harness h;
    h.Run(16, 0, 2400, "training_step_seconds", [&](int m, int t) {
      if (t >= 800 && t < 1300) return 0.0;  // a hang of every rank, then a restart
      double v = m % 2 ? 4.0 : 1.0;
      if (t >= 1300 && everyone_moves && m < 8) v = m % 2 ? 1.0 : 4.0;
      if (!everyone_moves && m == 6 && t >= 780) v *= 1.5;
      return v;
    });
    std::vector<Alert> alerts = h.Finish();
    std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });  // the stall
    if (everyone_moves) {
      for (const Alert& a : alerts) ADD_FAILURE() << DumpJson(AlertToJson(a));
      continue;
    }
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].machine, "m6");
    EXPECT_GE(alerts[0].detected, 1300 + 240);  // after the new warm-up (240 s)
    EXPECT_LT(alerts[0].detected, 1300 + 300);
  }
}

// Three machines slower after a restart than before its stall are three faults, not a job placed
// anew: one named before the stall, two whose slowdown grew while the job was down, each at a
// level no machine held before (jobgen's seeds 45,002-45,004: a job with four faults, the fatal
// one last, restarted with three faults in it, and none was named after the restart). Each is
// compared with its own past and named after the new warm-up.
TEST(DetectorTest, ThreeMachinesSlowerAfterARestartAreThreeFaults) {
  Harness h;
  h.Run(32, 0, 2400, "training_step_seconds", [&](int m, int t) {
    if (t >= 800 && t < 1300) return 0.0;  // a hang of every rank, then a restart
    double v = 1.0;
    if (m == 2 && t >= 600) v *= 1.5;
    if (m == 6 && t >= 1300) v *= 1.8;
    if (m == 11 && t >= 1300) v *= 2.2;
    return v;
  });
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });
  std::set<std::string> after;
  for (const Alert& a : alerts) {
    if (a.machine != "m2" && a.machine != "m6" && a.machine != "m11") {
      ADD_FAILURE() << DumpJson(AlertToJson(a));
    }
    if (a.detected >= 1300 + 240) after.insert(a.machine);
  }
  EXPECT_EQ(after, (std::set<std::string>{"m2", "m6", "m11"}));
}

// Machines that come back from a restart moved alike (four ranks 50% slower, within the effect
// threshold of each other: jobgen's restarted job whose longer iteration aliases some ranks'
// sampled power anew; machines left out of it, idle alike) moved for one cause, which their new
// placements hold: nothing is reported, for the job or for a machine. A fifth machine that moved
// further, at its own level, is named.
TEST(DetectorTest, MachinesMovedAlikeThroughARestartAreLearnedAnew) {
  Harness h;
  h.Run(32, 0, 2400, "training_step_seconds", [&](int m, int t) {
    if (t >= 800 && t < 1300) return 0.0;  // a hang of every rank, then a restart
    if (t >= 1300 && m == 9) return 2.4;
    return t >= 1300 && (m == 3 || m == 7 || m == 13 || m == 21) ? 1.5 + 0.002 * m : 1.0;
  });
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*" && a.rule == "stall"; });
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m9");
}

// A job placed anew after its restart is no fault: three ranks of three lighter stages (levels 1,
// 2 and 3 of four) take the heaviest stage's work (a level other machines held before; each
// moved its own way, so not alike), or a quarter of the machines move, each to a new level of
// its own (another load). Nobody is named for either.
TEST(DetectorTest, AJobPlacedAnewAfterItsRestartIsNoFault) {
  for (const bool own_levels : {false, true}) {
    SCOPED_TRACE(own_levels);
    Harness h;
    h.Run(16, 0, 2400, "training_step_seconds", [&](int m, int t) {
      if (t >= 800 && t < 1300) return 0.0;  // a hang of every rank, then a restart
      double v = own_levels ? 1.0 : 1.0 + m % 4;
      if (t >= 1300 && !own_levels && m < 3) v = 4.0;
      if (t >= 1300 && own_levels && m % 4 == 0) v *= 1.3 + 0.2 * m / 4;
      return v;
    });
    std::vector<Alert> alerts = h.Finish();
    std::erase_if(alerts, [](const Alert& a) { return a.machine == "*" && a.rule == "stall"; });
    for (const Alert& a : alerts) ADD_FAILURE() << DumpJson(AlertToJson(a));
  }
}

// In a job whose machines' levels spread evenly (one stage, 32 machines 0.5% apart, 16% from the
// fastest to the slowest), a straggler from before a hang and two healthy machines whose levels
// moved within that spread through the restart (jobgen's seed 62,004: placements learned while the
// first iterations still ran long) each land beside some machine's level from before. That is
// chance, not ranks placed anew: the straggler is compared with its own past and named; the two,
// now faster than their own past, are not.
TEST(DetectorTest, MovesWithinAnEvenSpreadOfLevelsAreNoReplacement) {
  Harness h;
  h.Run(32, 0, 2400, "training_step_seconds", [&](int m, int t) {
    if (t >= 800 && t < 1300) return 0.0;  // a hang of every rank, then a restart
    double v = std::exp(0.005 * (m - 16));
    if (m == 6 && t >= 780) v *= 1.2;
    if ((m == 20 || m == 28) && t >= 1300) v *= 0.9;
    return v;
  });
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });  // the stall
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m6");
  EXPECT_GE(alerts[0].detected, 1300 + 240);  // after the new warm-up (240 s)
}

// The same with what a restarted job looks like: every rank's first iterations run long and
// shorten over minutes, and the ranks come back one after another over half a minute.
TEST(DetectorTest, AfterARestartWithAWarmUpTransientTheStragglerIsNamed) {
  Harness h;
  h.Run(16, 0, 2400, "training_step_seconds", [&](int m, int t) {
    if (t >= 800 && t < 1300 + 2 * m) return 0.0;  // a hang, then a staggered restart
    double v = m % 2 ? 4.0 : 1.0;
    if (t >= 1300) v *= 1 + 0.4 * std::exp(-(t - 1300) / 120.0);
    if (m == 6 && t >= 780) v *= 1.5;
    return v;
  });
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m6");
  EXPECT_GE(alerts[0].detected, 1300 + 240);  // after the new warm-up (240 s)
  EXPECT_LE(alerts[0].detected, 1300 + 240 + 120);
}

// The same scraped every 30 s. The warm-up after the restart is then longer than at 15 s (240 s):
// the window its placements are learned from, its second half, holds six of the machines' intervals
// (an event's three samples and three beside them), not only twice the persistence: 432 s, twelve
// of the 36 s that the machines' median interval had become as the stall began (the hang's held
// step times are no fresh samples), as the job's first warm-up holds twelve (360 s at 30 s). The
// straggler from before the hang is named once it has ended and a sample of it has been judged
// (its placement kept from before: PeerModelTest.AStragglerKeptOverARestartIsNamedAsTheWarmupEnds).
// Where the restart's first samples catch some ranks in a long first
// iteration and others not (a level a tenth of the centre's), only those of the warm-up's second
// half are the placement: the others are no move, and the straggler is still named, later.
TEST(DetectorTest, AtA30sCadenceARestartsWarmupHoldsSixIntervals) {
  for (const bool first_iteration : {false, true}) {
    SCOPED_TRACE(first_iteration);
    Harness h;
    h.RunSteps(
        first_iteration ? 4200 : 3600, 30, [](int m) { return 2 * m; }, first_iteration ? 11 : 13,
        [&](int m, int t) {
          double v = 1.0;
          if (t >= 1800 && t < 2400) v = 0.0;  // a hang, then a restart
          if (first_iteration && t >= 2400 && t < 2400 + 20 + 4 * m) v = 10.0;
          if (m == 6 && t >= 1780 && v > 0 && v < 10) v *= 1.5;  // a straggler from before
          return v;
        });
    std::vector<Alert> alerts = h.Finish();
    std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });
    ASSERT_EQ(alerts.size(), 1u);
    EXPECT_EQ(alerts[0].machine, "m6");
    EXPECT_GE(alerts[0].detected, 2400 + 432);
    // With the first iterations late, as the peers' spread of them, many times the usual,
    // halves every 5 minutes after them (docs/detect.md, "What the method assumes").
    EXPECT_LE(alerts[0].detected, 2400 + 432 + (first_iteration ? 600 : 4 * 30));
  }
}

// The restart's first iterations, ten times the next, end at each rank's own moment over a
// minute, then every rank's step time falls back over minutes; a straggler 20% slow from before
// the hang (a weak deviation) is named within the job's next four minutes after the warm-up. The
// peers' spread those first iterations raise is no measure of it once the centre has stopped
// moving: followed through the warm-up, it stayed several times the machines' own and fell over
// 5-minute halves after it (jobgen's seed 62,004, 32 machines: the straggler never named).
TEST(DetectorTest, ARestartsFirstIterationsLeaveNoSpreadBehind) {
  Harness h;
  h.RunSteps(
      2400 + 300 + 240, 15, [](int m) { return m; }, 3,
      [](int m, int t) {
        if (t >= 1200 && t < 1800) return 0.0;  // a hang, then a restart
        double v = 1.0;
        if (t >= 1800 && t < 1800 + 20 + 4 * m) v = 10.0;  // the first iteration
        if (t >= 1800) v *= 1 + 0.25 * std::exp(-(t - 1800) / 120.0);
        if (m == 6 && t >= 1180 && t < 1200) v *= 1.2;
        if (m == 6 && t >= 1800 + 20 + 4 * m) v *= 1.2;
        return v;
      });
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m6");
}

// The same at a 30-s cadence, the first iterations 1.5 times the next and ended over two
// minutes: the centre moves in a frame or two, and the frame after it still catches many ranks
// in their first iteration. Its spread, as high as any of the crossing's, is not learned afresh
// (a reviewer's case: the straggler was then named 120 s later than with the spread followed).
// The warm-up after the restart holds twelve of the machines' intervals as the stall began (432 s,
// as above).
TEST(DetectorTest, AFrameStillCrossingIsNoSpreadLearnedAfresh) {
  Harness h;
  Rng rng(3, 0);
  for (int t = 0; t < 4200; ++t) {
    for (int m = 0; m < 32; ++m) {
      if ((t + 30 * m / 32) % 30 != 0) continue;
      double v = 1.0;
      if (t >= 1200 && t < 1800) v = 0.0;                // a hang, then a restart
      if (t >= 1800 && t < 1800 + 105 + 4 * m) v = 1.5;  // the first iterations
      if (m == 6 && t >= 1180) v *= 1.2;                 // a straggler from before
      h.Feed(t, m, "training_step_seconds", 0, v * (1 + rng.Normal(0, 0.01)));
    }
  }
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m6");
  EXPECT_LE(alerts[0].detected, 1800 + 432 + 180);
}

// Machines that keep their levels through a restart are not named, though they come back one
// after another, scraped every 15 s at staggered moments: every machine's placement from before
// is taken at the restart's first moment, not each at its own first sample, by when the
// placements of the machines back already may have re-centred the others'.
TEST(DetectorTest, MachinesThatKeepTheirLevelsThroughARestartAreNotNamed) {
  Harness h;
  h.RunSteps(
      4200, 15, [](int m) { return 15 * m / 16; }, 5,
      [](int m, int t) {
        double v = 1.0 + 0.04 * (m % 5);
        if (t >= 1800 && t < 2400) v = 0.0;  // a hang, then a restart
        // Its first iteration, long on two machines of three.
        if (t >= 2400 && t < 2400 + 20 + 2 * m && m % 3) v *= 10;
        return v;
      });
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });
  for (const Alert& a : alerts) ADD_FAILURE() << DumpJson(AlertToJson(a));
}

// A machine's own scatter is learned over the second half of a warm-up: the restart's first
// iteration (each rank ends it at its own moment, many times longer than the others) is no
// scatter that would hide the straggler from before it for minutes after the warm-up.
TEST(DetectorTest, ARestartsFirstIterationIsNoScatter) {
  Harness h;
  h.RunSteps(
      2400, 5, [](int m) { return m / 4; }, 3,
      [](int m, int t) {
        double v = 2.4;
        if (t >= 800 && t < 1300) v = 0.0;                // a hang, then a restart
        if (t >= 1300 && t < 1300 + 20 + 2 * m) v *= 10;  // its first iteration
        if (m == 6 && t >= 780 && v > 0) v *= 1.4;        // a straggler from before the hang
        return v;
      });
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m6");
  // Within 90 s of where a full warm-up would end: the restart's, shorter, leaves more of the
  // first iteration's spread (its half-life over the warm-up, a fifth of it) behind.
  EXPECT_LE(alerts[0].detected, 1300 + 300 + 90);
}

// A restart without three machines of one level (they stalled with the others, then are left
// out) moves the centre the placements are taken against: every machine's placement shifts
// alike, which is no move, and the straggler from before the hang is still the one that moved.
TEST(DetectorTest, AShiftEveryMachineSharesAtARestartIsNoMove) {
  Harness h;
  const auto step = [](int m, int t) {
    if (t >= 800 && t < 1300) return 0.0;  // a hang of every rank, then a restart
    double v = m % 2 ? 4.0 : 1.0;
    if (m == 6 && t >= 780) v *= 1.5;
    return v;
  };
  h.Run(16, 0, 1300, "training_step_seconds", step);
  h.Run(16, 1300, 2600, "training_step_seconds", step, /*silent=*/{1, 3, 5});
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) {
    return a.machine == "*" || AlertKindName(a.kind) == "missing";
  });
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m6");
}

// One machine odd from its first sample, alone at its level, is judged against its peers.
TEST(DetectorTest, AMachineAloneAtItsLevelFromTheStartIsNamed) {
  Harness h;
  h.Run(16, 0, 600, "DCGM_FI_DEV_POWER_USAGE", [](int m, int) { return m == 9 ? 300.0 : 600.0; });
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m9");
}

// A GPU's temperature depends on where its machine sits: one 15% hotter than its seven peers
// from the job's start is placed there (fault-free jobgen seed 57,101: 8 C over its peers all
// along, it was named), while one that comes to run 15% hotter than it was is named. A machine
// alone at its power level from the start still is (above).
TEST(DetectorTest, AGpuHotterFromTheStartIsWhereItSits) {
  Harness h;
  h.Run(8, 0, 1500, "DCGM_FI_DEV_GPU_TEMP",
        [](int m, int t) { return m == 5 || (m == 2 && t >= 700) ? 66.0 : 57.0; });
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m2");
}

// A GPU temperature with a first-order lag (45 s) toward target(m, t): its inlet's degrees, its
// load's and a failing fan's; 8 machines over [0, to).
std::vector<std::vector<double>> LaggedTemperatures(int to,
                                                    const std::function<double(int, int)>& target) {
  std::vector<std::vector<double>> temps(8, std::vector<double>(to));
  for (int m = 0; m < 8; ++m) {
    double v = target(m, 0);
    for (int t = 0; t < to; ++t) {
      v += (target(m, t) - v) * (1 - std::exp(-1.0 / 45));
      temps[m][t] = v;
    }
  }
  return temps;
}

std::vector<Alert> RunTemperatures(const std::vector<std::vector<double>>& temps,
                                   const std::string& metric = "DCGM_FI_DEV_GPU_TEMP") {
  Harness h;
  h.Run(static_cast<int>(temps.size()), 0, static_cast<int>(temps[0].size()), metric,
        [&](int m, int t) { return temps[m][t]; });
  return h.Finish();
}

// A GPU's temperature is its inlet's and its position's degrees over a share of its power, so a
// machine's share of its peers' temperature holds at the load it was placed at only. Two reviewers
// (session 69) broke two attempts to judge temperature only at that load; their cases, which the
// detector as it is names and each attempt missed in part, hold what a next one must keep: a fan
// that fails (m5,
// +9 to +15 C; m3 a hot inlet) between checkpoints every few minutes (30 s at 15% of the power),
// in a hang of 40 minutes, 200 s into an evaluation of 20 at 70% of the power, 20 minutes after the
// job's load moved for good, an hour after a first warm-up in a long init at another load, or while
// the room warms or the GPUs creep up, is named within 10 minutes of the job's return to training
// or of the fan's failure.
TEST(DetectorTest, AFanFailingAtAnotherLoadOrInADriftIsNamed) {
  struct Case {
    std::string name;
    int fan_at;
    double fan;
    std::function<double(int)> load;   // share of the training power's degrees
    std::function<double(int)> drift;  // degrees every GPU gains
    int back = 0;                      // the job back at the load it was placed at
  };
  const auto none = [](int) { return 0.0; };
  const auto full = [](int) { return 1.0; };
  std::vector<Case> cases;
  for (const int period : {180, 300}) {
    cases.push_back({"checkpoints every " + std::to_string(period) + " s", 1500, 15,
                     [=](int t) { return t >= 600 && t % period < 30 ? 0.15 : 1.0; }, none});
  }
  cases.push_back(
      {"a hang", 1800, 9, [](int t) { return t >= 600 && t < 3000 ? 0.3 : 1.0; }, none, 3000});
  cases.push_back({"an evaluation", 1400, 9,
                   [](int t) { return t >= 1200 && t < 2400 ? 0.7 : 1.0; }, none, 2400});
  for (const double load : {0.7, 1.3}) {
    cases.push_back(
        {"the load moves for good to " + std::to_string(static_cast<int>(load * 100)) + "%", 2100,
         9, [=](int t) { return t >= 900 ? load : 1.0; }, none});
  }
  cases.push_back({"a first warm-up at 0.3 for 900 s", 3600, 12,
                   [](int t) { return t < 900 ? 0.3 : 1.0; }, none});
  cases.push_back({"the room warms", 2400, 9, full,
                   [](int t) { return t < 600 ? 0 : 12 * std::min(1.0, (t - 600) / 3600.0); }});
  cases.push_back({"the room warms fast", 2100, 12, full,
                   [](int t) { return t < 600 ? 0 : 10 * std::min(1.0, (t - 600) / 300.0); }});
  cases.push_back(
      {"the GPUs creep", 1200, 9, full, [](int t) { return 10 * (1 - std::exp(-t / 600.0)) - 7; }});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto temps = LaggedTemperatures(4800, [&](int m, int t) {
      return (m == 3 ? 34.0 : 30.0) + 27 * c.load(t) + c.drift(t) +
             (m == 5 && t >= c.fan_at ? c.fan : 0.0);
    });
    for (const char* metric : {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP"}) {
      SCOPED_TRACE(metric);
      const std::vector<Alert> alerts = RunTemperatures(temps, metric);
      ASSERT_EQ(alerts.size(), 1u);
      EXPECT_EQ(alerts[0].machine, "m5");
      EXPECT_GE(alerts[0].onset, c.fan_at);
      EXPECT_LE(alerts[0].detected, std::max(c.fan_at, c.back) + 600);
    }
  }
}

// A healthy GPU hot for 200-250 s (under a temperature's 300-s persistence) just before the job
// moves to another load (a checkpoint of a minute, a hang of 40) and again just after it is back
// is two events, not one fault (a reviewer's case, session 69: a version that held a run over
// another load joined them).
TEST(DetectorTest, TwoShortHotEventsAroundAnotherLoadAreNoFault) {
  for (const int hot : {200, 250}) {
    for (const int away : {60, 2400}) {
      SCOPED_TRACE(::testing::Message() << hot << " s hot, " << away << " s away");
      const int from = 1200, back = from + away;
      const auto temps = LaggedTemperatures(4000, [&](int m, int t) {
        const bool event =
            m == 2 && ((t >= from - hot && t < from) || (t >= back && t < back + hot));
        return 30.0 + 27 * (t >= from && t < back ? 0.15 : 1.0) + (event ? 12.0 : 0.0);
      });
      EXPECT_TRUE(RunTemperatures(temps).empty());
    }
  }
}

// Step time is worse only when higher: a worker faster than its peers is not a fault.
TEST(DetectorTest, AFasterWorkerIsNoStraggler) {
  Harness h;
  h.Run(16, 0, 600, "training_step_seconds",
        [](int m, int t) { return m == 4 && t >= 300 ? 2.0 : 3.4; });
  EXPECT_TRUE(h.Finish().empty());
}

// Deviations shorter than the persistence time never alert, however strong: every machine in
// turn, a minute apart, has a 5-second spike to half its power (all after the warm-up) or a
// 20-second drop to a sixth (the first ones during it, where they must not be learned as the
// machine's level).
TEST(DetectorTest, DeviationsShorterThanThePersistenceNeverAlert) {
  struct Case {
    int first, length;
    double power;
  };
  for (const Case c : {Case{320, 5, 300.0}, Case{60, 20, 100.0}}) {
    SCOPED_TRACE(c.length);
    Harness h;
    h.Run(16, 0, 1300, "DCGM_FI_DEV_POWER_USAGE", [&](int m, int t) {
      const int start = c.first + m * 60;
      return t >= start && t < start + c.length ? c.power : 600.0;
    });
    EXPECT_TRUE(h.Finish().empty());
  }
}

// An alert for one cause never hides another: a divergence, then an XID on the same machine,
// then a divergence of another machine, each alert.
TEST(DetectorTest, ACauseNeverHidesAnother) {
  Harness h;
  Rng rng(5, 0);
  for (int t = 0; t < 900; ++t) {
    for (int m = 0; m < 8; ++m) {
      const bool slow = (m == 1 && t >= 400) || (m == 2 && t >= 700);
      for (int g = 0; g < 2; ++g) {
        h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, (slow ? 300 : 600) * (1 + rng.Normal(0, 0.01)));
      }
      h.Feed(t, m, "DCGM_FI_DEV_XID_ERRORS", 0, m == 1 && t >= 550 ? 79 : 0);
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 3u);
  EXPECT_EQ(alerts[0].machine, "m1");
  EXPECT_EQ(AlertKindName(alerts[0].kind), "divergence");
  EXPECT_EQ(alerts[1].machine, "m1");
  EXPECT_EQ(alerts[1].rule, "xid 79");
  EXPECT_EQ(alerts[2].machine, "m2");
  EXPECT_EQ(AlertKindName(alerts[2].kind), "divergence");
}

// One cause, one alert (issue 20 part 6): a NIC whose link goes down is named by the rule at
// once; its traffic, nothing while the link is down and less while it comes back, is the same
// cause and no divergence of its own, also where its evidence is enough only after the link is
// up again (eval/jobgen's nic_flap: the traffic was named 11 s after the link came back, a false
// alert), and where the link goes down again meanwhile (a flap: one episode). A second cause on
// the same machine (its step time twice its peers' from 630 s) is named all the same, with its
// own evidence and onset, and so is the NIC's traffic falling again after the link is back, long
// after or within a minute.
TEST(DetectorTest, TheTrafficOfANicWhoseLinkIsDownIsNoSecondAlert) {
  struct Case {
    const char* what;
    int up_at;   // the link is down from 600 until then
    int ramp_s;  // after it, its traffic climbs back from a third over this long
    bool straggler = false;
    int again = -1;     // the link is down again for a minute from then
    int low_from = -1;  // the NIC carries a third from then on
  };
  for (const Case& c :
       {Case{"down for 2 minutes", 720, 0}, Case{"named once it is up again", 630, 90},
        Case{"and a straggler", 720, 0, true}, Case{"a flap", 630, 90, false, 700},
        Case{"and later a NIC slow", 630, 90, false, -1, 900},
        Case{"a NIC slow just after it is back", 610, 0, false, -1, 640}}) {
    SCOPED_TRACE(c.what);
    Harness h;
    Rng rng(3, 0);
    std::vector<double> sent(16 * 4, 1e12);
    for (int t = 0; t < 1200; t += 5) {
      for (int m = 0; m < 16; ++m) {
        for (int n = 0; n < 4; ++n) {
          const size_t i = static_cast<size_t>(m * 4 + n);
          const bool nic = m == 5 && n == 3;
          const bool down = nic && ((t >= 600 && t < c.up_at) ||
                                    (c.again >= 0 && t >= c.again && t < c.again + 60));
          double share = 1;
          if (nic && t >= c.up_at && t < c.up_at + c.ramp_s) {
            share = 1.0 / 3 + (2.0 / 3) * (t - c.up_at) / c.ramp_s;
          }
          if (nic && c.low_from >= 0 && t >= c.low_from) share = 1.0 / 3;
          if (!down) sent[i] += 2.3e9 * 5 * share * (1 + rng.Normal(0, 0.02));
          const std::string hca = "mlx5_" + std::to_string(n);
          h.Feed(t, m, "node_infiniband_port_data_transmitted_bytes_total", hca, sent[i]);
          h.Feed(t, m, "node_network_up", hca, down ? 0 : 1);
        }
        const bool slow = c.straggler && m == 5 && t >= 630;
        h.Feed(t, m, "training_step_seconds", "", (slow ? 2 : 1) * (1 + rng.Normal(0, 0.01)));
      }
    }
    const std::vector<Alert> alerts = h.Finish();
    const size_t rules = c.again >= 0 ? 2 : 1;
    const bool second = c.straggler || c.low_from >= 0;
    ASSERT_EQ(alerts.size(), rules + (second ? 1 : 0));
    for (size_t k = 0; k < rules; ++k) {
      EXPECT_EQ(alerts[k].machine, "m5");
      EXPECT_EQ(alerts[k].rule, "link_down");
      EXPECT_EQ(alerts[k].component, "mlx5_3");
    }
    EXPECT_EQ(alerts[0].detected, 600);
    if (!second) continue;
    const Alert& named = alerts.back();
    EXPECT_EQ(named.machine, "m5");
    EXPECT_EQ(AlertKindName(named.kind), "divergence");
    const int from = c.straggler ? 630 : c.low_from;
    EXPECT_GE(named.onset, from);
    const std::string cause = c.straggler ? "step_time" : "net_tx_bytes";
    ASSERT_FALSE(named.evidence.empty());
    for (const Evidence& e : named.evidence) EXPECT_EQ(e.signal, cause);
  }
}

// A link that goes down as the job's traffic comes back from an evaluation (every host at 3% of
// its rate until 1,090 s), named by the rule at once: its NIC's traffic begins a run only once the
// job's move has settled, 100 s later, and that run is the link's all the same (jobgen's seed
// 134,004 at 10 s: a NIC down from 1,090 to 1,210 s among 64 hosts, just after an evaluation;
// its receive and transmit minimum, their run begun at 1,180 s, named at 1,211 s, the same cause
// twice, the second a false alert after the fault ended). Until session 91 only a restart's
// warm-up counted as the feature being judged again.
TEST(DetectorTest, TheTrafficOfANicDownLongAfterItWasNamedIsNoSecondAlert) {
  Harness h;
  Rng rng(91, 0);
  std::vector<double> sent(64 * 4, 1e12), received(64 * 4, 1e12);
  for (int t = 0; t < 1800; t += 10) {
    for (int m = 0; m < 64; ++m) {
      for (int n = 0; n < 4; ++n) {
        const size_t i = static_cast<size_t>(m * 4 + n);
        const bool down = m == 48 && n == 1 && t >= 1090 && t < 1240;
        const double share = t >= 1000 && t < 1090 ? 0.03 : 1;  // the job's evaluation
        if (!down) {
          sent[i] += 4e9 * 10 * share * (1 + rng.Normal(0, 0.02));
          received[i] += 4e9 * 10 * share * (1 + rng.Normal(0, 0.02));
        }
        const std::string hca = "mlx5_" + std::to_string(n);
        h.Feed(t, m, "node_infiniband_port_data_transmitted_bytes_total", hca, sent[i]);
        h.Feed(t, m, "node_infiniband_port_data_received_bytes_total", hca, received[i]);
        h.Feed(t, m, "node_network_up", hca, down ? 0 : 1);
      }
      h.Feed(t, m, "training_step_seconds", "", 1 + rng.Normal(0, 0.01));
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].rule, "link_down");
  EXPECT_EQ(alerts[0].machine, "m48");
}

// A link that went down while the job was hung stays down through the restart's warm-up: its
// NIC's traffic can deviate only once the restarted job is judged, long after the link was named,
// and it is the link's (jobgen's seed 62,003, query_range: named 16 s after the flap ended).
TEST(DetectorTest, TheTrafficOfANicDownThroughARestartIsNoSecondAlert) {
  Harness h;
  Rng rng(3, 0);
  std::vector<double> sent(16 * 4, 1e12);
  for (int t = 0; t < 2400; t += 5) {
    const bool hung = t >= 800 && t < 1300;  // a hang of every rank, then a restart
    for (int m = 0; m < 16; ++m) {
      for (int n = 0; n < 4; ++n) {
        const size_t i = static_cast<size_t>(m * 4 + n);
        const bool down = m == 5 && n == 3 && t >= 1000 && t < 1800;
        if (!down && !hung) sent[i] += 2.3e9 * 5 * (1 + rng.Normal(0, 0.02));
        const std::string hca = "mlx5_" + std::to_string(n);
        h.Feed(t, m, "node_infiniband_port_data_transmitted_bytes_total", hca, sent[i]);
        h.Feed(t, m, "node_network_up", hca, down ? 0 : 1);
      }
      h.Feed(t, m, "training_step_seconds", "", (hung ? 0 : 1) * (1 + rng.Normal(0, 0.01)));
    }
  }
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });  // the stall
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].rule, "link_down");
  EXPECT_EQ(alerts[0].machine, "m5");
}

// The same for a GPU: one that fell off the bus (XID 79 on gpu0 at 500 s, its power nothing from
// then) is named once, by the rule; a GPU whose PCIe link narrowed (16 -> 8 lanes, its traffic
// halved) likewise. Another GPU of the first machine losing half its power at 900 s is another
// cause, named with its own onset.
TEST(DetectorTest, AGpuOffTheBusIsNamedOnceAndAnotherGpuLaterToo) {
  Harness h;
  Rng rng(11, 0);
  for (int t = 0; t < 1300; ++t) {
    for (int m = 0; m < 8; ++m) {
      for (int g = 0; g < 2; ++g) {
        double power = 600, pcie = 1e9;
        if (m == 1 && g == 0 && t >= 500) power = 50;
        if (m == 1 && g == 1 && t >= 900) power = 300;
        if (m == 2 && g == 0 && t >= 500) pcie = 5e8;
        h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, power * (1 + rng.Normal(0, 0.01)));
        h.Feed(t, m, "DCGM_FI_PROF_PCIE_TX_BYTES", g, pcie * (1 + rng.Normal(0, 0.01)));
        h.Feed(t, m, "DCGM_FI_DEV_XID_ERRORS", g, m == 1 && g == 0 && t >= 500 ? 79 : 0);
        h.Feed(t, m, "DCGM_FI_DEV_PCIE_LINK_WIDTH", g, m == 2 && g == 0 && t >= 500 ? 8 : 16);
        h.Feed(t, m, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", g, 16);
      }
    }
  }
  std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 3u);
  EXPECT_EQ(alerts[0].machine, "m1");
  EXPECT_EQ(alerts[0].rule, "xid 79");
  EXPECT_EQ(alerts[1].machine, "m2");
  EXPECT_EQ(alerts[1].rule, "pcie_width");
  EXPECT_EQ(alerts[2].machine, "m1");
  EXPECT_EQ(AlertKindName(alerts[2].kind), "divergence");
  EXPECT_GE(alerts[2].onset, 900);
}

// A fault that ends a GPU's work (an XID after which its application is terminated, or the GPU
// gone from its exporter's scrapes while its siblings report) is named once: the rank on it dies
// or hangs, and the machine's other signals that move with it within a persistence of the naming
// (its step time, here 3 times its peers' from 10 s after the fault) are that fault's, not a
// second cause (jobgen's base 110,000: a host's CPU left idle named 2 minutes after its GPU was
// lost or its XID 94). The same XID followed by its cleanup's (45) still ended the work. Named as
// before: without the fault; a slowdown beyond the window; after an XID that leaves the
// application running (63, a row remapped); and after every GPU of the machine fell silent at
// once, its exporter restarting, not a GPU gone (reviewers' cases, session 76).
TEST(DetectorTest, AFaultThatEndsAGpusWorkIsNamedOnce) {
  enum class Fault { kNone, kXid79, kXid94Then45, kXid63, kSilent, kExporterSilent };
  struct Case {
    const char* what;
    Fault fault;
    int slow_from;
    std::vector<std::string> rules;  // the alerts expected, in order
  };
  for (const Case& c :
       {Case{"a fatal XID", Fault::kXid79, 510, {"xid 79"}},
        Case{"XID 94, then 45", Fault::kXid94Then45, 510, {"xid 94"}},
        Case{"a GPU silent", Fault::kSilent, 510, {"component"}},
        Case{"no fault", Fault::kNone, 510, {"peers"}},
        Case{"a fatal XID, slow later", Fault::kXid79, 700, {"xid 79", "peers"}},
        Case{"a row remapped", Fault::kXid63, 510, {"xid 63", "peers"}},
        Case{"the exporter silent", Fault::kExporterSilent, 600, {"component", "peers"}}}) {
    SCOPED_TRACE(c.what);
    Harness h;
    Rng rng(5, 0);
    for (int t = 0; t < 1000; ++t) {
      for (int m = 0; m < 8; ++m) {
        const bool faulty = m == 1 && t >= 500;
        for (int g = 0; g < 2; ++g) {
          if (faulty && ((g == 0 && c.fault == Fault::kSilent) ||
                         (c.fault == Fault::kExporterSilent && t < 800))) {
            continue;
          }
          double xid = 0;
          if (faulty && g == 0) {
            switch (c.fault) {
              case Fault::kXid79:
                xid = 79;
                break;
              case Fault::kXid94Then45:
                xid = t < 502 ? 94 : 45;
                break;
              case Fault::kXid63:
                xid = 63;
                break;
              default:
                break;
            }
          }
          h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, 600 * (1 + rng.Normal(0, 0.01)));
          h.Feed(t, m, "DCGM_FI_DEV_XID_ERRORS", g, xid);
        }
        const bool slow = m == 1 && t >= c.slow_from;
        h.Feed(t, m, "training_step_seconds", "", (slow ? 3 : 1) * (1 + rng.Normal(0, 0.01)));
      }
    }
    std::vector<std::string> rules;
    for (const Alert& a : h.Finish()) {
      EXPECT_EQ(a.machine, "m1") << DumpJson(AlertToJson(a));
      rules.push_back(a.rule);
    }
    EXPECT_EQ(rules, c.rules);
  }
}

// A fault that ended a GPU's work and is still shown (its XID held by the exporter) explains no
// deviation that begins long after it: the machine restarted with the job after a hang of every
// rank (720-1,200 s) and slowed 1.5 times from 1,250 s is named once the restart is judged (a
// reviewer's case against a first version that kept the window open to a persistence after the
// restart's warm-up, as for the component's own signals).
TEST(DetectorTest, AFaultStillShownAfterARestartHidesNoLaterSlowdown) {
  Harness h;
  Rng rng(5, 0);
  const auto hung = [](int t) { return t >= 720 && t < 1200; };
  for (int t = 0; t < 2000; ++t) {
    for (int m = 0; m < 16; ++m) {
      for (int g = 0; g < 2; ++g) {
        h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g,
               (hung(t) ? 100 : 600) * (1 + rng.Normal(0, 0.01)));
        h.Feed(t, m, "DCGM_FI_DEV_XID_ERRORS", g, m == 1 && g == 0 && t >= 700 ? 94 : 0);
      }
      const double step = hung(t) ? 0 : (m == 1 && t >= 1250 ? 1.5 : 1);
      h.Feed(t, m, "training_step_seconds", "", step * (1 + rng.Normal(0, 0.01)));
    }
  }
  std::vector<Alert> alerts = h.Finish();
  std::erase_if(alerts, [](const Alert& a) { return a.machine == "*"; });  // the stall
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].rule, "xid 94");
  EXPECT_EQ(alerts[1].machine, "m1");
  EXPECT_EQ(alerts[1].rule, "peers");
  EXPECT_GT(alerts[1].onset, 1200);
}

// A deviation that began more than a persistence before a rule named a fault of the component
// is not that fault's effect: a GPU drawing an eighth less power than its peers from 400 s (weak:
// its evidence grows at half rate), its XID 79 at 500 s, is named for both.
TEST(DetectorTest, ADeviationFromBeforeTheFaultIsNotItsEffect) {
  Harness h;
  Rng rng(9, 0);
  for (int t = 0; t < 900; ++t) {
    for (int m = 0; m < 8; ++m) {
      const bool low = m == 1 && t >= 400;
      for (int g = 0; g < 2; ++g) {
        h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, (low ? 528 : 600) * (1 + rng.Normal(0, 0.035)));
      }
      h.Feed(t, m, "DCGM_FI_DEV_XID_ERRORS", 0, m == 1 && t >= 500 ? 79 : 0);
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 2u);
  EXPECT_EQ(alerts[0].rule, "xid 79");
  EXPECT_EQ(alerts[0].detected, 500);
  EXPECT_EQ(alerts[1].machine, "m1");
  EXPECT_EQ(AlertKindName(alerts[1].kind), "divergence");
  EXPECT_GT(alerts[1].detected, 500);
  EXPECT_LT(alerts[1].onset, 500);  // the deviation from before, not a later one
}

// A hang of every rank: one job-level alert after the stall time, for the whole job, whether
// one machine stalled 20 s before the others or all at once; never an alert on each healthy
// peer.
TEST(DetectorTest, AJobWideStallIsOneJobAlert) {
  for (const bool one_first : {true, false}) {
    SCOPED_TRACE(one_first);
    Harness h;
    h.Run(16, 0, 1400, "DCGM_FI_DEV_POWER_USAGE", [&](int m, int t) {
      if (one_first && m == 7 && t >= 600) return 80.0;
      return t >= 620 ? 80.0 + m : 600.0;
    });
    const std::vector<Alert> alerts = h.Finish();
    for (const Alert& a : alerts) SCOPED_TRACE(DumpJson(AlertToJson(a)));
    ASSERT_EQ(alerts.size(), 1u) << DumpJson(AlertToJson(alerts.front()));
    EXPECT_EQ(AlertKindName(alerts[0].kind), "job");
    EXPECT_EQ(alerts[0].rule, "stall");
    EXPECT_EQ(alerts[0].machine, "*");
    EXPECT_NEAR(alerts[0].detected - alerts[0].onset, 300, 2);
  }
}

// The hang's rank differs from its stalled peers (its GPUs spin in their own kernel at 200 W,
// theirs in NCCL at 160 W, once the job has trained at 600 W; tensor activity and PCIe traffic
// stop everywhere): the job-level alert names it, with its power as evidence. (Its power is
// named as a divergence too, here, where training power hardly scattered; no other machine is.)
TEST(DetectorTest, AJobLevelStallNamesTheMachineThatDiffersFromItsStalledPeers) {
  Harness h;
  Rng rng(12, 0);
  const auto noisy = [&](double v) { return v * (1 + rng.Normal(0, 0.01)); };
  for (int t = 0; t < 1100; ++t) {
    for (int m = 0; m < 16; ++m) {
      for (int g = 0; g < 2; ++g) {
        h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, noisy(t < 600 ? 600 : m == 7 ? 200 : 160));
        h.Feed(t, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", g, noisy(t < 600 ? 0.6 : 0.001));
        h.Feed(t, m, "DCGM_FI_PROF_PCIE_TX_BYTES", g, noisy(t < 600 ? 1e9 : 1e6));
      }
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  for (const Alert& a : alerts) EXPECT_EQ(a.machine, "m7") << DumpJson(AlertToJson(a));
  const auto stall = std::find_if(alerts.begin(), alerts.end(), [](const Alert& a) {
    return AlertKindName(a.kind) == "job" && a.rule == "stall";
  });
  ASSERT_NE(stall, alerts.end());
  EXPECT_NEAR(stall->detected - stall->onset, 300, 2);
  ASSERT_FALSE(stall->evidence.empty());
  EXPECT_EQ(stall->evidence[0].signal, "gpu_power");
  EXPECT_NEAR(stall->evidence[0].value, 200, 5);
  EXPECT_NEAR(stall->evidence[0].peer_median, 160, 5);
}

// A machine with a fault of its own under way since before the job last restarted counts in a
// stall only where no other machine differs (Detector::FollowOwnFaults). kLost: machines m12 and
// m13 lose a GPU (XID 79, shown since) and idle at 70 W; the job hangs (the first stall: their
// faults began while it ran, and may be its cause, so it cannot tell), is restarted without
// them, and hangs again with m7's GPUs spinning in their own kernel at 200 W. The second stall
// names m7. kTwice: m7 hangs the job twice; a stall that named it (or a divergence) is no fault of
// its own, and the next stall names it again. kIdleLink: one hang, m7 hung idle at 70 W, its PCIe
// links falling to a slower generation as idle GPUs do (a pcie_gen alert after a minute), and m3
// at 200 W as the stall begins, for a reason of its own: a slower link is no fault that explains
// m7's difference, and the stall cannot tell. kLate: m3 at 200 W only from 1100, 200 s into the
// stall (jobgen's seed 63,004: a network burst 4 minutes into a hang): a difference that began
// well after the stall did followed it, and the stall names m7.
TEST(DetectorTest, AStallTakesAMachineWhoseOwnFaultIsNotItsCauseOnlyWhereNoOtherDiffers) {
  enum class Case { kLost, kTwice, kIdleLink, kLate };
  for (const Case c : {Case::kLost, Case::kTwice, Case::kIdleLink, Case::kLate}) {
    SCOPED_TRACE(static_cast<int>(c));
    Harness h;
    Rng rng(12, 0);
    const auto noisy = [&](double v) { return v * (1 + rng.Normal(0, 0.01)); };
    for (int t = 0; t < 2400; ++t) {
      const bool one_hang = c == Case::kIdleLink || c == Case::kLate;
      const bool training = t < 900 || (!one_hang && t >= 1600 && t < 1780);
      const bool hung = c != Case::kLost || t >= 1780;
      for (int m = 0; m < 16; ++m) {
        const bool lost = c == Case::kLost && (m == 12 || m == 13) && t >= 880;
        double power = lost ? 70 : training ? 600 : m == 7 && hung ? 200 : 160;
        if (one_hang && !training) {
          const bool odd = m == 3 && t >= (c == Case::kLate ? 1100 : 900);
          power = m == 7 ? (c == Case::kLate ? 200 : 70) : odd ? 200 : 160;
        }
        for (int g = 0; g < 2; ++g) {
          h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, noisy(power));
          h.Feed(t, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", g,
                 noisy(training && !lost ? 0.6 : 0.001));
          h.Feed(t, m, "DCGM_FI_PROF_PCIE_TX_BYTES", g, noisy(training && !lost ? 1e9 : 1e6));
        }
        h.Feed(t, m, "DCGM_FI_DEV_XID_ERRORS", 0, lost ? 79 : 0);
        const bool slow_link = c == Case::kIdleLink && m == 7 && !training;
        h.Feed(t, m, "DCGM_FI_DEV_PCIE_LINK_GEN", 0, slow_link ? 1 : 4);
        h.Feed(t, m, "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", 0, 4);
      }
    }
    const std::vector<Alert> alerts = h.Finish();
    std::vector<std::string> stalls;
    bool gen = false;
    for (const Alert& a : alerts) {
      if (a.rule == "stall") stalls.push_back(a.machine);
      gen |= a.rule == "pcie_gen" && a.machine == "m7";
    }
    EXPECT_EQ(gen, c == Case::kIdleLink);
    const std::vector<std::string> expected = c == Case::kLost ? std::vector<std::string>{"*", "m7"}
                                              : c == Case::kTwice
                                                  ? std::vector<std::string>{"m7", "m7"}
                                              : c == Case::kLate ? std::vector<std::string>{"m7"}
                                                                 : std::vector<std::string>{"*"};
    EXPECT_EQ(stalls, expected);
  }
}

// The alerts on a job of 16 machines of 2 GPUs that trains at 600 W (tensor activity and PCIe
// traffic up) where `training`, and hangs elsewhere, each rank at `hung_power`; machine m sends
// nothing where `down`; the PCIe link of `narrowed`'s first GPU is half its width from 600 s.
struct StallJob {
  int end = 1500;
  std::function<bool(int)> training;
  std::function<double(int, int)> hung_power;
  std::function<bool(int, int)> down = [](int, int) { return false; };
  int narrowed = -1;
};
std::vector<Alert> AlertsOf(const StallJob& j) {
  Harness h;
  Rng rng(12, 0);
  const auto noisy = [&](double v) { return v * (1 + rng.Normal(0, 0.01)); };
  for (int t = 0; t < j.end; ++t) {
    const bool training = j.training(t);
    for (int m = 0; m < 16; ++m) {
      if (j.down(m, t)) continue;
      for (int g = 0; g < 2; ++g) {
        h.Feed(t, m, "DCGM_FI_DEV_PCIE_LINK_WIDTH", g,
               m == j.narrowed && g == 0 && t >= 600 ? 8 : 16);
        h.Feed(t, m, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", g, 16);
        h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, noisy(training ? 600 : j.hung_power(m, t)));
        h.Feed(t, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", g, noisy(training ? 0.6 : 0.001));
        h.Feed(t, m, "DCGM_FI_PROF_PCIE_TX_BYTES", g, noisy(training ? 1e9 : 1e6));
      }
    }
  }
  return h.Finish();
}

// The machines the job-level stalls of AlertsOf(j) name, in order.
std::vector<std::string> StallsOf(const StallJob& j) {
  std::vector<std::string> stalls;
  for (const Alert& a : AlertsOf(j)) {
    if (a.rule == "stall") stalls.push_back(a.machine);
  }
  return stalls;
}

// A machine that goes down while the job runs hangs it: silent, it has no fresh sample to differ
// on in the stall, and it differs for its own fault (jobgen's seed 69,004: gpu-node-047 went down,
// and the stall named gpu-node-038, whose network burst 4 minutes into the stall was the only
// difference). m7 falls silent at 880 s and the others hang at 900 s; kAlone: no other machine
// differs, kLateBurst: m3 at 200 W from 1100 s (a difference that followed the stall), and both
// stalls name m7. kAfter: m7 falls silent at 1000 s, 100 s into the stall (it followed the hang),
// and the stall cannot tell. kNarrowed: m7 does not go down but hangs at 200 W among peers at
// 160 W, and m5's PCIe link was narrowed at 600 s (a fault of its own, named, that began while the
// job ran): m5 reports and differs on nothing, and the stall names m7.
TEST(DetectorTest, AMachineThatWentDownBeforeTheStallMayBeItsCause) {
  enum class Case { kAlone, kLateBurst, kAfter, kNarrowed };
  for (const Case c : {Case::kAlone, Case::kLateBurst, Case::kAfter, Case::kNarrowed}) {
    SCOPED_TRACE(static_cast<int>(c));
    const int down = c == Case::kAfter ? 1000 : c == Case::kNarrowed ? 1500 : 880;
    std::vector<std::string> stalls, own;
    for (const Alert& a : AlertsOf({.training = [](int t) { return t < 900; },
                          .hung_power =
                                        [&](int m, int t) {
                                          const bool odd =
                                              (c == Case::kLateBurst && m == 3 && t >= 1100) ||
                                              (c == Case::kNarrowed && m == 7);
                                          return odd ? 200.0 : 160.0;
                                        },
                          .down = [&](int m, int t) { return m == 7 && t >= down; },
                          .narrowed = c == Case::kNarrowed ? 5 : -1})) {
      if (a.rule == "stall") stalls.push_back(a.machine);
      if (AlertKindName(a.kind) == "missing" || a.rule == "pcie_width") own.push_back(a.machine);
    }
    EXPECT_EQ(own, std::vector<std::string>{c == Case::kNarrowed ? "m5" : "m7"});
    EXPECT_EQ(stalls, std::vector<std::string>{c == Case::kAfter ? "*" : "m7"});
  }
}

// A silence is a stall's possible cause only where it began just before the stall (a reviewer's
// cases): m7 down at 300 s, the job training on without it until it hangs at 900 s, did not hang
// it (m3 at 200 W is named; with no other difference, `*`); nor did m7 down at 1800 s, after the
// restart that ended a first stall (m5's), in a second hang at 2200 s. And it is dated by its own
// last sample, not by an earlier fault: m5's PCIe link narrowed at 600 s, m7 hangs the job at
// 900 s, and m5 goes down at 1000 s, in the stall (it followed it), or misses its scrapes for 10 s
// around the report: the stall names m7.
TEST(DetectorTest, ASilenceLongBeforeTheStallOrSinceItBeganIsNoCause) {
  const auto first_hang = [](int t) { return t < 900; };
  for (const bool cause : {true, false}) {
    SCOPED_TRACE(cause);
    EXPECT_EQ(StallsOf({.training = first_hang,
                        .hung_power = [&](int m, int) { return cause && m == 3 ? 200.0 : 160.0; },
                        .down = [](int m, int t) { return m == 7 && t >= 300; }}),
              std::vector<std::string>{cause ? "m3" : "*"});
  }
  EXPECT_EQ(StallsOf({.end = 2800,
                      .training = [](int t) { return t < 900 || (t >= 1600 && t < 2200); },
                      .hung_power =
                          [](int m, int t) {
                            return (t < 1600 && m == 5) || (t >= 2200 && m == 3) ? 200.0 : 160.0;
                          },
                      .down = [](int m, int t) { return m == 7 && t >= 1800; }}),
            (std::vector<std::string>{"m5", "m3"}));
  const auto m7_hangs = [](int m, int) { return m == 7 ? 200.0 : 160.0; };
  EXPECT_EQ(StallsOf({.training = first_hang,
                      .hung_power = m7_hangs,
                      .down = [](int m, int t) { return m == 5 && t >= 1000; },
                      .narrowed = 5}),
            std::vector<std::string>{"m7"});
  EXPECT_EQ(StallsOf({.training = first_hang,
                      .hung_power = m7_hangs,
                      .down = [](int m, int t) { return m == 5 && t >= 1204 && t < 1214; },
                      .narrowed = 5}),
            std::vector<std::string>{"m7"});
}

// A job that hangs as its restart begins, after a first hang that lasted longer than it had
// trained (jobgen's seed 56,003: a GPU lost, the job hung for the 10 minutes of its watchdog, was
// restarted, and a rank hung as the restarted job began): every rank's power spins at 160 W in a
// hang and the first hang said `*`; 3 minutes of init at 70 W, 20 s of training, then m7's GPUs
// spin in their own kernel at 200 W among peers at 160 W. The usual level of power is the
// training's, not the first hang's (no feature's level follows a job-level stall), so power moved
// in the second stall and the machines are compared on it: m7 is named. With power's level at the
// first hang's 160 W, the second stall said `*` too.
TEST(DetectorTest, ALongFirstHangIsNoUsualLevelForTheNext) {
  Harness h;
  Rng rng(12, 0);
  const auto noisy = [&](double v) { return v * (1 + rng.Normal(0, 0.01)); };
  for (int t = 0; t < 2400; ++t) {
    const bool training = t < 700 || (t >= 1680 && t < 1700);
    const bool init = t >= 1500 && t < 1680;
    for (int m = 0; m < 16; ++m) {
      const double power = training ? 600 : init ? 70 : m == 7 && t >= 1700 ? 200 : 160;
      // Util: 100 in training and in a hang (every rank spins), 8 over the restart's init.
      for (int g = 0; g < 2; ++g) {
        h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, noisy(power));
        h.Feed(t, m, "DCGM_FI_DEV_GPU_UTIL", g, noisy(init ? 8 : 100));
        h.Feed(t, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", g, noisy(training ? 0.6 : 0.001));
        h.Feed(t, m, "DCGM_FI_PROF_PCIE_TX_BYTES", g, noisy(training ? 1e9 : 1e6));
        h.Feed(t, m, "DCGM_FI_PROF_NVLINK_TX_BYTES", g, noisy(training ? 5e10 : 1e3));
      }
    }
  }
  std::vector<std::string> stalls;
  for (const Alert& a : h.Finish()) {
    if (a.rule == "stall") stalls.push_back(a.machine);
  }
  EXPECT_EQ(stalls, (std::vector<std::string>{"*", "m7"}));
}

// Corrected NVLink errors now and then are no fault; hundreds a second are. A host's CPU busy
// for a minute (cron, log rotation) is no fault either: cpu_idle needs two minutes.
TEST(DetectorTest, ThresholdsAndPersistenceComeFromTheSignalMap) {
  Harness h;
  Rng rng(9, 0);
  double crc0 = 0, crc1 = 0;
  for (int t = 0; t < 900; ++t) {
    crc0 += t % 60 == 0 ? 3 : 0;  // m0: 3 errors a minute
    crc1 += t >= 500 ? 200 : 0;   // m1: 200 a second from 500 s
    for (int m = 0; m < 8; ++m) {
      h.Feed(t, m, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", 0,
             m == 0   ? crc0
             : m == 1 ? crc1
                      : 0);
      // m2's CPU is busy for 90 s at 400 s.
      const double idle = m == 2 && t >= 400 && t < 490 ? 0.3 : 0.9;
      h.Feed(t, m, "cpu_idle", 0, idle * (1 + rng.Normal(0, 0.01)));
    }
  }
  const std::vector<Alert> alerts = h.Finish();
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].machine, "m1");
  EXPECT_EQ(alerts[0].rule, "nvlink_crc_errors");
}

// An error counter is judged by its errors, not by one sample's rate, at 1, 5, 15 and 60 s:
// - m0, a healthy link: 3 corrected errors every 61 s (at every phase of its scrapes: over 1 s
//   they once read as 3 a second), beside an ECC counter of the same GPU that stays at 0;
// - m2: a steady 0.5 a second, under the threshold of 1 (60 s of it is 30 errors in a sample);
// - m1: 200 a second from 1800 s to 2400 s, one alert at its first sample; a single error at
//   3300 s, after the re-arm time, is none (the bucket does not keep the failing stretch);
// - m3: an uncorrectable ECC error at 1000 s, then its NVLink failing from 1100 s: two causes,
//   two alerts (one does not hide the other).
TEST(DetectorTest, ErrorCountersAreJudgedByTheirErrorsAtAnyCadence) {
  for (const int interval : {1, 5, 15, 60}) {
    Harness h;
    double crc[4] = {0, 0, 0, 0}, ecc3 = 0;
    for (int t = 0; t < 4200; ++t) {
      crc[0] += t % 61 == 0 ? 3 : 0;
      crc[1] += (t >= 1800 && t < 2400 ? 200 : 0) + (t == 3300 ? 1 : 0);
      crc[2] += 0.5;
      crc[3] += t >= 1100 ? 200 : 0;
      ecc3 += t == 1000 ? 1 : 0;
      if (t % interval != 0) continue;
      for (int m = 0; m < 8; ++m) {
        h.Feed(t, m, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", 0, m < 4 ? crc[m] : 0);
        h.Feed(t, m, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 0, m == 3 ? ecc3 : 0);
      }
    }
    std::vector<std::string> got;
    for (const Alert& a : h.Finish()) {
      got.push_back(fmt::format("{} {} {}", a.machine, a.rule, a.detected));
    }
    const auto first = [&](int t) { return (t + interval - 1) / interval * interval; };
    const std::vector<std::string> want = {
        fmt::format("m3 ecc_uncorrectable {}", first(1000)),
        fmt::format("m3 nvlink_crc_errors {}", first(1100)),
        fmt::format("m1 nvlink_crc_errors {}", first(1800)),
    };
    EXPECT_EQ(got, want) << "every " << interval << " s";
  }
}

// A file of normalised signals (`vigil simulate telemetry --out`) carries an error counter's
// rate as a gauge already: its errors are that rate over the time since its previous sample.
TEST(DetectorTest, AnErrorRateWrittenAsAGaugeIsJudgedByItsErrorsToo) {
  for (const int interval : {1, 15}) {
    Harness h;
    for (int t = 0; t < 1800; t += interval) {
      for (int m = 0; m < 8; ++m) {
        const double rate = m == 1 && t >= 900 ? 200 : m == 0 ? 0.05 : 0;
        h.Feed(t, m, "nvlink_crc_errors", 0, rate);
      }
    }
    const std::vector<Alert> alerts = h.Finish();
    ASSERT_EQ(alerts.size(), 1u) << "every " << interval << " s";
    EXPECT_EQ(alerts[0].machine, "m1");
    EXPECT_EQ(alerts[0].rule, "nvlink_crc_errors");
    EXPECT_EQ(alerts[0].detected, 900) << "every " << interval << " s";
  }
}

TEST(AlertJsonTest, RoundTripsAndRejectsWhatItCannotRead) {
  Alert a{"gpu-07", AlertKind::kRule, "xid 79", "gpu3", 100.5, 102, {{"xid", "gpu3", 79, 0, 0}}};
  const Json j = AlertToJson(a);
  const Result<Alert> back = AlertFromJson(j, "alerts:1");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(DumpJson(AlertToJson(*back)), DumpJson(j));
  // A divergence says which reference its expected value is.
  Alert d{"gpu-08",
          AlertKind::kDivergence,
          "peers",
          "",
          90,
          100,
          {{"step_time", "mean", 2.6, 1.6, 9.5, 0.62, "own_past"}}};
  const Result<Alert> d_back = AlertFromJson(AlertToJson(d), "alerts:2");
  ASSERT_TRUE(d_back.ok()) << d_back.status().message();
  EXPECT_EQ(d_back->evidence.at(0).reference, "own_past");

  const Result<Alert> minimal =
      AlertFromJson(Json{{"machine", "m"}, {"kind", "divergence"}, {"detected", 5}}, "x");
  ASSERT_TRUE(minimal.ok());
  EXPECT_EQ(minimal->onset, 5);

  for (const char* bad :
       {R"({"kind": "rule", "detected": 1})", R"({"machine": "", "kind": "rule",
      "detected": 1})",
        R"({"machine": "m", "kind": "rule", "detected": "soon"})",
        R"({"machine": "m", "kind": "rule", "detected": 1, "evidence": [3]})", R"([1])"}) {
    const Result<Alert> r = AlertFromJson(Json::parse(bad), "alerts:7");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message().rfind("alerts:7", 0), 0u) << r.status().message();
  }
}

TEST(AlertJsonTest, ParsesStreamsAndArraysAndNamesTheLine) {
  const std::string line1 =
      DumpJson(AlertToJson({"gpu-07", AlertKind::kRule, "xid 79", "gpu3", 1, 2, {}}));
  const std::string line2 = R"({"machine": "gpu-09", "kind": "divergence", "detected": 130})";
  Result<std::vector<Alert>> stream = ParseAlerts(line1 + "\n\n  \n" + line2 + "\n", "a.jsonl");
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  ASSERT_EQ(stream->size(), 2u);
  EXPECT_EQ((*stream)[0].rule, "xid 79");
  EXPECT_EQ((*stream)[1].machine, "gpu-09");

  Result<std::vector<Alert>> array = ParseAlerts(" [" + line1 + ", " + line2 + "]", "body");
  ASSERT_TRUE(array.ok()) << array.status().message();
  EXPECT_EQ(array->size(), 2u);

  const auto error = [](std::string_view text) {
    Result<std::vector<Alert>> r = ParseAlerts(text, "a.jsonl");
    EXPECT_FALSE(r.ok()) << text;
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  EXPECT_EQ(error(line1 + "\n{\"machine\": \"m\", \"kind\": \"rule\"}\n"),
            "a.jsonl:2: detected: missing");
  EXPECT_EQ(error(line1 + "\n{oops\n").rfind("a.jsonl:2:", 0), 0u);
  EXPECT_EQ(error("[" + line1 + ", {}]").rfind("a.jsonl: alert 2: machine", 0), 0u);
  EXPECT_EQ(error("[]"), "a.jsonl: no alert");
  EXPECT_EQ(error(" \n\n"), "a.jsonl: no alert");
  EXPECT_EQ(error("{\"a\": 1}").rfind("a.jsonl:1: machine", 0), 0u);
  EXPECT_FALSE(ParseAlerts("[1, 2", "a.jsonl").ok());
}

TEST(AlertJsonTest, KindsAreTheDetectorsOwn) {
  for (const AlertKind k :
       {AlertKind::kRule, AlertKind::kDivergence, AlertKind::kMissing, AlertKind::kJob}) {
    EXPECT_EQ(*ParseAlertKind(AlertKindName(k)), k) << AlertKindName(k);
  }
  EXPECT_EQ(AlertFromJson(Json::parse(R"({"machine": "m", "kind": "r", "detected": 5})"), "a:1")
                .status()
                .message(),
            "a:1: kind: expected rule, divergence, missing or job, got \"r\"");
}

TEST(AlertJsonTest, TimesAndEvidenceOutsideTheirRangesAreNamed) {
  const auto error = [](const char* text) {
    return AlertFromJson(Json::parse(text), "a:1").status().message();
  };
  EXPECT_EQ(error(R"({"machine": "m", "kind": "rule", "detected": 9.2e18})"),
            "a:1: detected: 9.2e+18 is outside [0, 7258118400] (Unix seconds, years 1970 to 2200)");
  EXPECT_EQ(error(R"({"machine": "m", "kind": "rule", "detected": 5, "onset": -3})"),
            "a:1: onset: -3 is outside [0, 7258118400] (Unix seconds, years 1970 to 2200)");
  EXPECT_EQ(
      error(
          R"({"machine": "m", "kind": "rule", "detected": 5, "evidence": [{"signal": "s", "value": 1e300}]})"),
      "a:1: evidence[0]: value: 1e+300 is outside [-1e+100, 1e+100]");
  EXPECT_TRUE(
      AlertFromJson(
          Json::parse(R"({"machine": "m", "kind": "rule", "detected": 5, "onset": null})"), "a:1")
          .ok());
}

// A job that fails a few minutes into its start and is requeued (every GPU idle at
// 70 W for seven minutes), then comes back: `full_s` seconds at the old load (a validation pass
// at the checkpoint's load), then for good a much lighter job on the same hosts (100 W of 600,
// tensor activity 0.03 of 0.6, PCIe and NVLink a tenth or less; utilisation and temperature
// above a fifth of theirs). DCGM every `cadence` seconds, each host at its own phase. The step
// time every 15 s before the failure; in the light job as `steps`:
//   kFresh: every 15 s, each iteration's own value;
//   kPushed: none from the trainer, but a Pushgateway keeps the old job's last value and is
//            scraped every 15 s (an exact repeat: held) through the idle time and after.
//   kGone: none (the restarted job runs without the exporter).
// From 900 s into the light load m5's GPUs run slow (power, utilisation and tensor activity at
// 0.6 of their peers'). Returns {a stall reported after the job came back, m5 named}.
enum class LightSteps { kFresh, kPushed, kGone };
struct LightRestart {
  int cadence = 15;
  int first_s = 300;
  int full_s = 60;
  LightSteps steps = LightSteps::kFresh;
};
std::pair<bool, bool> RunLightRestart(const LightRestart& c, uint64_t seed) {
  Harness h;
  Rng rng(seed, 0);
  const auto noisy = [&](double v) { return v * (1 + rng.Normal(0, 0.01)); };
  std::vector<int> phase(16), step_phase(16);
  std::vector<double> last_step(16, 10);
  for (int m = 0; m < 16; ++m) {
    phase[m] = static_cast<int>(rng.Below(static_cast<uint64_t>(c.cadence)));
    step_phase[m] = static_cast<int>(rng.Below(15));
  }
  const int idle_from = c.first_s, back = idle_from + 420, light_from = back + c.full_s;
  const int fault = light_from + 900, end = light_from + 2400;
  for (int t = 0; t < end; ++t) {
    const bool idle = t >= idle_from && t < back;
    const bool light = t >= light_from;
    for (int m = 0; m < 16; ++m) {
      if ((t + phase[m]) % c.cadence == 0) {
        const double slow = m == 5 && t >= fault ? 0.6 : 1.0;
        for (int g = 0; g < 2; ++g) {
          h.Feed(t, m, "DCGM_FI_DEV_POWER_USAGE", g, noisy(idle ? 70 : light ? 100 * slow : 600));
          h.Feed(t, m, "DCGM_FI_DEV_GPU_UTIL", g,
                 std::round(noisy(idle    ? 0
                                  : light ? 60 * slow
                                          : 100)));
          h.Feed(t, m, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", g,
                 idle ? 0 : noisy(light ? 0.03 * slow : 0.6));
          h.Feed(t, m, "DCGM_FI_PROF_PCIE_TX_BYTES", g, noisy(idle ? 1e5 : light ? 1e8 : 1e9));
          h.Feed(t, m, "DCGM_FI_PROF_NVLINK_TX_BYTES", g, noisy(idle ? 1e3 : light ? 4e9 : 5e10));
          h.Feed(t, m, "DCGM_FI_DEV_GPU_TEMP", g, std::round(noisy(idle ? 35 : light ? 42 : 70)));
        }
      }
      const bool scrape15 = (t + step_phase[m]) % 15 == 0;
      if (t < idle_from || (t >= back && !light)) {
        if (scrape15) h.Feed(t, m, "training_step_seconds", 0, last_step[m] = noisy(10));
      } else if (c.steps == LightSteps::kPushed) {
        if (scrape15) h.Feed(t, m, "training_step_seconds", 0, last_step[m]);
      } else if (light && c.steps == LightSteps::kFresh) {
        if (scrape15) h.Feed(t, m, "training_step_seconds", 0, last_step[m] = noisy(6));
      }
    }
  }
  bool stalled = false, named = false;
  for (const Alert& a : h.Finish()) {
    if (a.rule == "stall" && a.onset >= back) stalled = true;
    if (a.machine == "m5" && a.onset >= fault - 60) named = true;
  }
  return {stalled, named};
}

// The restarted job runs lighter and its trainer exports a fresh step time every 15 s
// throughout: the change's own "a restarted job that runs lighter (its step times fresh)".
// The lighter load is no stall. (Session 70's 1005fe3 reported one in 8 of 10 seeds: some signal,
// perhaps the integer GPU temperature holding at 42 degrees, read as a job that stopped.)
TEST(DetectorTest, ALighterRestartWithFreshStepTimesIsNoStall) {
  int stalls = 0, named = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const auto [stalled, m5] = RunLightRestart({.cadence = 15, .first_s = 240, .full_s = 30}, seed);
    stalls += stalled;
    named += m5;
  }
  EXPECT_LE(stalls, 2);
  EXPECT_GE(named, 8);  // the slow machine in the lighter job (10 of 10 when written)
}

// The restarted lighter job exports no step time: the Pushgateway keeps serving the failed job's
// last value (held on every host), or there is no exporter at all. The job still runs, at its
// lighter load, and is no stall (1005fe3 reported one in 10 of 10 seeds of each).
TEST(DetectorTest, ALighterRestartWithoutFreshStepTimesIsNoStall) {
  for (const LightSteps steps : {LightSteps::kPushed, LightSteps::kGone}) {
    for (const LightRestart& c : {LightRestart{.cadence = 30, .first_s = 360, .full_s = 30},
                                  LightRestart{.cadence = 15, .first_s = 240, .full_s = 30}}) {
      SCOPED_TRACE(::testing::Message() << "cadence " << c.cadence << ", step times "
                                        << (steps == LightSteps::kPushed ? "held" : "gone"));
      int stalls = 0, named = 0;
      for (uint64_t seed = 1; seed <= 10; ++seed) {
        LightRestart light = c;
        light.steps = steps;
        const auto [stalled, m5] = RunLightRestart(light, seed);
        stalls += stalled;
        named += m5;
      }
      EXPECT_LE(stalls, 2);
      EXPECT_GE(named, 8);  // 10 of 10 when written
    }
  }
}

}  // namespace
}  // namespace vigil::detect
