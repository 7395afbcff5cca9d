#include "cli/model_mttf.h"

#include <fmt/format.h>

#include "vigil/core/duration.h"
#include "vigil/core/json.h"
#include "vigil/reliability/models.h"
#include "vigil/reliability/plots.h"

namespace vigil::cli {
namespace {

const std::vector<int64_t> kDefaultGpus = {8, 64, 512, 2048, 8192, 16384, 32768, 65536, 131072};

}  // namespace

CLI::App* SetupModelMttf(CLI::App& model, ModelMttfOptions& o) {
  CLI::App* m = model.add_subcommand(
      "mttf", "Mean time to failure of a job by size: MTTF(N) = 1 / (N_nodes * r_f)");
  m->add_option("--gpus", o.gpus, "Job sizes in GPUs, comma-separated (default: 8 to 131072)")
      ->delimiter(',')
      ->check(InBounds(kGpusBounds));
  m->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node")
      ->check(InBounds(kGpusPerNodeBounds))
      ->capture_default_str();
  AddModelRateFlag(*m, o.rate);
  AddPlotFlag(*m, o.plot, "MTTF against GPUs (log axes)");
  m->add_flag("--json", o.json, "Print JSON");
  return m;
}

CommandResult RunModelMttf(const ModelMttfOptions& o) {
  VIGIL_RETURN_IF_ERROR(CheckPlotFlag(o.plot));
  VIGIL_ASSIGN_OR_RETURN(
      const std::vector<reliability::MttfRow> rows,
      reliability::MttfBySize(o.gpus.empty() ? kDefaultGpus : o.gpus, o.gpus_per_node, o.rate));
  if (!o.plot.empty()) {
    VIGIL_RETURN_IF_ERROR(WritePlot(o.plot, reliability::MttfPlot(rows, o.gpus_per_node, o.rate)));
  }
  if (o.json) {
    Json out = Json::array();
    for (const reliability::MttfRow& r : rows) {
      out.push_back(Json{{"gpus", r.gpus},
                         {"nodes", r.nodes},
                         {"mttf_s", r.mttf_s},
                         {"failures_per_1000_node_days", o.rate}});
    }
    fmt::print("{}\n", DumpJson(out, 2));
    return ExitCode::kHealthy;
  }
  Table table({"GPUS", "NODES", "MTTF", "MTTF_HOURS", "FAILURES_PER_DAY"});
  for (const reliability::MttfRow& r : rows) {
    table.Add({fmt::format("{}", r.gpus), FormatFigure(r.nodes), FormatDuration(r.mttf_s),
               FormatFigure(r.mttf_s / kSecondsPerHour), FormatFigure(kSecondsPerDay / r.mttf_s)});
  }
  fmt::print(
      "MTTF(N) = 1 / (N_nodes * r_f) at r_f = {} failures per 1000 node-days, {} GPUs "
      "per node\n\n{}",
      o.rate, o.gpus_per_node, table.ToString());
  if (!o.plot.empty()) fmt::print("\nPlot written to {}\n", o.plot);
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
