#include "vigil/results/anatomy.h"

#include <gtest/gtest.h>

#include <string>

// The components that SuperBench's keys name, generation by generation (docs/validate.md,
// "Components"). Keys are real: from SuperBench's sources and docs at the tags named, from
// tests/data/superbench_test_results.jsonl (v0.3 names) and from the NDv4 quick-scan baseline
// (v0.4 names).
namespace vigil {
namespace {

std::string ComponentOf(const std::string& key) { return Anatomize(key).component; }

TEST(AnatomyTest, GemmFlopsRankIsTheGpu) {
  EXPECT_EQ(ComponentOf("gemm-flops/FP64:3"), "GPU 3");           // v0.3
  EXPECT_EQ(ComponentOf("gemm-flops/TF32_TC:3"), "GPU 3");        // v0.3
  EXPECT_EQ(ComponentOf("gemm-flops/fp16_tc_flops:3"), "GPU 3");  // v0.4 on
  EXPECT_EQ(ComponentOf("gemm-flops/fp16_tc_flops"), "gemm-flops");
}

TEST(AnatomyTest, KernelLaunchRankIsTheGpu) {
  EXPECT_EQ(ComponentOf("kernel-launch/event_overhead:7"), "GPU 7");  // v0.3
  EXPECT_EQ(ComponentOf("kernel-launch/event_time:7"), "GPU 7");      // v0.4 on
}

TEST(AnatomyTest, CublasAndCudnnRanksAreGpus) {
  // Regression: these came out as "cublas-function:7" and "cudnn-function:7".
  EXPECT_EQ(
      ComponentOf("cublas-function/name_cublassgemm_m_1024_n_7680_k_8192_transa_1_transb_0_time:7"),
      "GPU 7");
  EXPECT_EQ(ComponentOf("cudnn-function/"
                        "name_cudnnconvolutionbackwardfilter_algo_1_arraylength_2_convtype_0_"
                        "dilationa_1_1_filterstridea_1_1_time:7"),
            "GPU 7");
  EXPECT_EQ(ComponentOf("cublas-function/return_code"), "cublas-function");
}

TEST(AnatomyTest, MemBwDeviceToDeviceIsHbm) {
  EXPECT_EQ(ComponentOf("mem-bw/H2D_Mem_BW:1"), "PCIe 1");  // v0.3
  EXPECT_EQ(ComponentOf("mem-bw/D2H_Mem_BW:1"), "PCIe 1");
  EXPECT_EQ(ComponentOf("mem-bw/D2D_Mem_BW:1"), "HBM 1");  // regression: was "PCIe 1"
  EXPECT_EQ(ComponentOf("mem-bw/h2d_bw:1"), "PCIe 1");     // v0.4 on
  EXPECT_EQ(ComponentOf("mem-bw/d2h_bw:1"), "PCIe 1");
  EXPECT_EQ(ComponentOf("mem-bw/d2d_bw:1"), "HBM 1");
  EXPECT_EQ(ComponentOf("mem-bw/return_code"), "mem-bw");
}

TEST(AnatomyTest, GpuSmCopyBwRanksWrapOverEightGpus) {
  // v0.3 ran it as 32 ranks with CUDA_VISIBLE_DEVICES=$((rank % 8)): regression, these came out
  // as GPU 12, 20 and 28 on an 8-GPU node.
  for (const char* key : {"gpu-sm-copy-bw/htod:4", "gpu-sm-copy-bw/htod:12",
                          "gpu-sm-copy-bw/dtoh:20", "gpu-sm-copy-bw/dtoh:28"}) {
    EXPECT_EQ(ComponentOf(key), "PCIe 4") << key;
  }
  EXPECT_EQ(ComponentOf("gpu-sm-copy-bw/dtoh:31"), "PCIe 7");
}

TEST(AnatomyTest, GpuCopyBwIndexesLiveInTheName) {
  // v0.4: "<src>_to_<dst>_by_<worker>_using_<sm|dma>_under_<numa>"
  EXPECT_EQ(ComponentOf("gpu-copy-bw/cpu_to_gpu0_by_gpu0_using_sm_under_numa0_bw"), "PCIe 0");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/gpu3_to_cpu_by_gpu3_using_dma_under_numa1_bw"), "PCIe 3");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/gpu0_to_gpu0_by_gpu0_using_sm_under_numa0_bw"), "HBM 0");
  // v0.6 on.
  EXPECT_EQ(ComponentOf("gpu-copy-bw/cpu_to_gpu5_by_dma_under_numa2_bw"), "PCIe 5");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/cpu_and_gpu6_by_sm_under_numa3_bw"), "PCIe 6");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/gpu2_to_gpu2_by_dma_bw"), "HBM 2");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/gpu0_to_gpu1_write_by_sm_bw"), "NVLink 0-1");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/gpu1_and_gpu0_read_by_dma_bw"), "NVLink 0-1");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/gpu12_to_gpu3_write_by_sm_bw"), "NVLink 3-12");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/gpu_all_to_gpu5_write_by_sm_bw"), "NVLink 5");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/gpu4_to_gpu_all_write_by_sm_bw"), "NVLink 4");
  EXPECT_EQ(ComponentOf("gpu-copy-bw/gpu_all_to_gpu_all_write_by_sm_bw"), "NVLink");
}

