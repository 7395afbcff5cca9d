// A node type's hardware profile: the figures the performance models of `vigil plan` price work
// with. This file holds the profile and the built-in datasheet table (peaks, for when nothing was
// measured); profiles from Vigil's own measurements extend it (docs/plan.md).
//
// Units: TFLOP/s are dense (no structured sparsity), per GPU; bandwidths are GB/s (1e9 bytes per
// second) in one direction, per GPU; memory is GB (1e9 bytes) per GPU, as the datasheets state it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/plan/units.h"

namespace vigil::plan {

struct HardwareProfile {
  std::string gpu;                 // "h100", "a100", "h200", "b200", or the measured node type
  std::string source;              // where the figures come from: "datasheet", or the measurements
  double bf16_tflops = 0;          // dense BF16 tensor-core peak (or measured GEMM throughput)
  double fp8_tflops = 0;           // dense FP8 peak; 0 where the GPU has no FP8 tensor cores
  double hbm_gbps = 0;             // HBM bandwidth
  double memory_gb = 0;            // HBM capacity
  double intra_node_gbps = 0;      // GPU to GPU inside a node (NVLink), one direction
  double inter_node_gbps = 0;      // GPU to GPU across nodes (the GPU's NIC), one direction
  double host_to_device_gbps = 0;  // PCIe, host to device
  int gpus_per_node = 8;

  // The shares of the figures above that real kernels reach, which the performance models apply:
  // 1 for a figure that was measured (a measurement is already what kernels reach). The datasheet
  // rows assume the shares in docs/plan.md ("Assumptions"), taken from a real A100 node's
  // SuperBench results, not fitted to the tables the models are scored on.
  // Each figure has its own share, so that measuring one (BF16 GEMM, the NVLink all-reduce) leaves
  // the others (FP8, the NIC) at their datasheet share rather than at their full peak.
  double bf16_efficiency = 1;    // a large BF16 GEMM (m = n = k = 8192) of the BF16 peak
  double fp8_efficiency = 1;     // a large FP8 GEMM of the FP8 peak
  double hbm_efficiency = 1;     // a streaming kernel of the HBM peak
  double nvlink_efficiency = 1;  // a large NCCL collective's bus bandwidth of NVLink's peak
  double nic_efficiency = 1;     // a large transfer between nodes of the NIC's line rate

  // The datasheet's dense peaks, which MFU is measured against whatever bf16_tflops and
  // fp8_tflops hold (a measured profile keeps its datasheet row's); 0: bf16_tflops, fp8_tflops.
  double peak_bf16_tflops = 0;
  double peak_fp8_tflops = 0;

  // NCCL bus bandwidth inside a node measured at several message sizes, by collective
  // ("allreduce", "allgather", "reducescatter", "alltoall"): (bytes, GB/s), ascending bytes.
  // Empty: intra_node_gbps x nvlink_efficiency at every size.
  std::map<std::string, std::vector<std::pair<double, double>>> intra_node_bus;
  // The NIC's bandwidth measured at several message sizes: (bytes, GB/s), ascending bytes; what
  // a degraded node is compared at (inter_node_gbps is its largest size). Empty: not measured.
  std::vector<std::pair<double, double>> inter_node_curve;

  // Bytes a second that a streaming kernel moves through HBM: the peak at hbm_efficiency.
  double HbmBytesPerS() const { return hbm_gbps * hbm_efficiency * kGiga; }
};

// A (bytes, GB/s) curve at `bytes`: log-linear between its points, flat beyond its ends. The
// curve is non-empty and in ascending bytes.
double CurveAt(const std::vector<std::pair<double, double>>& curve, double bytes);

// The names DatasheetProfile knows, in the order `--help` lists them.
const std::vector<std::string_view>& DatasheetGpus();

// The datasheet profile of an SXM part in an 8-GPU HGX board: "a100" (80 GB), "h100", "h200",
// "b200"; case-insensitive. InvalidArgument naming the known GPUs otherwise.
Result<HardwareProfile> DatasheetProfile(std::string_view gpu);

}  // namespace vigil::plan
