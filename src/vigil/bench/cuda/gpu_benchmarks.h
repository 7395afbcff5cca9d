// The GPU benchmarks, in every Vigil: gpu-health needs only the driver's NVML, loaded at run
// time; the others need a Vigil built with CUDA (device.h). On a node without an NVIDIA driver,
// or a Vigil without CUDA, they are skipped with the reason.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/bench/benchmark.h"
#include "vigil/bench/cuda/device.h"
#include "vigil/bench/cuda/nvml.h"

namespace vigil {

// gpu-health: per GPU, from NVML: ECC error counts (volatile and aggregate), remapped rows and
// whether a remap is pending or failed (retired pages before A100), PCIe link generation and
// width, current and maximum, power, temperature, and the throttle reasons that signal trouble.
std::unique_ptr<Benchmark> MakeGpuHealthBenchmark();

// The metrics of one reading of GPU `index`, keyed "gpu-health/<metric>:<index>"; what the GPU
// does not report is absent.
std::vector<Metric> GpuHealthMetrics(int index, const nvml::HealthReading& reading);

// gpu-membw: HBM bandwidth per GPU (GB/s, bytes read plus bytes written) of copy and triad
// kernels with 16-byte accesses over arrays far larger than the L2 cache; every GPU at once.
std::unique_ptr<Benchmark> MakeGpuMembwBenchmark();

// gpu-launch: kernel launch overhead per GPU (us): device side (events around back-to-back empty
// kernels) and round trip (launch plus synchronize, seen from the host).
std::unique_ptr<Benchmark> MakeGpuLaunchBenchmark();

// gpu-gemm: cuBLASLt matrix-multiply throughput per GPU (TFLOP/s) for fp64, tf32, fp16, bf16 and
// fp8 e4m3 where the GPU has it, on random data, each type's answer first checked against an fp64
// reference on a smaller product; every GPU at once.
std::unique_ptr<Benchmark> MakeGpuGemmBenchmark();

// The m = n = k gpu-gemm and gpu-stress run for a requested size: rounded down to a multiple of
// 16 (cuBLASLt's fp8 products need it), at least 16. Their TFLOP/s are of this size.
int GemmSize(int requested);

// "fp64", "tf32", "fp16", "bf16", "fp8": the metric names' prefix ("gpu-gemm/bf16_tflops:3").
std::string_view GemmTypeName(gpu::GemmType type);

// Whether a GPU of compute capability major.minor runs `type` on tensor cores: fp64, tf32 and
// bf16 from Ampere (8.0), fp8 from Ada and Hopper (8.9).
bool GemmTypeSupported(gpu::GemmType type, int cc_major, int cc_minor);

// The largest error GemmError may report for `type`: what rounding the output (and tf32's inputs)
// and fp32 accumulation allow, with room; a wrong answer is orders of magnitude beyond it.
double GemmTolerance(gpu::GemmType type);

// gpu-stress: bf16 products on every selected GPU at once for a set time (10 s quick, 120 s
// full), each compared bit for bit with the first (a difference is silent data corruption,
// counted in "miscompares"), with per GPU the lowest and median throughput, the peak temperature
// and whether clocks were throttled (NVML read by one thread of its own every 250 ms).
std::unique_ptr<Benchmark> MakeGpuStressBenchmark();

// What NVML showed of one GPU during gpu-stress.
struct StressSamples {
  std::optional<double> peak_c;  // the hottest reading
  uint64_t reasons = 0;          // every throttle reason seen (nvml::throttle bits)
  bool throttle_read = false;    // whether any reading had the throttle reasons
  // The highest PCIe link generation seen under load: an idle GPU trains its link down, a busy
  // one runs it at the generation it trained to at boot.
  std::optional<double> pcie_gen;