TEST(AnatomyTest, AUnitWordEndsWhereAWordEnds) {
  // v0.4's gpu-copy-bw names hold "_using_": a bandwidth, not a time in microseconds.
  EXPECT_EQ(Anatomize("gpu-copy-bw/gpu0_to_gpu4_by_gpu0_using_sm_under_numa0_bw").direction,
            Direction::kHigher);
  EXPECT_EQ(Anatomize("gpu-copy-bw/cpu_to_gpu0_by_gpu0_using_dma_under_numa0_bw").direction,
            Direction::kHigher);
  EXPECT_EQ(Anatomize("disk-benchmark/nvme0n1_rand_read_write_read_lat_ns_99.0").direction,
            Direction::kLower);
  EXPECT_EQ(Anatomize("kernel-launch/event_overhead:3").direction, Direction::kLower);
  EXPECT_EQ(Anatomize("ib-traffic/latency_us:0").direction, Direction::kLower);
  EXPECT_EQ(Anatomize("x/allreduce_us").direction, Direction::kLower);
  EXPECT_EQ(Anatomize("x/step_ms_p99").direction, Direction::kLower);
}

// SuperBench v0.3's names often do not say which way is better; the benchmark does.
TEST(AnatomyTest, ABenchmarkSaysWhatItsUnnamedFiguresMeasure) {
  EXPECT_EQ(Anatomize("gemm-flops/FP32:3").direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("ib-loopback/IB_write_8388608_Avg_4:0").direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("gpu-sm-copy-bw/dtoh:12").direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("cublas-function/name_cublasSgemm_m_1024_n_256_k_1024:7").direction,
            Direction::kLower);
  EXPECT_EQ(Anatomize("disk-benchmark/nvme0n1_rand_read_write_bs").direction, Direction::kEither);
  EXPECT_EQ(Anatomize("foo/bar:2").direction, Direction::kEither);
}

TEST(AnatomyTest, IbLoopbackHcaInEachGeneration) {
  // Regression: the HCA sits in the name before v0.6, so every NIC came out as "NIC 0".
  MetricAnatomy a = Anatomize("ib-loopback/IB_write_8388608_Avg_4:0");  // v0.3
  EXPECT_EQ(a.component, "NIC 4");
  EXPECT_EQ(a.curve, "ib-loopback/IB_write_{size}_Avg_{i}");
  EXPECT_EQ(a.size, 8388608);
  EXPECT_EQ(ComponentOf("ib-loopback/IB_read_512_Avg_7:0"), "NIC 7");
  EXPECT_EQ(ComponentOf("ib-loopback/ib_write_8388608_ib4_bw"), "NIC 4");  // v0.4, v0.5
  EXPECT_EQ(ComponentOf("ib-loopback/ib_send_8388608_ib6_bw:0"), "NIC 6");
  a = Anatomize("ib-loopback/ib_write_bw_8388608:4");  // v0.6 on: the HCA is the index
  EXPECT_EQ(a.component, "NIC 4");
  EXPECT_EQ(a.curve, "ib-loopback/ib_write_bw_{size}");
  EXPECT_EQ(ComponentOf("ib-loopback/ib_write_8388608_bw:5"), "NIC 5");  // Vigil's generator
  EXPECT_EQ(ComponentOf("ib-loopback/return_code"), "ib-loopback");
}

