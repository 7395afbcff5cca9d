#include "cli/model.h"

#include <fmt/format.h>

#include <charconv>

#include "vigil/core/duration.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/reliability/models.h"

namespace vigil::cli {
namespace {

using reliability::EttrEstimate;
using reliability::EttrParams;

const std::vector<int64_t> kDefaultGpus = {8, 64, 512, 2048, 8192, 16384, 32768, 65536, 131072};

// model checkpoint's write time must be positive (Young's interval of a free write is 0).
constexpr Bounds kCheckpointWriteBounds{
    .lo = 0, .hi = 7 * 86400.0, .lo_open = true, .seconds = true};
constexpr Bounds kMtbfBounds{.lo = 1, .hi = 3650 * 86400.0, .seconds = true};

void AddRateFlag(CLI::App& cmd, double& rate) {
  cmd.add_option("--rate", rate, "Failures per 1000 node-days (Meta's RSC-1: 6.5)")
      ->check(InBounds(kFailureRateBounds))
      ->capture_default_str();
}

// "gpus=1024..131072": the sizes from A doubling up to B (and B itself), in nodes.
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

Json EttrJson(int gpus_per_node, const EttrParams& p, const EttrEstimate& e) {
  return Json{{"nodes", p.nodes},
              {"gpus", p.nodes * gpus_per_node},
              {"failures_per_1000_node_days", p.failures_per_1000_node_days},
              {"mttf_s", *reliability::JobMttfSeconds(p.nodes, p.failures_per_1000_node_days)},
              {"restart_s", p.restart_s},
              {"queue_s", p.queue_s},
              {"interval_s", p.interval_s},
              {"write_s", p.write_s},
              {"ettr", e.ettr},
              {"failure_loss", e.failure_loss},
              {"checkpoint_overhead", e.checkpoint_overhead},
              {"in_domain", e.in_domain},
              {"optimal_interval_s", e.optimal_interval_s},
              {"ettr_at_optimal", e.ettr_at_optimal}};
}

std::string SimulateCommand(const EttrParams& p, const ModelEttrOptions& o) {
  return fmt::format(
      "vigil simulate job --nodes {} --rate {} --detect 0s --restart {} --queue {} --interval {} "
      "--write {}",
      p.nodes, p.failures_per_1000_node_days, o.restart, o.queue, o.interval, o.write);
}

}  // namespace

ModelCommands SetupModel(CLI::App& parent, ModelMttfOptions& mttf, ModelEttrOptions& ettr,
                         ModelCheckpointOptions& checkpoint) {
  CLI::App* model = parent.add_subcommand(
      "model", "Analytic reliability models: MTTF at scale, ETTR, checkpoint intervals");
  model->require_subcommand(1);

  CLI::App* m = model->add_subcommand(
      "mttf", "Mean time to failure of a job by size: MTTF(N) = 1 / (N_nodes * r_f)");
  m->add_option("--gpus", mttf.gpus, "Job sizes in GPUs, comma-separated (default: 8 to 131072)")
      ->delimiter(',')
      ->check(InBounds(kGpusBounds));
  m->add_option("--gpus-per-node", mttf.gpus_per_node, "GPUs per node")
      ->check(InBounds(kGpusPerNodeBounds))
      ->capture_default_str();
  AddRateFlag(*m, mttf.rate);
  m->add_flag("--json", mttf.json, "Print JSON");

  CLI::App* e = model->add_subcommand(
      "ettr",
      "Expected effective training time ratio: (1 - N r_f (u0 + q + dt/2)) / (1 + w_cp/dt)");
  AddJobSizeFlags(*e, ettr.size);
  AddRateFlag(*e, ettr.rate);
  e->add_option("--restart", ettr.restart, "u0: detection, restart and initialisation time")
      ->capture_default_str();
  e->add_option("--queue", ettr.queue, "q: queue time after each interruption")
      ->capture_default_str();
  e->add_option("--interval", ettr.interval, "dt: compute time between checkpoints")
      ->capture_default_str();
  e->add_option("--write", ettr.write, "w_cp: blocking checkpoint write time")
      ->capture_default_str();
  e->add_option("--sweep", ettr.sweep,
                "gpus=A..B or nodes=A..B: a table of sizes doubling from A to B (instead of "
                "--gpus/--nodes)");
  e->add_flag("--json", ettr.json, "Print JSON");

  CLI::App* c = model->add_subcommand(
      "checkpoint", "Optimal checkpoint interval: Young's sqrt(2 delta M) and Daly's estimate");
  c->add_option("--write", checkpoint.write, "Checkpoint write (dump) time, e.g. 5m")->required();
  c->add_option("--mtbf", checkpoint.mtbf,
                "Mean time between failures, e.g. 24h (or give the job size and --rate)");
  AddJobSizeFlags(*c, checkpoint.size);
  AddRateFlag(*c, checkpoint.rate);
  c->add_flag("--json", checkpoint.json, "Print JSON");
  return {m, e, c};
}

CommandResult RunModelMttf(const ModelMttfOptions& o) {
  VIGIL_RETURN_IF_ERROR(CheckBounds("--gpus-per-node", o.gpus_per_node, kGpusPerNodeBounds));
  const std::vector<int64_t>& sizes = o.gpus.empty() ? kDefaultGpus : o.gpus;
  Json rows = Json::array();
  Table table({"GPUS", "NODES", "MTTF", "MTTF_HOURS", "FAILURES_PER_DAY"});
  for (int64_t gpus : sizes) {
    VIGIL_RETURN_IF_ERROR(CheckBounds("--gpus", static_cast<double>(gpus), kGpusBounds));
    const double nodes = static_cast<double>(gpus) / o.gpus_per_node;
    VIGIL_ASSIGN_OR_RETURN(const double mttf, reliability::JobMttfSeconds(nodes, o.rate));
    rows.push_back(Json{{"gpus", gpus},
                        {"nodes", nodes},
                        {"mttf_s", mttf},
                        {"failures_per_1000_node_days", o.rate}});
    table.Add({fmt::format("{}", gpus), FormatFigure(nodes), FormatDuration(mttf),
               FormatFigure(mttf / kSecondsPerHour), FormatFigure(kSecondsPerDay / mttf)});
  }
  if (o.json) {
    fmt::print("{}\n", DumpJson(rows, 2));
  } else {
    fmt::print(
        "MTTF(N) = 1 / (N_nodes * r_f) at r_f = {} failures per 1000 node-days, {} GPUs "
        "per node\n\n{}",
        o.rate, o.gpus_per_node, table.ToString());
  }
  return ExitCode::kHealthy;
}

CommandResult RunModelEttr(const ModelEttrOptions& o) {
  EttrParams p;
  p.failures_per_1000_node_days = o.rate;
  VIGIL_ASSIGN_OR_RETURN(p.restart_s, ParseDurationFlag("--restart", o.restart, kOutageBounds));
  VIGIL_ASSIGN_OR_RETURN(p.queue_s, ParseDurationFlag("--queue", o.queue, kOutageBounds));
  VIGIL_ASSIGN_OR_RETURN(p.interval_s,
                         ParseDurationFlag("--interval", o.interval, kIntervalBounds));
  VIGIL_ASSIGN_OR_RETURN(p.write_s, ParseDurationFlag("--write", o.write, kWriteBounds));
  const int gpn = o.size.gpus_per_node;
  VIGIL_RETURN_IF_ERROR(CheckBounds("--gpus-per-node", gpn, kGpusPerNodeBounds));

  if (!o.sweep.empty()) {
    if (o.size.gpus != 0 || o.size.nodes != 0) {
      return Status::InvalidArgument("--sweep replaces --gpus and --nodes; give one or the other");
    }
    VIGIL_ASSIGN_OR_RETURN(const Sweep sweep, ParseSweep(o.sweep));
    Json rows = Json::array();
    Table table({"GPUS", "NODES", "MTTF", "ETTR", "FAILURE_LOSS", "OPTIMAL_INTERVAL",
                 "ETTR_AT_OPTIMAL", "FORMULA"});
    bool any_outside = false;
    for (int64_t size : sweep.sizes) {
      p.nodes = sweep.in_gpus ? static_cast<double>(size) / gpn : static_cast<double>(size);
      VIGIL_ASSIGN_OR_RETURN(const EttrEstimate e, reliability::ExpectedEttr(p));
      any_outside |= !e.in_domain;
      rows.push_back(EttrJson(gpn, p, e));
      table.Add(
          {FormatFigure(p.nodes * gpn), FormatFigure(p.nodes),
           FormatDuration(*reliability::JobMttfSeconds(p.nodes, p.failures_per_1000_node_days)),
           FormatFigure(e.ettr), FormatFigure(e.failure_loss), FormatDuration(e.optimal_interval_s),
           FormatFigure(e.ettr_at_optimal), e.in_domain ? "ok" : "outside: simulate"});
    }
    if (o.json) {
      fmt::print("{}\n", DumpJson(rows, 2));
      return ExitCode::kHealthy;
    }
    fmt::print(
        "Expected ETTR by job size at r_f = {} per 1000 node-days; u0 {}, q {}, dt {}, "
        "w_cp {}\n\n{}",
        o.rate, o.restart, o.queue, o.interval, o.write, table.ToString());
    if (any_outside) {
      fmt::print(
          "\nRows marked \"outside\" lose more than {:.0f}% of the time to failures, where "
          "the first-order formula is not trusted: use `vigil simulate job` there.\n",
          reliability::kEttrDomainLimit * 100);
    }
    return ExitCode::kHealthy;
  }

  VIGIL_ASSIGN_OR_RETURN(p.nodes, JobNodes(o.size));
  VIGIL_ASSIGN_OR_RETURN(const EttrEstimate e, reliability::ExpectedEttr(p));
  if (!e.in_domain) {
    return Status::InvalidArgument(fmt::format(
        "the ETTR formula is outside its domain here: failures cost {:.1f}% of the time "
        "(N r_f (u0 + q + dt/2) = {:.3f} > {}), where its first-order error is no longer small "
        "(it would say {:.3f}). Simulate instead:\n  {}",
        e.failure_loss * 100, e.failure_loss, reliability::kEttrDomainLimit, e.ettr,
        SimulateCommand(p, o)));
  }
  if (o.json) {
    fmt::print("{}\n", DumpJson(EttrJson(gpn, p, e), 2));
    return ExitCode::kHealthy;
  }
  const double mttf = *reliability::JobMttfSeconds(p.nodes, p.failures_per_1000_node_days);
  Table table({"QUANTITY", "VALUE", "MEANING"});
  table.Add({"job MTTF", FormatDuration(mttf), "1 / (N_nodes r_f)"});
  table.Add({"failure loss", FormatFigure(e.failure_loss), "N r_f (u0 + q + dt/2)"});
  table.Add({"checkpoint overhead", FormatFigure(e.checkpoint_overhead), "w_cp / dt"});
  table.Add({"expected ETTR", FormatFigure(e.ettr), "(1 - loss) / (1 + overhead)"});
  if (p.write_s > 0) {
    table.Add(
        {"optimal interval", FormatDuration(e.optimal_interval_s), "dt* = sqrt(2 w_cp / (N r_f))"});
    table.Add({"ETTR at optimum", FormatFigure(e.ettr_at_optimal), ""});
  }
  fmt::print("ETTR of a job on {} nodes ({} GPUs) at r_f = {} per 1000 node-days\n\n{}",
             FormatFigure(p.nodes), FormatFigure(p.nodes * gpn), o.rate, table.ToString());
  return ExitCode::kHealthy;
}

CommandResult RunModelCheckpoint(const ModelCheckpointOptions& o) {
  VIGIL_ASSIGN_OR_RETURN(const double write,
                         ParseDurationFlag("--write", o.write, kCheckpointWriteBounds));
  double mtbf = 0;
  if (!o.mtbf.empty()) {
    if (o.size.gpus != 0 || o.size.nodes != 0) {
      return Status::InvalidArgument("give --mtbf, or the job size with --rate, not both");
    }
    VIGIL_ASSIGN_OR_RETURN(mtbf, ParseDurationFlag("--mtbf", o.mtbf, kMtbfBounds));
  } else {
    VIGIL_ASSIGN_OR_RETURN(const double nodes, JobNodes(o.size));
    VIGIL_ASSIGN_OR_RETURN(mtbf, reliability::JobMttfSeconds(nodes, o.rate));
  }
  if (mtbf <= 0) return Status::InvalidArgument("--mtbf must be positive");
  const double young = reliability::YoungInterval(write, mtbf);
  const double daly = reliability::DalyInterval(write, mtbf);
  if (o.json) {
    fmt::print("{}\n", DumpJson(Json{{"write_s", write},
                                     {"mtbf_s", mtbf},
                                     {"young_interval_s", young},
                                     {"daly_interval_s", daly}},
                                2));
    return ExitCode::kHealthy;
  }
  Table table({"METHOD", "INTERVAL", "MINUTES", "FORMULA"});
  table.Add({"Young (1974)", FormatDuration(young), FormatFigure(young / kSecondsPerMinute),
             "sqrt(2 delta M)"});
  table.Add({"Daly (2006)", FormatDuration(daly), FormatFigure(daly / kSecondsPerMinute),
             "sqrt(2 delta M)[1 + sqrt(delta/2M)/3 + delta/18M] - delta"});
  fmt::print("Checkpoint interval for a write time of {} and an MTBF of {}\n\n{}",
             FormatDuration(write), FormatDuration(mtbf), table.ToString());
  return ExitCode::kHealthy;
}

}  // namespace vigil::cli
