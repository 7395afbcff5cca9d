// `vigil learn` reads fleets that other tools wrote (SuperBench's results summary): whatever fleet
// table the reader accepts, learning from it either succeeds or says why, never crashes; the
// criteria it learns judge the same fleet, say what they find part by part (ReachOf), and are
// written and read back to the same text.
//
// The input is bytes, not JSONL: the learner's arithmetic (robust spreads, tail quantiles, gaps,
// modes, hardware classes) is what this target is for, and a JSONL fuzzer rarely gets past the
// parser with a fleet of several nodes. So the bytes choose a fleet: how many nodes, which keys
// of SuperBench's layouts each node reports (GPUs, NICs, NVLink pairs, disks, return codes), each
// value as a small deviation from a key's typical level, or 0, a negative, a repeat of the last,
// or a wild one; then it is written as JSONL and read by ParseFleetTable as `vigil learn` does.
#include <fuzzer/FuzzedDataProvider.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/judge.h"
#include "vigil/learned/learn.h"
#include "vigil/learned/reach.h"
#include "vigil/results/summary.h"

namespace {

struct Key {
  const char* name;
  double level;
};

// Keys of the three SuperBench naming generations, at about a real A100 node's levels.
constexpr std::array<Key, 24> kKeys = {{
    {"gemm-flops/fp16_tc_flops:0", 280},
    {"gemm-flops/fp16_tc_flops:1", 280},
    {"gemm-flops/fp16_tc_flops:2", 280},
    {"gemm-flops/fp16_tc_flops:3", 280},
    {"gemm-flops/int4_tc_iops:0", 1100},
    {"gemm-flops/int4_tc_iops:1", 1100},
    {"gemm-flops/return_code", 0},
    {"mem-bw/d2d_bw:0", 1550},
    {"mem-bw/h2d_bw:0", 26},
    {"gpu-copy-bw/gpu0_to_gpu1_write_by_sm_bw", 260},
    {"gpu-copy-bw/gpu1_to_gpu0_write_by_sm_bw", 260},
    {"gpu-copy-bw/gpu0_to_gpu2_write_by_sm_bw", 260},
    {"ib-loopback/ib_write_8388608_ib0_bw", 24},
    {"ib-loopback/ib_write_8388608_ib1_bw", 24},
    {"ib-traffic/IB_write_8388608_Avg_2:0", 24},
    {"nccl-bw/allreduce_8388608_busbw:0", 180},
    {"nccl-bw/allreduce_1073741824_busbw:0", 232},
    {"kernel-launch/event_time:0", 0.0055},
    {"kernel-launch/wall_time:0", 0.0085},
    {"disk-benchmark/nvme0n1_rand_read_4k_iops", 700000},
    {"disk-benchmark/nvme1n1_rand_read_4k_iops", 700000},
    {"cudnn-function/conv2d_fwd_time:0", 0.4},
    {"gpu-health/ecc_uncorrected_volatile:0", 0},
    {"gpu-health/power_w:0", 300},
}};

// One value of a key at `level`, chosen by the input.
double Value(FuzzedDataProvider& in, double level, double last) {
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0:
      return 0;
    case 1:
      return -level;
    case 2:
      return last;
    case 3:
      return level * in.ConsumeFloatingPointInRange<double>(-1e6, 1e6);
    case 4:  // any magnitude a result may have (ParseFleetTable takes up to 1e100), either sign
      return std::copysign(std::pow(10.0, in.ConsumeFloatingPointInRange(-100.0, 100.0)),
                           in.ConsumeBool() ? 1.0 : -1.0);
    default:  // a few percent about the level, printed rounded or not
      return level * (1 + in.ConsumeIntegralInRange<int>(-500, 500) / 10000.0);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int nodes = in.ConsumeIntegralInRange<int>(1, 48);
  const uint32_t keys = in.ConsumeIntegral<uint32_t>();  // the keys most nodes report
  std::string text;
  double last = 1;
  for (int n = 0; n < nodes && in.remaining_bytes() > 0; ++n) {
    vigil::Json row = vigil::Json::object();
    row["node"] = "node" + std::to_string(n);
    // Two classes, labelled or not, as the input says.
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
      case 0:
        break;
      case 1:
        row["hardware"] = "a100";
        break;
      default:
        row["hardware"] = "h100";
    }
    // Most nodes report the same keys; some drop or add one.
    const uint32_t own =
        in.ConsumeBool() ? keys
                         : keys ^ (1u << in.ConsumeIntegralInRange<size_t>(0, kKeys.size() - 1));
    for (size_t k = 0; k < kKeys.size(); ++k) {
      if ((own >> k & 1) == 0) continue;
      last = Value(in, kKeys[k].level, last);
      row[kKeys[k].name] = last;
    }
    text += vigil::DumpJson(row) + "\n";
  }
  const vigil::Result<vigil::FleetTable> table = vigil::ParseFleetTable(text, "fleet.jsonl", 1);
  if (!table.ok()) return 0;
  vigil::learned::LearnOptions options;
  options.min_nodes = 2;  // small fleets, to reach the learner's arithmetic quickly
  std::vector<vigil::learned::LeftOutClass> left_out;
  const vigil::Result<vigil::learned::LearnedCriteria> criteria =
      vigil::learned::Learn(*table, options, &left_out);
  if (!criteria.ok()) return 0;
  (void)vigil::learned::Judge(*table, *criteria, 1);
  (void)vigil::learned::ReachOf(*criteria, 1);
  const std::string written = vigil::DumpJson(vigil::learned::CriteriaToJson(*criteria));
  const vigil::Result<vigil::learned::LearnedCriteria> back =
      vigil::learned::CriteriaFromJson(written, "criteria.json");
  if (!back.ok()) std::abort();
  if (vigil::DumpJson(vigil::learned::CriteriaToJson(*back)) != written) std::abort();
  return 0;
}
