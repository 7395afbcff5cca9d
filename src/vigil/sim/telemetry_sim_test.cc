#include "vigil/sim/telemetry_sim.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::sim {
namespace {

TelemetrySimOptions SmallTelemetry() {
  TelemetrySimOptions o;
  o.machines = 3;
  o.duration_s = 20;
  return o;
}

TEST(TelemetrySimTest, DefaultsAreValid) { EXPECT_TRUE(Validate(TelemetrySimOptions{}).ok()); }

TEST(TelemetrySimTest, EachRejectedOptionIsNamedByItsFlag) {
  const struct {
    void (*set)(TelemetrySimOptions&);
    const char* message;
  } cases[] = {
      {[](TelemetrySimOptions& o) { o.machines = 0; }, "--machines: 0 is outside [1, 100000]"},
      {[](TelemetrySimOptions& o) { o.gpus = 65; }, "--gpus: 65 is outside [1, 64]"},
      {[](TelemetrySimOptions& o) { o.duration_s = 0.5; },
       "--duration: 500ms is outside [1s, 30d]"},
      {[](TelemetrySimOptions& o) {
         o.machines = 100000;
         o.duration_s = 3600;
       },
       "--machines x --duration is 3.6e+08 machine-seconds, more than the 1e+07 one simulation "
       "may generate"},
      {[](TelemetrySimOptions& o) { o.start = -1; },
       "--start: -1 is outside [0, 7258118400] (Unix seconds, years 1970 to 2200)"},
      {[](TelemetrySimOptions& o) { o.start = 7258118000; },
       "--start + --duration: 7258119800 is outside [0, 7258118400] (Unix seconds, years 1970 "
       "to 2200)"},
      {[](TelemetrySimOptions& o) { o.faults = -1; }, "--faults: -1 is outside [0, 100000]"},
      {[](TelemetrySimOptions& o) {
         o.machines = 2;
         o.faults = 3;
       },
       "--faults cannot exceed --machines"},
      {[](TelemetrySimOptions& o) { o.fault_from_s = -1; },
       "--fault-from: -1s is outside [0s, 30d]"},
      {[](TelemetrySimOptions& o) { o.fault_to_s = 31 * 86400.0; },
       "--fault-to: 31d is outside [0s, 30d]"},
      {[](TelemetrySimOptions& o) {
         o.fault_from_s = 1000;
         o.fault_to_s = 900;
       },
       "fault onsets must satisfy --fault-from <= --fault-to < --duration"},
      {[](TelemetrySimOptions& o) { o.fault_to_s = 1800; },
       "fault onsets must satisfy --fault-from <= --fault-to < --duration"},
  };
  for (const auto& c : cases) {
    TelemetrySimOptions o;
    c.set(o);
    const Status s = Validate(o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(s.message(), c.message);
    EXPECT_EQ(TelemetryJobOf(o).status().message(), c.message);
  }
}

TEST(TelemetrySimTest, KindsAreParsedByName) {
  const auto kinds = ParseFaultKinds({"hang", "nic_down"});
  ASSERT_TRUE(kinds.ok());
  EXPECT_EQ(*kinds, (std::vector<TelemetryFaultKind>{TelemetryFaultKind::kHang,
                                                     TelemetryFaultKind::kNicDown}));
  EXPECT_EQ(ParseFaultKinds({"hang", "flood"}).status().message(),
            "--kinds: unknown kind \"flood\"");
}

TEST(TelemetrySimTest, FaultsAreOnDistinctMachinesInTheOnsetWindowAndTakeKindsInTurn) {
  TelemetrySimOptions o;
  o.faults = 4;
  o.kinds = {TelemetryFaultKind::kHang, TelemetryFaultKind::kStraggler};
  o.fault_from_s = 100;
  o.fault_to_s = 200;
  const Result<TelemetryJob> job = TelemetryJobOf(o);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_EQ(job->faults.size(), 4u);
  std::set<int> machines;
  for (size_t i = 0; i < job->faults.size(); ++i) {
    const TelemetryFault& f = job->faults[i];
    machines.insert(f.machine);
    EXPECT_EQ(f.kind, o.kinds[i % 2]);
    EXPECT_GE(f.onset_s, 100);
    EXPECT_LE(f.onset_s, 200);
  }
  EXPECT_EQ(machines.size(), 4u);
  EXPECT_EQ(job->start, o.start);
  // Every kind in turn by default, onsets in the middle half.
  o = TelemetrySimOptions{};
  o.faults = kTelemetryFaultKinds;
  o.machines = kTelemetryFaultKinds;
  const Result<TelemetryJob> all = TelemetryJobOf(o);
  ASSERT_TRUE(all.ok());
  for (int k = 0; k < kTelemetryFaultKinds; ++k) {
    const TelemetryFault& f = all->faults[static_cast<size_t>(k)];
    EXPECT_EQ(f.kind, static_cast<TelemetryFaultKind>(k));
    EXPECT_GE(f.onset_s, o.duration_s / 4);
    EXPECT_LE(f.onset_s, o.duration_s * 3 / 4);
  }
}

TEST(TelemetrySimTest, FileWritesLabelsAndTelemetry) {
  vigil::testing::TempDir dir;
  const Result<int64_t> rows =
      SimulateTelemetryFile(SmallTelemetry(), dir.File("t.csv"), dir.File("labels.csv"));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_GT(*rows, 0);
  const TelemetryGenerator same(*TelemetryJobOf(SmallTelemetry()));
  EXPECT_EQ(*ReadFile(dir.File("labels.csv")), same.LabelsCsv());
  EXPECT_TRUE(ReadFile(dir.File("t.csv")).ok());
}

TEST(TelemetrySimTest, FileRefusesBadOptionsOrAnUnwritableOutputBeforeWritingAnything) {
  vigil::testing::TempDir dir;
  TelemetrySimOptions bad = SmallTelemetry();
  bad.faults = 4;
  EXPECT_EQ(SimulateTelemetryFile(bad, dir.File("t.csv"), dir.File("labels.csv")).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(
      SimulateTelemetryFile(SmallTelemetry(), dir.File("no/such/dir/t.csv"), dir.File("labels.csv"))
          .ok());
  EXPECT_FALSE(ReadFile(dir.File("labels.csv")).ok());
}

TEST(TelemetrySimTest, LiveStartsAtTheClocksWholeSecond) {
  vigil::testing::TempDir dir;
  const FakeClock clock(1.9e9 + 0.75);
  TelemetrySimOptions o = SmallTelemetry();
  o.start = -5;  // not used
  const auto gen = LiveTelemetry(o, dir.File("labels.csv"), clock);
  ASSERT_TRUE(gen.ok()) << gen.status().ToString();
  EXPECT_EQ((*gen)->job().start, 1.9e9);
  EXPECT_TRUE(ReadFile(dir.File("labels.csv")).ok());
  o.machines = 0;
  EXPECT_EQ(LiveTelemetry(o, "", clock).status().message(), "--machines: 0 is outside [1, 100000]");
}

}  // namespace
}  // namespace vigil::sim
