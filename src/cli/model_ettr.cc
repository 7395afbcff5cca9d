#include "cli/model_ettr.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

#include "vigil/core/duration.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/reliability/models.h"
#include "vigil/sim/ettr_answer.h"

namespace vigil::cli {
namespace {

using reliability::EttrEstimate;
using reliability::EttrParams;

// "gpus=1024..131072": the sizes from A doubling up to B (and B itself), in GPUs or nodes.
struct Sweep {
  bool in_gpus = true;
  std::vector<int64_t> sizes;
};

Result<Sweep> ParseSweep(std::string_view text) {
  const auto bad = [&] {
    return Status::InvalidArgument(
        fmt::format("--sweep: expected gpus=A..B or nodes=A..B with 1 <= A <= B <= {}, got {}",
                    FormatBound(kGpusBounds.hi), Quote(text)));
  };
  const size_t eq = text.find('=');
  const size_t dots = text.find("..");
  if (eq == std::string_view::npos || dots == std::string_view::npos || dots < eq) return bad();
  Sweep s;
  const std::string_view what = text.substr(0, eq);
  if (what != "gpus" && what != "nodes") return bad();
  s.in_gpus = what == "gpus";
  int64_t lo = 0, hi = 0;
  const std::string_view a = text.substr(eq + 1, dots - eq - 1), b = text.substr(dots + 2);
  if (std::from_chars(a.data(), a.data() + a.size(), lo).ptr != a.data() + a.size() ||
      std::from_chars(b.data(), b.data() + b.size(), hi).ptr != b.data() + b.size() || a.empty() ||
      b.empty() || lo < 1 || hi < lo || hi > (s.in_gpus ? kGpusBounds.hi : kNodesBounds.hi)) {
    return bad();
  }
  for (int64_t v = lo; v < hi; v *= 2) s.sizes.push_back(v);
  s.sizes.push_back(hi);
  return s;
}

// "ettr" is the answer (the simulated job's where the formula leaves its domain, never negative),
// "formula_ettr" the formula's whatever its domain.
Json EttrJson(int gpus_per_node, const sim::EttrAnswer& a) {
  const EttrParams& p = a.row.params;
  const EttrEstimate& e = a.row.estimate;
  return Json{{"nodes", p.nodes},
              {"gpus", p.nodes * gpus_per_node},
              {"failures_per_1000_node_days", p.failures_per_1000_node_days},
              {"mttf_s", a.row.mttf_s},
              {"restart_s", p.restart_s},
              {"queue_s", p.queue_s},
              {"interval_s", p.interval_s},
              {"write_s", p.write_s},
              {"ettr", a.Ettr()},
              {"ettr_from", a.simulated ? "simulation" : "formula"},
              {"formula_ettr", e.ettr},
              {"failure_loss", e.failure_loss},
              {"checkpoint_overhead", e.checkpoint_overhead},
              {"in_domain", e.in_domain},
              {"optimal_interval_s", e.optimal_interval_s},
              {"ettr_at_optimal", a.EttrAtOptimal()},
              {"formula_ettr_at_optimal", e.ettr_at_optimal}};
}

std::string SimulateCommand(const EttrParams& p, const ModelEttrOptions& o) {
  return fmt::format(
      "vigil simulate job --nodes {} --rate {} --detect 0s --restart {} --queue {} --interval {} "
      "--write {}",
      p.nodes, p.failures_per_1000_node_days, o.restart, o.queue, o.interval, o.write);
}

// The flags' job, its size aside.
Result<EttrParams> EttrParamsOf(const ModelEttrOptions& o) {
  EttrParams p;
  p.failures_per_1000_node_days = o.rate;
  VIGIL_ASSIGN_OR_RETURN(p.restart_s, ParseDurationFlag("--restart", o.restart, kOutageBounds));
  VIGIL_ASSIGN_OR_RETURN(p.queue_s, ParseDurationFlag("--queue", o.queue, kOutageBounds));
  VIGIL_ASSIGN_OR_RETURN(p.interval_s,
                         ParseDurationFlag("--interval", o.interval, kIntervalBounds));
  VIGIL_ASSIGN_OR_RETURN(p.write_s, ParseDurationFlag("--write", o.write, kWriteBounds));
  return p;
}

// The job sizes in nodes: the sweep's, or the one of --gpus or --nodes.
Result<std::vector<double>> NodesOf(const ModelEttrOptions& o) {
  if (o.sweep.empty()) {
    VIGIL_ASSIGN_OR_RETURN(const double nodes, JobNodes(o.size));
    return std::vector<double>{nodes};
  }
  if (o.size.gpus != 0 || o.size.nodes != 0) {
    return Status::InvalidArgument("--sweep replaces --gpus and --nodes; give one or the other");
  }
  VIGIL_ASSIGN_OR_RETURN(const Sweep sweep, ParseSweep(o.sweep));
  std::vector<double> nodes;
  for (const int64_t size : sweep.sizes) {
    nodes.push_back(sweep.in_gpus ? static_cast<double>(size) / o.size.gpus_per_node
                                  : static_cast<double>(size));
  }
  return nodes;
}

CommandResult PrintSweep(const ModelEttrOptions& o, const std::vector<sim::EttrAnswer>& rows) {
  if (o.json) {
    if (!o.plot.empty()) {
      VIGIL_RETURN_IF_ERROR(WritePlot(
          o.plot, sim::EttrSweepPlot(rows, o.size.gpus_per_node,
                                     fmt::format("r_f = {} per 1000 node-days", o.rate))));
    }
    Json out = Json::array();
    for (const sim::EttrAnswer& a : rows) out.push_back(EttrJson(o.size.gpus_per_node, a));
    fmt::print("{}\n", DumpJson(out, 2));
    return ExitCode::kHealthy;
  }
  const std::string job = fmt::format("r_f = {} per 1000 node-days; u0 {}, q {}, dt {}, w_cp {}",
                                      o.rate, o.restart, o.queue, o.interval, o.write);
  fmt::print("Expected ETTR by job size at {}\n\n{}", job,
             sim::EttrSweepTable(rows, o.size.gpus_per_node));
  if (!o.plot.empty()) {
    VIGIL_RETURN_IF_ERROR(WritePlot(o.plot, sim::EttrSweepPlot(rows, o.size.gpus_per_node, job)));
    fmt::print("\nPlot written to {}\n", o.plot);
  }
  return ExitCode::kHealthy;
}

CommandResult PrintOne(const ModelEttrOptions& o, const sim::EttrAnswer& a) {
  const EttrParams& p = a.row.params;
  const int gpn = o.size.gpus_per_node;
  if (o.json) {
    fmt::print("{}\n", DumpJson(EttrJson(gpn, a), 2));
    return ExitCode::kHealthy;
  }
  fmt::print("ETTR of a job on {} nodes ({} GPUs) at r_f = {} per 1000 node-days\n\n{}",
             FormatFigure(p.nodes), FormatFigure(p.nodes * gpn), o.rate, sim::EttrTable(a));
  if (a.simulated) {
    fmt::print("\nThe distribution, and where the time goes:\n  {}\n", SimulateCommand(p, o));
  }
  return ExitCode::kHealthy;
}

}  // namespace

CLI::App* SetupModelEttr(CLI::App& model, ModelEttrOptions& o) {
  CLI::App* e = model.add_subcommand(
      "ettr",
      "Expected effective training time ratio: (1 - N r_f (u0 + q + dt/2)) / (1 + w_cp/dt)");
  AddJobSizeFlags(*e, o.size);
  AddModelRateFlag(*e, o.rate);
  e->add_option("--restart", o.restart, "u0: detection, restart and initialisation time")
      ->capture_default_str();
  e->add_option("--queue", o.queue, "q: queue time after each interruption")->capture_default_str();
  e->add_option("--interval", o.interval, "dt: compute time between checkpoints")
      ->capture_default_str();
  e->add_option("--write", o.write, "w_cp: blocking checkpoint write time")->capture_default_str();
  e->add_option("--sweep", o.sweep,
                "gpus=A..B or nodes=A..B: a table of sizes doubling from A to B (instead of "
                "--gpus/--nodes)");
  AddPlotFlag(*e, o.plot, "ETTR against GPUs (with --sweep: a picture of the table)");
  e->add_flag("--json", o.json, "Print JSON");
  return e;
}

CommandResult RunModelEttr(const ModelEttrOptions& o) {
  if (!o.plot.empty() && o.sweep.empty()) {
    return Status::InvalidArgument("--plot draws a --sweep: give --sweep gpus=A..B");
  }
  VIGIL_RETURN_IF_ERROR(CheckPlotFlag(o.plot));
  VIGIL_ASSIGN_OR_RETURN(const EttrParams params, EttrParamsOf(o));
  VIGIL_ASSIGN_OR_RETURN(const std::vector<double> nodes, NodesOf(o));
  VIGIL_ASSIGN_OR_RETURN(const std::vector<sim::EttrAnswer> rows,
                         sim::AnswerEttrBySize(params, nodes));
  return o.sweep.empty() ? PrintOne(o, rows.front()) : PrintSweep(o, rows);
}

}  // namespace vigil::cli
