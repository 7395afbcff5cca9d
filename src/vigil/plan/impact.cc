#include "vigil/plan/impact.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "vigil/core/text.h"

namespace vigil::plan {
namespace {

// The least share of the fleet's figure a component is priced at: a node below a thousandth of
// the fleet is unusable either way, and smaller shares would overflow the step model's seconds.
constexpr double kLeastRatio = 1e-3;

// A term grows when it moves by more than rounding: a millionth of the healthy step.
constexpr double kMovedShare = 1e-6;

// The profile's figure of a component.
double HardwareProfile::*FigureOf(Component c) {
  switch (c) {
    case Component::kBf16:
      return &HardwareProfile::bf16_tflops;
    case Component::kFp8:
      return &HardwareProfile::fp8_tflops;
    case Component::kHbm:
      return &HardwareProfile::hbm_gbps;
    case Component::kNvlink:
      return &HardwareProfile::intra_node_gbps;
    case Component::kNic:
      return &HardwareProfile::inter_node_gbps;
    case Component::kHost:
      return &HardwareProfile::host_to_device_gbps;
  }
  return &HardwareProfile::bf16_tflops;
}

// The share of the figure real kernels reach (the host link has none: 1).
double EfficiencyOf(const HardwareProfile& hw, Component c) {
  switch (c) {
    case Component::kBf16:
      return hw.bf16_efficiency;
    case Component::kFp8:
      return hw.fp8_efficiency;
    case Component::kHbm:
      return hw.hbm_efficiency;
    case Component::kNvlink:
      return hw.nvlink_efficiency;
    case Component::kNic:
      return hw.nic_efficiency;
    case Component::kHost:
      return 1;
  }
  return 1;
}

Status BadItem(std::string_view item, std::string_view problem) {
  return Status::InvalidArgument(fmt::format("--slow: '{}': {}", item, problem));
}

Result<double> Ratio(std::string_view item, std::string_view text) {
  double v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(v) || v <= 0 || v > 1) {
    return BadItem(item, "the ratio must be a number above 0 and at most 1 (0.88: 12% slow)");
  }
  return v;
}

// The components a name of --slow covers: one, or both GEMM precisions for `gemm`.
std::vector<Component> Named(std::string_view name) {
  if (name == "gemm") return {Component::kBf16, Component::kFp8};
  for (Component c : kComponents) {
    if (name == ComponentName(c)) return {c};
  }
  return {};
}

std::vector<std::pair<std::string, double>> Moved(const TrainPrediction& healthy,
                                                  const TrainPrediction& degraded) {
  const auto before = StepTerms(healthy.time), after = StepTerms(degraded.time);
  std::vector<std::pair<std::string, double>> moved;
  for (size_t i = 0; i < before.size(); ++i) {
    const double delta = after[i].second - before[i].second;
    if (delta > kMovedShare * healthy.step_time_s) {
      moved.emplace_back(std::string(before[i].first), delta);
    }
  }
  std::ranges::stable_sort(moved, [](const auto& x, const auto& y) { return x.second > y.second; });
  return moved;
}

double Slowdown(const TrainPrediction& healthy, const TrainPrediction& degraded) {
  return degraded.step_time_s / healthy.step_time_s - 1;
}

// Drain, and a spare node of the fleet's speed takes the node's place: the job stops for the
// restart and queue, does the work since its last checkpoint again, and runs on at healthy speed.
// Keeping it, the remaining H takes H (1 + s); draining, lost + H.
DrainOption SpareOption(double slowdown, const reliability::EttrParams& i) {
  DrainOption o;
  o.possible = true;
  o.lost_s = i.restart_s + i.queue_s + i.interval_s / 2;
  if (slowdown > 0) o.break_even_s = o.lost_s / slowdown;
  return o;
}

// Drain, and the job runs on the GPUs left at speed r of its healthy one (the best layout there):
// draining, the remaining H takes restart + queue + (dt/2 + H) / r, against H (1 + s) keeping it.
DrainOption ShrinkOption(const ModelSpec& m, const Layout& l, const HardwareProfile& fleet,
                         const TrainPrediction& healthy, double slowdown,
                         const reliability::EttrParams& i, const TrainAssumptions& a) {
  DrainOption o;
  const int64_t left = l.gpus - fleet.gpus_per_node;
  if (left < 1) {
    o.why_not = fmt::format("the job's {} GPUs are no more than one node's {}", l.gpus,
                            fleet.gpus_per_node);
    return o;
  }
  SearchRequest request;
  request.model = m;
  request.hw = fleet;
  request.gpus = left;
  request.global_batch = l.global_batch;
  request.precision = l.precision;
  request.attention = l.attention;
  request.sequence_parallel = l.sequence_parallel;
  request.top = 1;
  Result<SearchResult> found = SearchLayouts(request, a);
  if (!found.ok() || found->best.empty()) {
    o.why_not = fmt::format("no layout on {} GPUs: {}", left,
                            found.ok() ? "none fits" : found.status().message());
    return o;
  }
  o.possible = true;
  o.layout = found->best.front();
  // At most 1: a layout on fewer GPUs that beats the job's own on all of them is a gain of
  // re-planning the job, which it can have without draining anything; it is not the drain's.
  o.speed = std::min(1.0, o.layout->prediction.tokens_per_s / healthy.tokens_per_s);
  o.lost_s = i.restart_s + i.queue_s + i.interval_s / 2 / o.speed;
  const double gain = 1 + slowdown - 1 / o.speed;  // per second of remaining healthy time
  if (gain > 0) o.break_even_s = o.lost_s / gain;
  return o;
}

Verdict Decide(const DrainOption& chosen, const std::optional<double>& remaining_s) {
  if (!chosen.possible || std::isinf(chosen.break_even_s)) return Verdict::kKeep;
  if (!remaining_s) return Verdict::kDrainIfLonger;
  return *remaining_s > chosen.break_even_s ? Verdict::kDrain : Verdict::kKeepToEnd;
}

Status CheckPolicy(const DrainPolicy& p) {
  const reliability::EttrParams& i = p.interruption;
  for (const auto& [name, v] : {std::pair<std::string_view, double>{"restart", i.restart_s},
                                {"queue", i.queue_s},
                                {"interval", i.interval_s},
                                {"remaining", p.remaining_s.value_or(0)}}) {
    if (!std::isfinite(v) || v < 0) {
      return Status::InvalidArgument(
          fmt::format("--{} must be a duration of at least 0, got {}", name, v));
    }
  }
  return Status::Ok();
}

// The (bytes, GB/s) curve of a component measured by message size, or null.
const std::vector<std::pair<double, double>>* SizeCurve(const HardwareProfile& hw, Component c) {
  if (c == Component::kNic) return &hw.inter_node_curve;
  if (c != Component::kNvlink) return nullptr;
  const auto it = hw.intra_node_bus.find("allreduce");
  return it == hw.intra_node_bus.end() ? nullptr : &it->second;
}

// node / fleet of a link both measured by message size, at one size: the largest the node
// measured within the fleet's range, the fleet's curve interpolated there (a node measured up to
// 1 GiB against a fleet measured up to 8 GiB is not compared at different sizes, where bus
// bandwidth differs by itself). Nothing when a side has no curve or the ranges do not meet.
std::optional<double> RatioAtOneSize(const HardwareProfile& node, const HardwareProfile& fleet,
                                     Component c) {
  const auto* mine = SizeCurve(node, c);
  const auto* theirs = SizeCurve(fleet, c);
  if (mine == nullptr || theirs == nullptr || mine->empty() || theirs->empty()) return std::nullopt;
  for (auto it = mine->rbegin(); it != mine->rend(); ++it) {
    if (it->first < theirs->front().first || it->first > theirs->back().first) continue;
    const double at = CurveAt(*theirs, it->first);
    if (it->second > 0 && at > 0) return it->second / at;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::string_view ComponentName(Component c) {
  switch (c) {
    case Component::kBf16:
      return "bf16";
    case Component::kFp8:
      return "fp8";
    case Component::kHbm:
      return "hbm";
    case Component::kNvlink:
      return "nvlink";
    case Component::kNic:
      return "nic";
    case Component::kHost:
      return "host";
  }
  return "bf16";
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kKeep:
      return "keep";
    case Verdict::kDrainIfLonger:
      return "drain_if_longer";
    case Verdict::kDrain:
      return "drain";
    case Verdict::kKeepToEnd:
      return "keep_to_end";
  }
  return "keep";
}

Result<Ratios> ParseSlowdowns(std::string_view text) {
  if (Trim(text).empty()) return BadItem(text, "expected NAME=RATIO items, e.g. gemm=0.88,nic=0.5");
  Ratios ratios;
  for (const std::string_view field : Split(text, ',')) {
    const std::string_view item = Trim(field);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return BadItem(item, "expected NAME=RATIO");
    const std::string_view name = Trim(item.substr(0, eq));
    const std::vector<Component> named = Named(name);
    if (named.empty()) {
      return BadItem(item, "the name must be one of gemm, bf16, fp8, hbm, nvlink, nic, host");
    }
    VIGIL_ASSIGN_OR_RETURN(const double ratio, Ratio(item, Trim(item.substr(eq + 1))));
    for (Component c : named) {
      if (!ratios.emplace(c, ratio).second) {
        return BadItem(item, fmt::format("{} is given twice", ComponentName(c)));
      }
    }
  }
  return ratios;
}

double EffectiveFigure(const HardwareProfile& hw, Component c) {
  return hw.*FigureOf(c) * EfficiencyOf(hw, c);
}

Ratios RatiosToFleet(const HardwareProfile& node, const HardwareProfile& fleet) {
  Ratios ratios;
  for (Component c : kComponents) {
    const std::optional<double> matched = RatioAtOneSize(node, fleet, c);
    const double mine = EffectiveFigure(node, c), theirs = EffectiveFigure(fleet, c);
    if (matched) {
      ratios[c] = *matched;
    } else if (mine > 0 && theirs > 0) {
      ratios[c] = mine / theirs;
    }
  }
  return ratios;
}

HardwareProfile Degrade(const HardwareProfile& hw, const Ratios& ratios) {
  HardwareProfile out = hw;
  // MFU stays measured against the datasheet's peaks, not the degraded figures.
  if (out.peak_bf16_tflops <= 0) out.peak_bf16_tflops = hw.bf16_tflops;
  if (out.peak_fp8_tflops <= 0) out.peak_fp8_tflops = hw.fp8_tflops;
  for (const auto& [c, ratio] : ratios) {
    const double r = std::clamp(ratio, kLeastRatio, 1.0);
    out.*FigureOf(c) *= r;
    if (c == Component::kNvlink) {
      for (auto& [collective, curve] : out.intra_node_bus) {
        for (auto& point : curve) point.second *= r;
      }
    }
    if (c == Component::kNic) {
      for (auto& point : out.inter_node_curve) point.second *= r;
    }
  }
  return out;
}

Result<ImpactResult> Impact(const ModelSpec& m, const Layout& l, const HardwareProfile& fleet,
                            const Ratios& ratios, const DrainPolicy& policy,
                            const TrainAssumptions& a) {
  VIGIL_RETURN_IF_ERROR(CheckPolicy(policy));
  ImpactResult r;
  r.healthy = PredictTrain(m, l, fleet, a);
  r.degraded = PredictTrain(m, l, Degrade(fleet, ratios), a);
  r.slowdown = Slowdown(r.healthy, r.degraded);
  r.moved = Moved(r.healthy, r.degraded);
  for (const auto& [c, ratio] : ratios) {
    const TrainPrediction alone = PredictTrain(m, l, Degrade(fleet, {{c, ratio}}), a);
    const auto moved = Moved(r.healthy, alone);
    r.components.push_back(
        {c, ratio, Slowdown(r.healthy, alone), moved.empty() ? "" : moved.front().first});
  }
  // Of each wall-clock hour the job runs with the node, the share s / (1 + s) is the slowdown's.
  r.keep_gpu_hours_per_hour = r.slowdown / (1 + r.slowdown) * static_cast<double>(l.gpus);
  r.spare = SpareOption(r.slowdown, policy.interruption);
  r.shrink = ShrinkOption(m, l, fleet, r.healthy, r.slowdown, policy.interruption, a);
  r.verdict = Decide(policy.spare ? r.spare : r.shrink, policy.remaining_s);
  return r;
}

}  // namespace vigil::plan