  void Add(const nvml::HealthReading& reading);
};

// gpu-stress's figures of GPU `gpu` from its run of products of m = n = k = `size`: median and
// lowest TFLOP/s of every product (their samples: at most 100 of the products' figures, evenly
// picked, in order), "miscompares" (the products that differed from the first: silent data
// corruption; 0 on a healthy GPU, always present), and the peak temperature, whether it throttled
// and the PCIe link generation under load where NVML said. Internal naming the GPU when no
// product ran.
Result<std::vector<Metric>> StressMetrics(int gpu, int size, gpu::StressRun run,
                                          const StressSamples& samples);

// At most `most` of `samples`, evenly spaced and in order, the first and the last among them; all
// of them when there are no more. REQUIRES: most >= 2.
std::vector<double> EvenlyPicked(std::vector<double> samples, size_t most);

// nccl: one process driving the node's GPUs: all-reduce, all-gather, reduce-scatter and
// all-to-all bus bandwidth (GB/s, nccl-tests' factors) at a large size, an all-reduce size sweep
// in the full suite, and a check that the all-reduce's sums are right. Needs two GPUs.
std::unique_ptr<Benchmark> MakeNcclBenchmark();

// "allreduce", "allgather", "reducescatter", "alltoall".
std::string_view CollectiveName(gpu::Collective op);

// The collective named by CollectiveName, or by the same word with a hyphen ("all-reduce");
// InvalidArgument naming the choices.
Result<gpu::Collective> ParseCollective(std::string_view name);

// One node's part of an NCCL collective across nodes (`vigil fleet nccl`, which `vigil fleet
// rank` starts with NCCL_COMM_ID set; docs/multinode.md): every GPU of this node, as ranks
// first_rank, first_rank + 1, ... of `world`. Every member must run it with the same ops, bytes
// and counts: each collective waits for all ranks.
struct NodeCollectiveSpec {
  int ranks = 0;  // the GPUs this node brings, as it said when the group was prepared
  int first_rank = 0;
  int world = 0;
  std::vector<gpu::Collective> ops;
  size_t bytes = size_t{1} << 30;  // per GPU, as nccl-tests sizes it; rounded down to whole floats
  int warmup = 5;                  // collectives before timing
  int iterations = 20;             // collectives per timed sample
  int samples = 5;
};
// After one all-reduce whose sums are checked on every GPU: the median bus bandwidth (GB/s,
// nccl-tests' factor over `world` ranks) of each op, in order. Unavailable without CUDA, a GPU or
// NCCL; InvalidArgument when this node now has another number of GPUs than `ranks`; Internal with
// NCCL's message when a member fails. Wrong sums are an Internal error too, returned only after
// every scheduled collective was issued, so that the other members are not left waiting.
Result<std::vector<double>> RunNodeCollective(const NodeCollectiveSpec& spec);

// `bytes` rounded down to whole floats for each of `ranks` ranks, one float each at least.
size_t WholeFloatsPerRank(double bytes, int ranks);

// nccl-tests' bus bandwidth factor: what turns a collective's algorithm bandwidth (bytes / time)
// into the bandwidth each link carried, comparable with the hardware's: 2(n-1)/n for the
// all-reduce, (n-1)/n for the others.
double BusBandwidthFactor(gpu::Collective op, int ranks);

// gpu-copy: per GPU, host-to-device and device-to-host bandwidth (GB/s) with pinned host memory
// on the GPU's NUMA node (the copy engines), and peer-to-peer bandwidth between GPUs that can
// reach each other ("gpu-copy/p2p_gbps:0-3"): in the quick suite around a ring of the selected
// GPUs (each GPU's outgoing and incoming link once), in the full suite for every ordered pair.
// The full suite adds bidirectional figures: both directions of a GPU's host link at once
// ("bidir_gbps:0"), and of each pair of GPUs that reach each other both ways
// ("p2p_bidir_gbps:0-3", lower index first), counting the bytes of both directions. One copy at a
// time: copies at once would share host memory, PCIe and NVLink switches.
std::unique_ptr<Benchmark> MakeGpuCopyBenchmark();

// The host copies gpu-copy times for `gpu` in `suite`: each run's paths and its metric.
std::vector<std::pair<std::vector<gpu::CopyPath>, std::string_view>> HostCopies(int gpu,
                                                                                Suite suite);

// The peer copies gpu-copy times among `gpus` (in their order) in `suite`, each run's paths and
// its metric, before asking which the GPUs can do: quick, the ring gpus[i] to gpus[i + 1 mod n]
// ("p2p_gbps"); full, every ordered pair ("p2p_gbps") and after each pair of lower index first
// both directions at once ("p2p_bidir_gbps"). None for fewer than two GPUs.
std::vector<std::pair<std::vector<gpu::CopyPath>, std::string_view>> PeerCopies(
    const std::vector<int>& gpus, Suite suite);

// gpu-memtest: per GPU, words written and read back wrong ("errors", 0 on a healthy GPU) by
// passes of memtest.h's patterns over `fraction` of its free memory (at most `max_size`) for
// `duration` seconds, and the GiB tested; every GPU at once. The first mismatches' offsets are
// logged as warnings.
std::unique_ptr<Benchmark> MakeGpuMemtestBenchmark();

// gpu-memtest's figures of GPU `gpu`: "errors" (unit "", lower is better) and "tested_gib".
std::vector<Metric> MemtestMetrics(int gpu, const gpu::MemtestRun& run);

// The warnings a run with errors gets: a summary naming the GPU, then one line per recorded
// mismatch (offset, expected, actual, differing bits); none without errors.
std::vector<std::string> MemtestReport(int gpu, const gpu::MemtestRun& run);

// Runs `measure(gpu)` for every GPU of `gpus` at once, one thread each, for benchmarks whose GPUs
// share nothing they measure (their own SMs and memory), and returns the metrics in the order of
// `gpus`; the first GPU's error in that order, with "GPU <n>: " before it, when any failed.
// `measure` must be safe to call from several threads at once.
Result<std::vector<Metric>> MetricsOfEveryGpu(
    const std::vector<int>& gpus, const std::function<Result<std::vector<Metric>>(int)>& measure);

// The NUMA node of PCI device `pci_bus_id` ("0000:1A:00.0") from sysfs under `sysfs_root`; -1
// when the platform does not say.
int PciNumaNode(const std::string& sysfs_root, std::string_view pci_bus_id);

// One figure of GPU `index`, "<bench>/<metric>:<index>": the median of `samples`.
Metric PerGpu(std::string_view bench, std::string_view metric, int index, std::string_view unit,
              bool higher_is_better, std::vector<double> samples);

// Bytes one run of `kernel` moves: every array read plus the one written.
double MembwBytesMoved(gpu::MembwKernel kernel, size_t bytes_per_array);

// The size of each of `arrays` arrays: `requested` rounded down to 16 bytes, at most a quarter of
// the GPU's free memory between them. InvalidArgument when that leaves less than 8x the L2 cache,
// where the figure would be the cache's rather than HBM's.
Result<size_t> MembwArrayBytes(size_t requested, const gpu::DeviceProps& props, int arrays);

}  // namespace vigil
