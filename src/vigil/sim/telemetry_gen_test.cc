#include "vigil/sim/telemetry_gen.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace vigil::sim {
namespace {

using telemetry::RawSample;

TelemetryJob SmallJob(std::vector<TelemetryFault> faults = {}) {
  TelemetryJob job;
  job.machines = 4;
  job.duration_s = 120;
  job.faults = std::move(faults);
  return job;
}

TelemetryFault Fault(int machine, TelemetryFaultKind kind, int component = 0) {
  TelemetryFault f;
  f.machine = machine;
  f.onset_s = machine == 1 || machine == 2 ? 10 : 5;
  f.kind = kind;
  f.component = component;
  return f;
}

// Samples per machine in second t.
std::map<std::string, int> CountAt(TelemetryGenerator& gen, int64_t upto) {
  std::map<std::string, int> n;
  for (int64_t t = 0; t <= upto; ++t) {
    n.clear();
    gen.Emit(t, [&](const RawSample& s) { ++n[std::string(s.machine)]; });
  }
  return n;
}

TEST(TelemetryGeneratorTest, EveryMachineReportsEverySeriesEverySecond) {
  TelemetryGenerator gen(SmallJob());
  EXPECT_EQ(gen.SeriesPerSecond(), 4 * 125);
  const auto n = CountAt(gen, 3);
  ASSERT_EQ(n.size(), 4u);
  for (const auto& [machine, count] : n) EXPECT_EQ(count, 125) << machine;
  EXPECT_EQ(gen.MachineName(0), "node0001");
}

TEST(TelemetryGeneratorTest, SameSeedSameTelemetry) {
  TelemetryGenerator a(SmallJob()), b(SmallJob());
  std::vector<double> va, vb;
  for (int64_t t = 0; t < 5; ++t) {
    a.Emit(t, [&](const RawSample& s) { va.push_back(s.value); });
    b.Emit(t, [&](const RawSample& s) { vb.push_back(s.value); });
  }
  EXPECT_EQ(va, vb);
}

TEST(TelemetryGeneratorTest, UnreachableAndCardDropRemoveSeries) {
  const TelemetryFault gone = Fault(1, TelemetryFaultKind::kUnreachable);
  const TelemetryFault drop = Fault(2, TelemetryFaultKind::kCardDrop, 3);
  TelemetryGenerator gen(SmallJob({gone, drop}));
  const auto n = CountAt(gen, 20);
  EXPECT_FALSE(n.contains("node0002"));
  EXPECT_EQ(n.at("node0003"), 125 - 13 - 1);  // the GPU's 13 series and the dead step time
  EXPECT_EQ(n.at("node0001"), 125);
  EXPECT_EQ(gen.LabelsCsv(),
            "machine,onset,kind,end\nnode0002,1800000010,machine_unreachable,\n"
            "node0003,1800000010,gpu_card_drop,\n");
}

TEST(TelemetryGeneratorTest, FaultsLeaveTheirCounterAndRuleTraces) {
  const TelemetryFault ecc = Fault(0, TelemetryFaultKind::kEccUncorrectable, 1);
  const TelemetryFault nic = Fault(3, TelemetryFaultKind::kNicDown, 2);
  TelemetryGenerator gen(SmallJob({ecc, nic}));
  std::map<std::string, double> at4, at6;
  for (int64_t t = 0; t <= 6; ++t) {
    gen.Emit(t, [&](const RawSample& s) {
      const std::string key =
          std::string(s.machine) + "/" + std::string(s.metric) + "/" + std::string(s.component);
      if (t == 4) at4[key] = s.value;
      if (t == 6) at6[key] = s.value;
    });
  }
  EXPECT_EQ(at6["node0001/DCGM_FI_DEV_XID_ERRORS/gpu1"], 48);
  EXPECT_EQ(at6["node0001/DCGM_FI_DEV_ECC_DBE_VOL_TOTAL/gpu1"] -
                at4["node0001/DCGM_FI_DEV_ECC_DBE_VOL_TOTAL/gpu1"],
            1);
  EXPECT_EQ(at6["node0004/node_network_up/ib2"], 0);
  EXPECT_EQ(at6["node0004/node_network_up/ib1"], 1);
}

TEST(TelemetryGeneratorTest, ExpositionReadsBackAsTheSameSamples) {
  TelemetryGenerator gen(SmallJob());
  const std::string text = gen.Exposition(0);
  telemetry::ReadOptions o;
  o.source = "exposition";
  o.default_time = 1;
  int64_t n = 0;
  std::set<std::string> machines;
  ASSERT_TRUE(telemetry::ParseExposition(text, o, [&](const RawSample& s) {
                ++n;
                machines.insert(std::string(s.machine));
              }).ok());
  EXPECT_EQ(n, gen.SeriesPerSecond());
  EXPECT_EQ(machines.size(), 4u);
}

TEST(TelemetryGeneratorTest, FaultKindNamesRoundTrip) {
  for (int k = 0; k < kTelemetryFaultKinds; ++k) {
    const auto kind = static_cast<TelemetryFaultKind>(k);
    EXPECT_EQ(ParseFaultKind(FaultKindName(kind)), kind);
  }
  EXPECT_FALSE(ParseFaultKind("flood"));
  const auto faults = RandomFaults(3, {TelemetryFaultKind::kHang}, 5, 8, 10, 20, 1);
  ASSERT_EQ(faults.size(), 3u);
  std::set<int> on;
  for (const auto& f : faults) {
    on.insert(f.machine);
    EXPECT_GE(f.onset_s, 10);
    EXPECT_LE(f.onset_s, 20);
  }
  EXPECT_EQ(on.size(), 3u);
}

}  // namespace
}  // namespace vigil::sim