TEST(AnatomyTest, IbTrafficRankIsTheHca) {
  // v0.4: "<command>_<line>_<pair>_<server>_<client>_bw"; v0.6 on:
  // "<command>_<size>_<direction>_<line>_<pair>:<server>_<client>"; a ":<rank>" (the HCA
  // mlx5_<rank>) after either when run with several ranks per node.
  EXPECT_EQ(ComponentOf("ib-traffic/ib_write_bw_0_0_0_1_bw:3"), "NIC 3");
  EXPECT_EQ(ComponentOf("ib-traffic/ib_write_bw_0_0_0_1_bw"), "ib-traffic");
  EXPECT_EQ(ComponentOf("ib-traffic/ib_write_bw_8388608_gpu-to-gpu_0_1:0_1:3"), "NIC 3");
  EXPECT_EQ(ComponentOf("ib-traffic/ib_write_bw_8388608_gpu-to-gpu_0_1:0_1"), "ib-traffic");
}

TEST(AnatomyTest, NcclAndRcclAreTheNode) {
  EXPECT_EQ(ComponentOf("nccl-bw/allreduce_8388608_busbw:0"), "NVLink");   // v0.3
  EXPECT_EQ(ComponentOf("nccl-bw/allreduce_8589934592_busbw"), "NVLink");  // v0.4 on
  EXPECT_EQ(ComponentOf("nccl-bw:nvlink/allreduce_8589934592_busbw"), "NVLink");
  EXPECT_EQ(ComponentOf("rccl-bw/allreduce_8589934592_busbw"), "NVLink");
}

TEST(AnatomyTest, DiskBenchmarkNamesTheBlockDevice) {
  EXPECT_EQ(ComponentOf("disk-benchmark/nvme0n1_rand_read_write_read_iops"), "disk nvme0n1");
  EXPECT_EQ(ComponentOf("disk-benchmark/nvme3n1_seq_write_lat_ns_99.9:2"), "disk nvme3n1");
  EXPECT_EQ(ComponentOf("disk-benchmark/sda_seq_precond_bs"), "disk sda");
  EXPECT_EQ(ComponentOf("disk-benchmark/return_code"), "disk-benchmark");
  EXPECT_EQ(ComponentOf("disk/seq_read_mbps:1"), "disk 1");  // Vigil's own
}

// Where a benchmark puts a component's index in the name, a family is still one quantity over all
// components: the index (and what follows from it, a GPU's NUMA node) is replaced.
TEST(AnatomyTest, AFamilyLeavesOutAnIndexInTheName) {
  const auto family = [](std::string_view key) { return Anatomize(key).family; };
  EXPECT_EQ(family("gpu-copy-bw/gpu3_to_gpu3_by_sm_bw"), "gpu-copy-bw/gpu{i}_to_gpu{i}_by_sm_bw");
  EXPECT_EQ(family("gpu-copy-bw/gpu4_to_gpu0_write_by_sm_bw"),
            "gpu-copy-bw/gpu{i}_to_gpu{j}_write_by_sm_bw");
  EXPECT_EQ(family("gpu-copy-bw/cpu_to_gpu5_by_gpu5_using_dma_under_numa2_bw"),
            "gpu-copy-bw/cpu_to_gpu{i}_by_gpu{i}_using_dma_under_numa*_bw");
  EXPECT_EQ(family("gpu-copy-bw/gpu0_to_gpu4_by_gpu0_using_sm_under_numa0_bw"),
            "gpu-copy-bw/gpu{i}_to_gpu{j}_by_gpu{i}_using_sm_under_numa*_bw");
  EXPECT_EQ(family("ib-loopback/ib_write_8388608_ib4_bw:2"),
            "ib-loopback/ib_write_8388608_ib{i}_bw");
  EXPECT_EQ(family("ib-loopback/IB_write_512_Avg_7:0"), "ib-loopback/IB_write_512_Avg_{i}");
  EXPECT_EQ(Anatomize("ib-loopback/IB_write_512_Avg_7:0").curve,
            "ib-loopback/IB_write_{size}_Avg_{i}");
  EXPECT_EQ(family("disk-benchmark/nvme2n1_rand_read_write_read_iops"),
            "disk-benchmark/{disk}_rand_read_write_read_iops");
  EXPECT_EQ(family("nvbandwidth/host_to_device_memcpy_ce_cpu0_gpu3_bw"),
            "nvbandwidth/host_to_device_memcpy_ce_cpu*_gpu{i}_bw");
  EXPECT_EQ(family("gpu-burn/gpu_3_pass"), "gpu-burn/gpu_{i}_pass");
  // Keys whose index is the ":index", and names without one, keep their text.
  EXPECT_EQ(family("ib-loopback/ib_write_bw_8388608:4"), "ib-loopback/ib_write_bw_8388608");
  EXPECT_EQ(family("gpu-copy-bw/gpu_all_to_gpu_all_write_by_sm_bw"),
            "gpu-copy-bw/gpu_all_to_gpu_all_write_by_sm_bw");
  EXPECT_EQ(family("disk-benchmark/return_code"), "disk-benchmark/return_code");
}

