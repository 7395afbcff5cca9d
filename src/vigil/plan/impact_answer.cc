#include "vigil/plan/impact_answer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <map>

#include "vigil/core/duration.h"
#include "vigil/core/text_table.h"
#include "vigil/plan/profile.h"

namespace vigil::plan {
namespace {

Result<double> Duration(std::string_view flag, std::string_view text) {
  Result<double> seconds = ParseDuration(text);
  if (!seconds.ok()) {
    return Status::InvalidArgument(fmt::format("--{}: {}", flag, seconds.status().message()));
  }
  return seconds;
}

Result<DrainPolicy> PolicyOf(const ImpactRequest& r) {
  DrainPolicy p;
  VIGIL_ASSIGN_OR_RETURN(p.interruption.restart_s, Duration("restart", r.restart));
  VIGIL_ASSIGN_OR_RETURN(p.interruption.queue_s, Duration("queue", r.queue));
  VIGIL_ASSIGN_OR_RETURN(p.interruption.interval_s, Duration("interval", r.interval));
  if (!r.remaining.empty()) {
    VIGIL_ASSIGN_OR_RETURN(p.remaining_s, Duration("remaining", r.remaining));
  }
  p.spare = r.spare;
  return p;
}

// The node of `table` that the request names (or the only one), all its rows merged into one: a
// node's figures may come in several files (a GEMM run and an NCCL run); where two rows hold one
// key, the later row's value is kept (its latest results).
Result<FleetTable> OneNode(const FleetTable& table, const ImpactRequest& r) {
  const std::string files = fmt::format("{}", fmt::join(r.node, ", "));
  std::string name = r.node_name;
  if (name.empty()) {
    for (size_t i = 0; i < table.node_count(); ++i) {
      if (name.empty()) name = table.node(i);
      if (table.node(i) != name) {
        return Status::InvalidArgument(
            fmt::format("{}: nodes '{}' and '{}'; name the degraded one with --node-name", files,
                        name, table.node(i)));
      }
    }
  }
  FleetRow merged;
  merged.node = name;
  std::map<std::string, size_t> at;  // key -> its place in merged.values
  std::string source;
  for (size_t i = 0; i < table.node_count(); ++i) {
    if (table.node(i) != name) continue;
    for (auto& [key, value] : table.Row(i).values) {
      const auto [it, fresh] = at.emplace(key, merged.values.size());
      if (fresh) {
        merged.values.emplace_back(key, value);
      } else {
        merged.values[it->second].second = value;
      }
    }
    if (merged.hardware.empty()) merged.hardware = table.hardware(i);
    source = table.source(i);
  }
  if (source.empty()) {
    return Status::InvalidArgument(fmt::format("--node-name: no node '{}' in {}", name, files));
  }
  return TableOfRows({merged}, source);
}

// The node's ratios to the fleet: per component its worst GPU (or NIC), which paces the job,
// against the fleet's nodes summed up the same way (the median over nodes of each node's worst
// GPU), so that a node like the fleet's typical one reads 1 and not its GPUs' spread below it. A
// fleet of the datasheet alone is its efficiency-discounted peaks.
Result<Ratios> NodeRatios(const ImpactRequest& r, const HardwareProfile& fleet, std::string* what) {
  VIGIL_ASSIGN_OR_RETURN(const FleetTable all, ReadResultsTable(r.node));
  VIGIL_ASSIGN_OR_RETURN(const FleetTable one, OneNode(all, r));
  *what = fmt::format("{} ({})", one.node(0), one.source(0));
  HardwareProfile empty;
  empty.source = "nothing";
  VIGIL_ASSIGN_OR_RETURN(const HardwareProfile node,
                         MeasuredProfile(one, empty, *what, PerNode::kWorst));
  Ratios ratios = RatiosToFleet(node, fleet);
  if (ratios.empty()) {
    return Status::InvalidArgument(
        fmt::format("{}: no figure that the fleet's profile also has to compare", *what));
  }
  return ratios;
}

std::string Hours(double seconds) {
  return std::isinf(seconds) ? "never" : FormatDuration(seconds);
}

Json HoursJson(double seconds) {
  return std::isinf(seconds) ? Json(nullptr) : Json(seconds / kSecondsPerHour);
}

Json OptionJson(const DrainOption& o) {
  Json j{{"possible", o.possible},
         {"lost_h", o.lost_s / kSecondsPerHour},
         {"speed", o.speed},
         {"break_even_h", o.possible ? HoursJson(o.break_even_s) : Json(nullptr)}};
  if (!o.why_not.empty()) j["why_not"] = o.why_not;
  if (o.layout) {
    j["layout"] = LayoutJson(o.layout->layout);
    j["tokens_per_s"] = o.layout->prediction.tokens_per_s;
  }
  return j;
}

const DrainOption& Chosen(const ImpactAnswer& a) {
  return a.policy.spare ? a.result.spare : a.result.shrink;
}

std::string DecisionText(const ImpactAnswer& a) {
  const DrainOption& o = Chosen(a);
  const std::string how = a.policy.spare ? "to a spare node" : "and shrinking the job";
  switch (a.result.verdict) {
    case Verdict::kKeep:
      if (a.result.slowdown <= 0) return "keep the node: it does not slow this job";
      if (!o.possible) return fmt::format("keep the node: draining {} is not possible", how);
      return fmt::format("keep the node: draining {} never pays", how);
    case Verdict::kDrainIfLonger:
      return fmt::format("drain ({}) if the job runs on for more than {}", how,
                         Hours(o.break_even_s));
    case Verdict::kDrain:
      return fmt::format("drain ({}): the job runs on for {}, more than the break-even {}", how,
                         Hours(*a.policy.remaining_s), Hours(o.break_even_s));
    case Verdict::kKeepToEnd:
      return fmt::format("keep the node: the job ends in {}, before draining pays ({})",
                         Hours(*a.policy.remaining_s), Hours(o.break_even_s));
  }
  return "";
}

std::string OptionText(std::string_view title, const DrainOption& o) {
  if (!o.possible) return fmt::format("{}: not possible ({})\n", title, o.why_not);
  std::string text = fmt::format("{}: loses {} at once, then runs at {:.1f}% of healthy speed",
                                 title, FormatDuration(o.lost_s), 100 * o.speed);
  if (o.layout) {
    const Layout& l = o.layout->layout;
    text += fmt::format(" ({}, micro-batch {})", LayoutText(l), l.micro_batch);
  }
  return text + fmt::format("; pays after {}\n", Hours(o.break_even_s));
}

}  // namespace

Result<ImpactAnswer> AnswerImpact(const ImpactRequest& r) {
  ImpactAnswer a;
  // The fleet's files are read once: the median profile prices the job, the worst-GPU one is what
  // the node is compared with.
  VIGIL_ASSIGN_OR_RETURN(const FleetProfiles fleet, ProfilesFor(r.job.gpu, r.job.hardware));
  VIGIL_ASSIGN_OR_RETURN(a.job, AnswerTrain(r.job, &fleet.median));
  if (r.node.empty() == r.slow.empty()) {
    return Status::InvalidArgument(
        "give the node's results (--node) or a what-if (--slow), one of the two");
  }
  if (!r.slow.empty()) {
    VIGIL_ASSIGN_OR_RETURN(a.ratios, ParseSlowdowns(r.slow));
    a.node = fmt::format("--slow {}", r.slow);
  } else {
    VIGIL_ASSIGN_OR_RETURN(a.ratios, NodeRatios(r, fleet.worst, &a.node));
  }
  VIGIL_ASSIGN_OR_RETURN(a.policy, PolicyOf(r));
  VIGIL_ASSIGN_OR_RETURN(a.result, Impact(a.job.model, a.job.layout, a.job.hw, a.ratios, a.policy));
  return a;
}

Json ImpactJson(const ImpactAnswer& a) {
  const ImpactResult& r = a.result;
  Json components = Json::array();
  for (const ComponentImpact& c : r.components) {
    components.push_back({{"component", ComponentName(c.component)},
                          {"ratio", c.ratio},
                          {"slowdown", c.slowdown},
                          {"term", c.term}});
  }
  Json moved = Json::array();
  for (const auto& [term, seconds] : r.moved) moved.push_back({{"term", term}, {"s", seconds}});
  return Json{
      {"node", a.node},
      {"slowdown", r.slowdown},
      {"healthy_step_time_s", r.healthy.step_time_s},
      {"degraded_step_time_s", r.degraded.step_time_s},
      {"gpus", a.job.layout.gpus},
      {"keep_gpu_hours_per_hour", r.keep_gpu_hours_per_hour},
      {"components", std::move(components)},
      {"moved", std::move(moved)},
      {"drain", {{"spare", OptionJson(r.spare)}, {"shrink", OptionJson(r.shrink)}}},
      {"spare", a.policy.spare},
      {"decision", VerdictName(r.verdict)},
      {"break_even_h", Chosen(a).possible ? HoursJson(Chosen(a).break_even_s) : Json(nullptr)},
      {"remaining_h",
       a.policy.remaining_s ? Json(*a.policy.remaining_s / kSecondsPerHour) : Json(nullptr)},
      {"layout", LayoutJson(a.job.layout)},
      {"profile", ProfileJson(a.job.hw)}};
}

std::string ImpactText(const ImpactAnswer& a) {
  const ImpactResult& r = a.result;
  const Layout& l = a.job.layout;
  std::string out =
      fmt::format("{} on {} {} GPUs ({}), one node degraded: {}\nFleet profile: {}\n\n",
                  a.job.model.name.empty() ? "model" : a.job.model.name, l.gpus, a.job.hw.gpu,
                  LayoutText(l), a.node, a.job.hw.source);
  out += fmt::format("Step time {:.4g} s healthy, {:.4g} s with the node: {:+.2f}%\n\n",
                     r.healthy.step_time_s, r.degraded.step_time_s, 100 * r.slowdown);
  Table table({"component", "node / fleet", "job slowdown", "term that grew most"});
  for (const ComponentImpact& c : r.components) {
    table.Add({std::string(ComponentName(c.component)), fmt::format("{:.3f}", c.ratio),
               fmt::format("{:+.2f}%", 100 * c.slowdown), c.term.empty() ? "-" : c.term});
  }
  out += table.ToString();
  out += fmt::format(
      "\nKeeping the node costs {:.2f} GPU-hours per wall-clock hour (a {:.2f}% slower step on {} "
      "GPUs).\n",
      r.keep_gpu_hours_per_hour, 100 * r.slowdown, l.gpus);
  out += OptionText("Draining to a spare node", r.spare);
  out += OptionText(fmt::format("Draining and running on {} GPUs", l.gpus - a.job.hw.gpus_per_node),
                    r.shrink);
  out += fmt::format("Decision: {}.\n", DecisionText(a));
  return out;
}

}  // namespace vigil::plan
