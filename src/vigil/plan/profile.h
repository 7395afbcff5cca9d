// A node type's hardware profile from measurements (issue 26 part 1): the figures Vigil's own
// benchmarks and SuperBench's measure, read from results documents or fleet summaries, over a
// datasheet profile for whatever was not measured (docs/plan.md, "Profiles from measurements").
#pragma once

#include <string>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/plan/hardware.h"
#include "vigil/results/summary.h"

namespace vigil::plan {

// `base` with every figure the nodes of `table` measured put in its place: per node the median
// over its GPUs (or NICs), then the median over the nodes that measured it with the benchmark's
// return code 0 (a node whose benchmark failed does not count; the median keeps a slow minority
// of nodes from moving the profile). A measured figure sets its efficiency to 1. The keys read:
// GEMM  gpu-gemm/{bf16,fp8}_tflops (TFLOP/s); gemm-flops/BF16_TC, bf16_tc_flops (GFLOP/s)
// HBM   gpu-membw/triad_gbps
// host  gpu-copy/h2d_gbps; mem-bw/H2D_Mem_BW, h2d_bw
// NVLink nccl/<coll>_busbw (the default size), nccl/allreduce_<bytes>_busbw,
//       nccl-bw/<coll>_<bytes>_busbw (no annotation or "nvlink"): the curve by size, and the
//       largest size's all-reduce as intra_node_gbps
// NIC   ib-loopback/IB_write_<bytes>_Avg_<hca> and ib_write_<bytes>_ib<hca>_bw (MB/s),
//       ib_write_bw_<bytes> (GB/s): the largest size
// `source` names what was measured. InvalidArgument naming `what` when no key of the table is one
// of these. Pure; thread-safe.
// `per_node` says how one node's GPUs (or NICs) are summed up: their median (a fleet's typical
// node), or their worst (one node in a synchronous job, which its slowest GPU paces).
enum class PerNode { kMedian, kWorst };
Result<HardwareProfile> MeasuredProfile(const FleetTable& table, const HardwareProfile& base,
                                        std::string_view what, PerNode per_node = PerNode::kMedian);

// The results files that `paths` name: a file stands for itself, a directory for its `*.json` and
// `*.jsonl` files (sorted by name; not its subdirectories). The order of `paths` is kept.
// InvalidArgument naming a directory that holds no such file, or a path that cannot be listed.
Result<std::vector<std::string>> ResultFiles(const std::vector<std::string>& paths);

// The files of `paths` (ResultFiles: a directory stands for its results files), each a results
// document (`vigil run --out`) or a fleet summary (JSONL, Vigil's or SuperBench's; the last row
// of each node), as one table. Errors name the file.
Result<FleetTable> ReadResultsTable(const std::vector<std::string>& paths);

// MeasuredProfile of files that are each a results document (`vigil run --out`) or a fleet
// summary (JSONL, Vigil's or SuperBench's), all as one fleet. Errors name the file.
Result<HardwareProfile> ReadMeasuredProfile(const std::vector<std::string>& paths,
                                            const HardwareProfile& base);

// The profile the plan commands price with: the datasheet row of `gpu`, with what the files in
// `hardware` measured over it (ReadMeasuredProfile) when there are any. InvalidArgument for an
// unknown GPU or a file that cannot be read as results.
Result<HardwareProfile> ProfileFor(std::string_view gpu, const std::vector<std::string>& hardware);

// A fleet's profile both ways of summing up a node (see PerNode): the median one prices a job,
// the worst one is what a degraded node's worst GPU is compared with.
struct FleetProfiles {
  HardwareProfile median;
  HardwareProfile worst;
};

// ProfileFor's profile and its worst-GPU twin from one reading of the files and one datasheet
// look-up (both the datasheet row when `hardware` is empty). ProfileFor's errors.
Result<FleetProfiles> ProfilesFor(std::string_view gpu, const std::vector<std::string>& hardware);

}  // namespace vigil::plan
