#include "cli/model_checkpoint.h"

#include <fmt/format.h>

#include "vigil/core/duration.h"
#include "vigil/core/json.h"
#include "vigil/reliability/models.h"

namespace vigil::cli {
namespace {

// The write time must be positive (Young's interval of a free write is 0).
constexpr Bounds kCheckpointWriteBounds{
    .lo = 0, .hi = 7 * 86400.0, .lo_open = true, .seconds = true};
constexpr Bounds kMtbfBounds{.lo = 1, .hi = 3650 * 86400.0, .seconds = true};

// --mtbf, or the MTTF of the job of --gpus or --nodes at --rate.
Result<double> MtbfOf(const ModelCheckpointOptions& o) {
  if (o.mtbf.empty()) {
    VIGIL_ASSIGN_OR_RETURN(const double nodes, JobNodes(o.size));
    return reliability::JobMttfSeconds(nodes, o.rate);
  }
  if (o.size.gpus != 0 || o.size.nodes != 0) {
    return Status::InvalidArgument("give --mtbf, or the job size with --rate, not both");
  }
  return ParseDurationFlag("--mtbf", o.mtbf, kMtbfBounds);
}

}  // namespace

CLI::App* SetupModelCheckpoint(CLI::App& model, ModelCheckpointOptions& o) {
  CLI::App* c = model.add_subcommand(
      "checkpoint", "Optimal checkpoint interval: Young's sqrt(2 delta M) and Daly's estimate");
  c->add_option("--write", o.write, "Checkpoint write (dump) time, e.g. 5m")->required();
  c->add_option("--mtbf", o.mtbf,
                "Mean time between failures, e.g. 24h (or give the job size and --rate)");
  AddJobSizeFlags(*c, o.size);
  AddModelRateFlag(*c, o.rate);
  c->add_flag("--json", o.json, "Print JSON");
  return c;
}

CommandResult RunModelCheckpoint(const ModelCheckpointOptions& o) {
  VIGIL_ASSIGN_OR_RETURN(const double write,
                         ParseDurationFlag("--write", o.write, kCheckpointWriteBounds));
  VIGIL_ASSIGN_OR_RETURN(const double mtbf, MtbfOf(o));
  VIGIL_ASSIGN_OR_RETURN(const reliability::CheckpointIntervals i,
                         reliability::OptimalCheckpointIntervals(write, mtbf));
  if (o.json) {
    fmt::print("{}\n", DumpJson(Json{{"write_s", write},
                                     {"mtbf_s", mtbf},
                                     {"young_interval_s", i.young_s},
                                     {"daly_interval_s", i.daly_s}},
                                2));
    return ExitCode::kHealthy;
  }
  Table table({"METHOD", "INTERVAL", "MINUTES", "FORMULA"});
  table.Add({"Young (1974)", FormatDuration(i.young_s), FormatFigure(i.young_s / kSecondsPerMinute),
             "sqrt(2 delta M)"});
  table.Add({"Daly (2006)", FormatDuration(i.daly_s), FormatFigure(i.daly_s / kSecondsPerMinute),
             "sqrt(2 delta M)[1 + sqrt(delta/2M)/3 + delta/18M] - delta"});
  fmt::print("Checkpoint interval for a write time of {} and an MTBF of {}\n\n{}",
             FormatDuration(write), FormatDuration(mtbf), table.ToString());
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
