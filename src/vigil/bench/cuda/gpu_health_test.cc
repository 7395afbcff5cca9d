#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>

#include "vigil/bench/cuda/gpu_benchmarks.h"
#include "vigil/bench/cuda/nvml.h"

namespace vigil {
namespace {

// Metric key -> value, for one GPU's reading.
std::map<std::string, double> ByKey(const std::vector<Metric>& metrics) {
  std::map<std::string, double> out;
  for (const Metric& m : metrics) out[m.key.ToString()] = m.value;
  return out;
}

TEST(GpuHealthTest, WithoutADriverNvmlIsUnavailableWithTheReason) {
  Result<std::unique_ptr<nvml::Library>> lib = nvml::Library::Load("libno-such-nvml.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(lib.status().message().find("no NVIDIA driver: cannot load libno-such-nvml.so.1"),
            std::string::npos)
      << lib.status().message();
  // A library that is not NVML.
  lib = nvml::Library::Load("libz.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.status().message().find("lacks NVML's entry points"), std::string::npos);
}

TEST(GpuHealthTest, ReadingsOfAFakeDriverBecomeMetricsPerGpu) {
  unsetenv("FAKE_NVML_LOST");
  Result<std::unique_ptr<nvml::Library>> lib = nvml::Library::Load(VIGIL_FAKE_NVML);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  ASSERT_EQ(*(*lib)->DeviceCount(), 2);

  Result<nvml::HealthReading> r0 = (*lib)->Read(0);
  ASSERT_TRUE(r0.ok()) << r0.status().ToString();
  EXPECT_EQ(r0->name, "NVIDIA H100 80GB HBM3");
  const auto m0 = ByKey(GpuHealthMetrics(0, *r0));
  EXPECT_EQ(m0.at("gpu-health/pcie_width:0"), 16);
  EXPECT_EQ(m0.at("gpu-health/power_w:0"), 351.2);
  EXPECT_EQ(m0.at("gpu-health/temperature_c:0"), 41);
  EXPECT_EQ(m0.at("gpu-health/row_remap_pending:0"), 0);
  EXPECT_EQ(m0.count("gpu-health/retired_pages_pending:0"), 0u);  // remaps rows instead
  EXPECT_EQ(m0.at("gpu-health/throttle_hw_slowdown:0"), 0);       // idle is not trouble

  Result<nvml::HealthReading> r1 = (*lib)->Read(1);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  const std::vector<Metric> metrics1 = GpuHealthMetrics(1, *r1);
  const auto m1 = ByKey(metrics1);
  EXPECT_EQ(m1.at("gpu-health/pcie_width:1"), 8);
  EXPECT_EQ(m1.at("gpu-health/pcie_width_max:1"), 16);
  EXPECT_EQ(m1.at("gpu-health/ecc_uncorrected_aggregate:1"), 2);
  EXPECT_EQ(m1.at("gpu-health/ecc_uncorrected_volatile:1"), 0);
  EXPECT_EQ(m1.count("gpu-health/remapped_rows_corrected:1"), 0u);  // not supported: absent
  EXPECT_EQ(m1.at("gpu-health/retired_pages_pending:1"), 1);
  EXPECT_EQ(m1.at("gpu-health/throttle_hw_slowdown:1"), 1);
  for (const Metric& m : metrics1) {
    EXPECT_EQ(m.samples, std::vector<double>{m.value}) << m.key.ToString();
    EXPECT_EQ(m.higher_is_better, m.key.metric.rfind("pcie_", 0) == 0) << m.key.ToString();
  }
}

TEST(GpuHealthTest, AGpuThatFellOffTheBusNamesTheCallAndTheGpu) {
  setenv("FAKE_NVML_LOST", "1", 1);
  Result<std::unique_ptr<nvml::Library>> lib = nvml::Library::Load(VIGIL_FAKE_NVML);
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  EXPECT_TRUE((*lib)->Read(0).ok());
  Result<nvml::HealthReading> r1 = (*lib)->Read(1);
  unsetenv("FAKE_NVML_LOST");
  ASSERT_FALSE(r1.ok());
  EXPECT_EQ(r1.status().message(), "nvmlDeviceGetTemperatureV(GPU 1): GPU is lost");
  Result<nvml::HealthReading> none = (*lib)->Read(7);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("GPU 7"), std::string::npos);
}

TEST(GpuHealthTest, GpuSelectionsAreCheckedAgainstTheNode) {
  EXPECT_TRUE(nvml::CheckGpusExist({1, 0}, VIGIL_FAKE_NVML).ok());
  Status s = nvml::CheckGpusExist({0, 9}, VIGIL_FAKE_NVML);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "GPU 9 does not exist: this node has 2 (0-1)");
  s = nvml::CheckGpusExist({0}, "libno-such-nvml.so.1");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("GPU 0 does not exist: no NVIDIA driver"), std::string::npos)
      << s.message();
  BenchContext ctx;
  EXPECT_EQ(ctx.Gpus(3), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(ctx.Gpus(0).empty());
  ctx.gpus = {2};
  EXPECT_EQ(ctx.Gpus(3), std::vector<int>{2});
}

TEST(GpuHealthTest, CudaVisibleDevicesListsGpusByIndexOnly) {
  EXPECT_EQ(nvml::GpusOfCudaVisibleDevices("3").value(), (std::vector<int>{3}));
  EXPECT_EQ(nvml::GpusOfCudaVisibleDevices("2,0,7").value(), (std::vector<int>{2, 0, 7}));
  const Status uuid =
      nvml::GpusOfCudaVisibleDevices("0,GPU-5d3f6a0e-2b4c-4d8e-9f10-123456789abc").status();
  EXPECT_EQ(uuid.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(uuid.message(),
            "\"GPU-5d3f6a0e-2b4c-4d8e-9f10-123456789abc\" is not a GPU index: Vigil numbers GPUs "
            "as nvidia-smi does; unset CUDA_VISIBLE_DEVICES and choose GPUs with --gpus");
  for (const char* bad : {"", "0,", ",1", "-1", "1-3", "0 ,1", "MIG-1", "99999999999"}) {
    EXPECT_FALSE(nvml::GpusOfCudaVisibleDevices(bad).ok()) << bad;
  }
  EXPECT_EQ(nvml::GpusOfCudaVisibleDevices("1,1").status().message(), "GPU 1 is listed twice");
}

TEST(GpuHealthTest, TheBenchmarkIsSkippedWithoutADriver) {
  if (nvml::Library::Load().ok()) GTEST_SKIP() << "this machine has an NVIDIA driver";
  const Status s = MakeGpuHealthBenchmark()->Available(BenchContext{});
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("no NVIDIA driver"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace vigil