TEST(AnatomyTest, NvbandwidthMatrixCells) {
  EXPECT_EQ(ComponentOf("nvbandwidth/host_to_device_memcpy_ce_cpu0_gpu3_bw"), "PCIe 3");
  EXPECT_EQ(ComponentOf("nvbandwidth/host_device_latency_sm_cpu0_gpu2_lat"), "PCIe 2");
  EXPECT_EQ(ComponentOf("nvbandwidth/device_to_device_memcpy_read_ce_gpu0_gpu1_bw"), "NVLink 0-1");
  EXPECT_EQ(ComponentOf("nvbandwidth/all_to_one_write_ce_gpu0_gpu5_bw"), "NVLink 5");
  EXPECT_EQ(ComponentOf("nvbandwidth/host_to_device_memcpy_ce_sum_bw"), "nvbandwidth");
}

TEST(AnatomyTest, GpuBurnAndPytorchMicroBenchmarks) {
  EXPECT_EQ(ComponentOf("gpu-burn/gpu_3_pass"), "GPU 3");
  EXPECT_EQ(ComponentOf("gpu-burn/time"), "gpu-burn");
  // Regression: "communication" holds "nic", and this came out as "NIC 5".
  EXPECT_EQ(ComponentOf("pytorch-computation-communication-overlap/mul_cost:5"), "GPU 5");
  EXPECT_EQ(ComponentOf("pytorch-sharding-matmul/allreduce_time:2"), "GPU 2");
}

TEST(AnatomyTest, ModelBenchmarksAreTheNode) {
  EXPECT_EQ(ComponentOf("bert_models/pytorch-bert-base/steptime_train_float32"),
            "bert_models");  // v0.3
  EXPECT_EQ(ComponentOf("gpt_models/pytorch-gpt2-large/fp32_train_throughput"),
            "gpt_models");  // v0.4 on
  EXPECT_EQ(ComponentOf("model-benchmarks:gpt/pytorch-gpt2-large/fp16_train_throughput"),
            "model-benchmarks");
}

TEST(AnatomyTest, TheIndexStaysTheKeysSuffix) {
  // The index is the key's ":suffix" (here SuperBench's rank) even where the component comes from
  // the name, which the family leaves out.
  const MetricAnatomy a = Anatomize("ib-loopback/IB_write_8388608_Avg_4:0");
  EXPECT_EQ(a.family, "ib-loopback/IB_write_8388608_Avg_{i}");
  EXPECT_EQ(a.index, "0");
}

