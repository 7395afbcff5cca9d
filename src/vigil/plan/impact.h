// The cost of a degraded node (issue 26 part 4, `vigil plan impact`): how much a synchronous
// training job slows when one of its nodes is slow in one component (a GPU 12% slow at GEMM, a NIC
// at half bandwidth), and after how long draining the node pays (docs/plan.md, "Cost of a degraded
// node"). Selector and remediation policies can call Impact() directly.
#pragma once

#include <array>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/plan/hardware.h"
#include "vigil/plan/model_spec.h"
#include "vigil/plan/search.h"
#include "vigil/plan/train.h"
#include "vigil/reliability/models.h"

namespace vigil::plan {

// The figures of a hardware profile that a node can be slow in.
enum class Component { kBf16, kFp8, kHbm, kNvlink, kNic, kHost };
inline constexpr std::array<Component, 6> kComponents = {Component::kBf16, Component::kFp8,
                                                         Component::kHbm,  Component::kNvlink,
                                                         Component::kNic,  Component::kHost};

// "bf16" (BF16 GEMM), "fp8" (FP8 GEMM), "hbm", "nvlink" (the bus inside a node), "nic" (the GPU's
// link between nodes), "host" (host to device copies).
std::string_view ComponentName(Component c);

// A component's figure on the node as a share of the fleet's: 1 as fast, 0.88 12% slower.
using Ratios = std::map<Component, double>;

// "gemm=0.88,nic=0.5": comma-separated NAME=RATIO items, NAME one of ComponentName's or `gemm`
// (BF16 and FP8 both), each ratio a number in (0, 1], each component named once.
// InvalidArgument "--slow: 'ITEM': PROBLEM" otherwise. Pure; thread-safe.
Result<Ratios> ParseSlowdowns(std::string_view text);

// The component's figure as kernels reach it: the profile's figure times its efficiency.
double EffectiveFigure(const HardwareProfile& hw, Component c);

// The node's ratio to the fleet for each component that `node` measured and the fleet has (a
// figure above 0 in both): `node` is a MeasuredProfile over an empty base, so that a figure it did
// not measure stays 0.
Ratios RatiosToFleet(const HardwareProfile& node, const HardwareProfile& fleet);

// `hw` with each component's figure times its ratio, capped at 1 (a node faster than the fleet
// does not speed up a job its other nodes pace) and floored at 0.001 (a node that slow is
// unusable either way), the measured NVLink curve scaled with NVLink;
// the datasheet peaks that MFU is measured against are kept.
HardwareProfile Degrade(const HardwareProfile& hw, const Ratios& ratios);

// What draining the node costs the job, and what is known of the job's future.
struct DrainPolicy {
  // An interruption's cost, as `vigil model ettr` prices a failure's: restart_s (detection,
  // restart, reload), queue_s (waiting for nodes) and interval_s (the checkpoint interval: half of
  // it, the work since the last checkpoint, is done again). Its other fields are not read.
  reliability::EttrParams interruption;
  bool spare = true;  // a spare node takes the drained one's place; false: the job shrinks a node
  std::optional<double> remaining_s;  // how long the job would run on at healthy speed; unknown
};

// The job's slowdown when the node is slow in one component only.
struct ComponentImpact {
  Component component = Component::kBf16;
  double ratio = 1;     // the node's figure over the fleet's
  double slowdown = 0;  // step time with only this component degraded over the healthy one, - 1
  std::string term;     // the step time's term that grew the most; empty when none grew
};

// One way of draining the node.
struct DrainOption {
  bool possible = false;
  std::string why_not;  // when not possible
  double lost_s = 0;    // one-off: restart, queue, and the work since the last checkpoint redone
  double speed = 1;     // the job's throughput after the drain over its healthy throughput
  // Draining pays when the job would run on (at healthy speed) for longer than this; infinite
  // when it never pays.
  double break_even_s = std::numeric_limits<double>::infinity();
  std::optional<Candidate> layout;  // shrinking: the best layout on the GPUs left
};

enum class Verdict {
  kKeep,           // draining never pays (no slowdown, or no way to drain that beats keeping)
  kDrainIfLonger,  // the job's remaining time is unknown: drain if it exceeds the break-even
  kDrain,          // the job runs on for longer than the break-even
  kKeepToEnd,      // the job ends before draining would pay
};

// "keep", "drain_if_longer", "drain", "keep_to_end".
std::string_view VerdictName(Verdict v);

struct ImpactResult {
  TrainPrediction healthy;   // the job on healthy nodes
  TrainPrediction degraded;  // the job with the node, every ratio applied
  double slowdown = 0;       // degraded over healthy step time, - 1
  // The step time's terms (StepBreakdown's, by their JSON names) that grew, seconds, largest first.
  std::vector<std::pair<std::string, double>> moved;
  std::vector<ComponentImpact> components;  // one per ratio, in Component order
  double keep_gpu_hours_per_hour = 0;       // GPUs x s / (1 + s): lost per wall-clock hour
  DrainOption spare;                        // drain, and a spare node takes its place
  DrainOption shrink;                       // drain, and the job runs on one node fewer
  Verdict verdict = Verdict::kKeep;         // for the policy's choice of spare or shrink
};

// The job's step time with the node, against the healthy step time, and the break-even of
// draining it. In a synchronous job the slowest member paces every collective and every pipeline
// step, so the degraded job is the step model with Degrade(fleet, ratios) on the critical path
// (docs/plan.md says how, term by term). Shrinking searches the best layout on gpus -
// gpus_per_node GPUs with SearchLayouts. REQUIRES: CheckLayout accepts `layout` against `fleet`.
// InvalidArgument when a policy time is negative or not finite. Pure; thread-safe.
Result<ImpactResult> Impact(const ModelSpec& model, const Layout& layout,
                            const HardwareProfile& fleet, const Ratios& ratios,
                            const DrainPolicy& policy, const TrainAssumptions& a = {});

}  // namespace vigil::plan
