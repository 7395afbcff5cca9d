#include "vigil/telemetry/signals.h"

#include <gtest/gtest.h>

namespace vigil::telemetry {
namespace {

TEST(SignalMapTest, DefaultMapsDcgmAndNodeExporterNames) {
  const SignalMap map = SignalMap::Default();
  const SignalMapping* util = map.Find("DCGM_FI_DEV_GPU_UTIL", {});
  ASSERT_NE(util, nullptr);
  EXPECT_EQ(util->signal, "gpu_util");
  EXPECT_FALSE(util->counter);
  const SignalMapping* xid = map.Find("DCGM_FI_DEV_XID_ERRORS", {});
  ASSERT_NE(xid, nullptr);
  EXPECT_EQ(xid->role, SignalRole::kXid);
  // node_cpu_seconds_total counts only in idle mode.
  EXPECT_EQ(map.Find("node_cpu_seconds_total", {{"cpu", "0"}, {"mode", "user"}}), nullptr);
  const SignalMapping* idle = map.Find("node_cpu_seconds_total", {{"mode", "idle"}});
  ASSERT_NE(idle, nullptr);
  EXPECT_TRUE(idle->counter);
  EXPECT_TRUE(map.Knows("node_cpu_seconds_total"));
  // Canonical names map to themselves with their roles (normalised files).
  ASSERT_NE(map.Find("ecc_uncorrectable", {}), nullptr);
  EXPECT_EQ(map.Find("ecc_uncorrectable", {})->role, SignalRole::kErrorCounter);
  EXPECT_FALSE(map.Find("ecc_uncorrectable", {})->counter);
  EXPECT_EQ(map.Find("my_own_metric", {}), nullptr);
}

TEST(SignalMapTest, YamlExtendsAndReplaces) {
  SignalMap map = SignalMap::Default();
  ASSERT_TRUE(map.AddYaml(R"(signals:
  - {metric: my_step_seconds, signal: step_time}
  - {metric: DCGM_FI_DEV_GPU_UTIL, signal: util_share, scale: 0.01}
  - {metric: my_errors_total, signal: my_errors, type: counter, role: error_counter}
  - {metric: node_cpu_seconds_total, label: mode, value: iowait, signal: cpu_iowait, type: counter}
)",
                          "s.yaml")
                  .ok());
  EXPECT_EQ(map.Find("my_step_seconds", {})->signal, "step_time");
  EXPECT_EQ(map.Find("DCGM_FI_DEV_GPU_UTIL", {})->signal, "util_share");
  EXPECT_DOUBLE_EQ(map.Find("DCGM_FI_DEV_GPU_UTIL", {})->scale, 0.01);
  EXPECT_EQ(map.Find("my_errors_total", {})->role, SignalRole::kErrorCounter);
  EXPECT_EQ(map.Find("node_cpu_seconds_total", {{"mode", "iowait"}})->signal, "cpu_iowait");
  EXPECT_EQ(map.Find("node_cpu_seconds_total", {{"mode", "idle"}})->signal, "cpu_idle");
}

TEST(SignalMapTest, DirectionThresholdAndPersistence) {
  SignalMap map = SignalMap::Default();
  EXPECT_EQ(map.Find("training_step_seconds", {})->worse, Worse::kHigher);
  EXPECT_EQ(map.Find("step_time", {})->worse, Worse::kHigher);  // under its own name too
  EXPECT_DOUBLE_EQ(map.Find("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", {})->threshold, 1);
  EXPECT_DOUBLE_EQ(map.Find("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", {})->threshold, 0);
  EXPECT_DOUBLE_EQ(map.Find("node_cpu_seconds_total", {{"mode", "idle"}})->persistence, 120);
  EXPECT_TRUE(map.Find("DCGM_FI_DEV_GPU_TEMP", {})->level_by_position);
  EXPECT_TRUE(map.Find("gpu_temp", {})->level_by_position);  // under its own name too
  EXPECT_FALSE(map.Find("DCGM_FI_DEV_POWER_USAGE", {})->level_by_position);
  EXPECT_TRUE(map.Find("training_step_seconds", {})->duration);
  EXPECT_TRUE(map.Find("step_time", {})->duration);  // under its own name too
  EXPECT_FALSE(map.Find("DCGM_FI_DEV_POWER_USAGE", {})->duration);
  ASSERT_TRUE(
      map.AddYaml(
             "signals:\n  - {metric: my_iter_s, signal: iter, worse: higher, "
             "persistence: 1m, duration: true}\n  - {metric: my_errs, signal: errs, type: counter, "
             "role: error_counter, threshold: 0.5}\n  - {metric: inlet_c, signal: "
             "inlet, level_by_position: true}\n",
             "s.yaml")
          .ok());
  EXPECT_EQ(map.Find("my_iter_s", {})->worse, Worse::kHigher);
  EXPECT_DOUBLE_EQ(map.Find("my_iter_s", {})->persistence, 60);
  EXPECT_FALSE(map.Find("my_iter_s", {})->level_by_position);
  EXPECT_TRUE(map.Find("my_iter_s", {})->duration);
  EXPECT_DOUBLE_EQ(map.Find("my_errs", {})->threshold, 0.5);
  EXPECT_TRUE(map.Find("inlet_c", {})->level_by_position);
}

TEST(SignalMapTest, YamlErrorsNameFileLineAndField) {
  SignalMap map;
  EXPECT_EQ(map.AddYaml("signals:\n  - {metric: a}\n", "s.yaml").message(),
            "s.yaml:2: signal: missing");
  EXPECT_EQ(map.AddYaml("signals:\n  - {metric: a, signal: b, type: rate}\n", "s.yaml").message(),
            "s.yaml:2: type: \"rate\" is not gauge or counter");
  EXPECT_NE(map.AddYaml("signals:\n  - {metric: a, signal: b, role: x}\n", "s.yaml")
                .message()
                .find("s.yaml:2: role: \"x\" is not a role"),
            std::string::npos);
  EXPECT_EQ(map.AddYaml("signals:\n  - {metric: a, signal: b, scale: nan}\n", "s.yaml").message(),
            "s.yaml:2: scale: nan is outside [-1000000000000, 1000000000000]");
  EXPECT_EQ(map.AddYaml("signals:\n  - {metric: a, signal: b, scale: 1e13}\n", "s.yaml").message(),
            "s.yaml:2: scale: 1e13 is outside [-1000000000000, 1000000000000]");
  EXPECT_EQ(map.AddYaml("signals:\n  - {metric: a, signal: b, scale: x2}\n", "s.yaml").message(),
            "s.yaml:2: scale: \"x2\" is not a number");
  EXPECT_EQ(map.AddYaml("signals:\n  - {metric: a, signal: b, level_by_position: 1}\n", "s.yaml")
                .message(),
            "s.yaml:2: level_by_position: \"1\" is not true or false");
  EXPECT_EQ(
      map.AddYaml("signals:\n  - {metric: a, signal: b, duration: yes}\n", "s.yaml").message(),
      "s.yaml:2: duration: \"yes\" is not true or false");
  EXPECT_EQ(map.AddYaml("signals:\n  - {metric: a, signal: b, worse: up}\n", "s.yaml").message(),
            "s.yaml:2: worse: \"up\" is not either, higher or lower");
  EXPECT_EQ(
      map.AddYaml("signals:\n  - {metric: a, signal: b, threshold: -1}\n", "s.yaml").message(),
      "s.yaml:2: threshold: -1 is outside [0, 1000000000000]");
  EXPECT_NE(map.AddYaml("signals:\n  - {metric: a, signal: b, persistence: 2h}\n", "s.yaml")
                .message()
                .find("s.yaml:2: persistence: 2h is outside"),
            std::string::npos);
  EXPECT_EQ(map.AddYaml("signals:\n  - {metric: a, signal: b, label: mode}\n", "s.yaml").message(),
            "s.yaml:2: label: 'label' and 'value' go together");
  EXPECT_EQ(map.AddYaml("[1, 2", "s.yaml").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(map.AddYaml("other: 1", "s.yaml").message(),
            "s.yaml: expected a top-level 'signals:' list of mappings");
  EXPECT_TRUE(map.mappings().empty());  // nothing half-added
}

TEST(SignalMapTest, RoleNamesRoundTrip) {
  for (auto r : {SignalRole::kPeer, SignalRole::kXid, SignalRole::kErrorCounter,
                 SignalRole::kLinkWidth, SignalRole::kLinkWidthMax, SignalRole::kLinkGen,
                 SignalRole::kLinkGenMax, SignalRole::kLinkUp}) {
    EXPECT_EQ(ParseRole(RoleName(r)), r);
  }
  EXPECT_FALSE(ParseRole("nope"));
}

}  // namespace
}  // namespace vigil::telemetry