TEST(AnatomyTest, FamilyComponentDirectionAndSweep) {
  MetricAnatomy a = Anatomize("gemm-flops/fp16_tc_flops:3");
  EXPECT_EQ(a.family, "gemm-flops/fp16_tc_flops");
  EXPECT_EQ(a.index, "3");
  EXPECT_EQ(a.component, "GPU 3");
  EXPECT_EQ(a.direction, Direction::kHigher);
  EXPECT_TRUE(a.curve.empty());
  a = Anatomize("ib-loopback/ib_write_8388608_bw:5");
  EXPECT_EQ(a.component, "NIC 5");
  EXPECT_EQ(a.curve, "ib-loopback/ib_write_{size}_bw");
  EXPECT_EQ(a.size, 8388608);
  a = Anatomize("nccl-bw/allreduce_8589934592_busbw");
  EXPECT_EQ(a.component, "NVLink");
  EXPECT_EQ(a.direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("kernel-launch/event_time:2").direction, Direction::kLower);
  EXPECT_EQ(Anatomize("mem-bw/H2D_Mem_BW:1").component, "PCIe 1");
  EXPECT_EQ(Anatomize("mem-bw/H2D_Mem_BW:1").direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("gpu-copy/p2p_gbps:0-3").component, "link 0-3");
  EXPECT_EQ(Anatomize("gpu-copy/h2d_gbps:3").component, "PCIe 3");
  EXPECT_EQ(Anatomize("gemm-flops/return_code").direction, Direction::kZero);
  EXPECT_EQ(Anatomize("gemm-flops/return_code").component, "gemm-flops");
  EXPECT_EQ(Anatomize("foo/bar:2").component, "foo:2");
  EXPECT_EQ(Anatomize("gpu-health/ecc_uncorrected_aggregate:3").component, "GPU 3");
  // gpu-health's faults must be clear; its records are never judged.
  for (const char* clear : {"ecc_uncorrected_volatile", "row_remap_pending", "row_remap_failure",
                            "retired_pages_pending", "throttle_hw_slowdown", "throttle_hw_thermal",
                            "throttle_hw_power_brake", "throttle_sw_thermal"}) {
    EXPECT_EQ(Anatomize(std::string("gpu-health/") + clear + ":3").direction, Direction::kClear)
        << clear;
  }
  for (const char* info :
       {"ecc_corrected_volatile", "ecc_corrected_aggregate", "ecc_uncorrected_aggregate",
        "remapped_rows_corrected", "remapped_rows_uncorrected", "throttle_sw_power_cap", "power_w",
        "pcie_gen"}) {
    EXPECT_EQ(Anatomize(std::string("gpu-health/") + info + ":3").direction, Direction::kInfo)
        << info;
  }
  EXPECT_EQ(Anatomize("gpu-health/pcie_width:3").direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("gpu-health/pcie_width_max:3").direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("gpu-health/pcie_gen_max:3").direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("gpu-health/temperature_c:3").direction, Direction::kLower);
  EXPECT_EQ(Anatomize("gpu-health/return_code").direction, Direction::kZero);
  EXPECT_EQ(Anatomize("gpu-stress/throttled:1").direction, Direction::kClear);
  EXPECT_EQ(Anatomize("gpu-stress/peak_temperature_c:1").direction, Direction::kLower);
  EXPECT_EQ(Anatomize("gpu-stress/pcie_gen:1").direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("gpu-stress/min_tflops:1").direction, Direction::kHigher);
  // host-health: the memory against the fleet's, a full filesystem by itself.
  EXPECT_EQ(Anatomize("host-health/memory_total_gib").direction, Direction::kHigher);
  EXPECT_EQ(Anatomize("host-health/memory_total_gib").component, "memory");
  EXPECT_EQ(Anatomize("host-health/memory_available_gib").direction, Direction::kInfo);
  EXPECT_EQ(Anatomize("host-health/root_full").direction, Direction::kClear);
  EXPECT_EQ(Anatomize("host-health/root_full").component, "filesystem /");
  EXPECT_EQ(Anatomize("host-health/scratch_full").component, "filesystem scratch");
  EXPECT_EQ(Anatomize("host-health/scratch_free_gib").direction, Direction::kInfo);
  // Only those benchmarks' readings: another benchmark's power_w is judged by its name.
  EXPECT_EQ(Anatomize("other/power_w:1").direction, Direction::kEither);
  EXPECT_TRUE(IsLearned(Direction::kEither));
  EXPECT_FALSE(IsLearned(Direction::kClear));
  EXPECT_FALSE(IsLearned(Direction::kInfo));
  EXPECT_FALSE(IsLearned(Direction::kZero));
  EXPECT_EQ(Anatomize("foo/bar").direction, Direction::kEither);
}

}  // namespace
}  // namespace vigil
