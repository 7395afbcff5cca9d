#include "vigil/plan/hardware.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>

namespace vigil::plan {
namespace {

// What real kernels reach of the peaks, measured on an 8x A100 80GB node by SuperBench
// (../shared/data/superbench/test_results.jsonl): BF16 GEMM 265-277 TFLOP/s of 312 (0.85 taken),
// NCCL all-reduce bus bandwidth 230-234 GB/s of NVLink's 300 (0.77, rounded to 0.8 as InfiniBand
// reaches 0.95 of its line rate in the same file), and the usual STREAM share of HBM (0.85).
constexpr double kDatasheetGemmEfficiency = 0.85;
constexpr double kDatasheetHbmEfficiency = 0.85;
constexpr double kDatasheetBusEfficiency = 0.8;

// NVIDIA's datasheets: A100 80GB SXM (2021), H100 SXM5 (2023), H200 SXM (2024), HGX B200 (2024).
// NVLink is the per-direction half of the stated total (600, 900, 900, 1800 GB/s); the NIC is the
// HGX reference design's one per GPU (HDR 200 Gb/s for A100, NDR 400 Gb/s after); PCIe Gen4 or
// Gen5 x16, one direction.
HardwareProfile Sheet(std::string gpu, double bf16, double fp8, double hbm, double memory,
                      double nvlink, double nic, double pcie) {
  HardwareProfile p;
  p.gpu = std::move(gpu);
  p.source = "datasheet";
  p.bf16_tflops = bf16;
  p.fp8_tflops = fp8;
  p.peak_bf16_tflops = bf16;
  p.peak_fp8_tflops = fp8;
  p.hbm_gbps = hbm;
  p.memory_gb = memory;
  p.intra_node_gbps = nvlink;
  p.inter_node_gbps = nic;
  p.host_to_device_gbps = pcie;
  p.bf16_efficiency = kDatasheetGemmEfficiency;
  p.fp8_efficiency = kDatasheetGemmEfficiency;
  p.hbm_efficiency = kDatasheetHbmEfficiency;
  p.nvlink_efficiency = kDatasheetBusEfficiency;
  p.nic_efficiency = kDatasheetBusEfficiency;
  return p;
}

const std::vector<HardwareProfile>& Sheets() {
  static const std::vector<HardwareProfile> sheets = {
      Sheet("a100", 312, 0, 2039, 80, 300, 25, 32),
      Sheet("h100", 989, 1979, 3350, 80, 450, 50, 64),
      Sheet("h200", 989, 1979, 4800, 141, 450, 50, 64),
      Sheet("b200", 2250, 4500, 8000, 180, 900, 50, 64),
  };
  return sheets;
}

}  // namespace

const std::vector<std::string_view>& DatasheetGpus() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const HardwareProfile& p : Sheets()) out.push_back(p.gpu);
    return out;
  }();
  return names;
}

Result<HardwareProfile> DatasheetProfile(std::string_view gpu) {
  std::string lower(gpu);
  std::ranges::transform(lower, lower.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const HardwareProfile& p : Sheets()) {
    if (p.gpu == lower) return p;
  }
  return Status::InvalidArgument(fmt::format("unknown GPU '{}': the datasheet table knows {}", gpu,
                                             fmt::join(DatasheetGpus(), ", ")));
}

double CurveAt(const std::vector<std::pair<double, double>>& curve, double bytes) {
  if (bytes <= curve.front().first) return curve.front().second;
  if (bytes >= curve.back().first) return curve.back().second;
  const auto hi = std::ranges::lower_bound(curve, bytes, {}, [](const auto& p) { return p.first; });
  const auto lo = std::prev(hi);
  const double w = std::log(bytes / lo->first) / std::log(hi->first / lo->first);
  return lo->second + w * (hi->second - lo->second);
}

}  // namespace vigil::plan
