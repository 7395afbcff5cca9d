#include "cli/plan_impact.h"

#include <fmt/format.h>

#include "cli/plan_train.h"
#include "vigil/core/json.h"

namespace vigil::cli {

CLI::App* SetupPlanImpact(CLI::App& plan, PlanImpactOptions& o) {
  CLI::App* c = plan.add_subcommand(
      "impact",
      "The slowdown of a synchronous job on a degraded node, and when draining the node pays");
  plan::ImpactRequest& r = o.request;
  AddPlanJobFlags(*c, r.job);
  c->add_option("--node", r.node,
                "The degraded node's results (a results document or a fleet summary, Vigil's or "
                "SuperBench's; a directory: its *.json and *.jsonl), compared with the fleet's "
                "(--hardware, or the datasheet)")
      ->type_name("RESULTS.json");
  c->add_option("--node-name", r.node_name, "Which node of --node's files (when they hold more)");
  c->add_option("--slow", r.slow,
                "A what-if instead of --node: the node's figures over the fleet's, e.g. "
                "gemm=0.88,nic=0.5 (gemm, bf16, fp8, hbm, nvlink, nic, host)");
  c->add_option("--restart", r.restart, "Draining: detection, restart and reload time")
      ->capture_default_str();
  c->add_option("--queue", r.queue, "Draining: time waiting for a node")->capture_default_str();
  c->add_option("--interval", r.interval,
                "The checkpoint interval (half of it is done again after the drain)")
      ->capture_default_str();
  c->add_option("--remaining", r.remaining,
                "How long the job runs on (e.g. 3d); without it, the break-even is the answer");
  c->add_flag("--no-spare", o.no_spare,
              "No spare node: the drained job runs on one node fewer (the best layout there)");
  c->add_flag("--json", o.json, "Print JSON");
  return c;
}

CommandResult RunPlanImpact(const PlanImpactOptions& o) {
  plan::ImpactRequest request = o.request;
  request.spare = !o.no_spare;
  VIGIL_ASSIGN_OR_RETURN(const plan::ImpactAnswer answer, plan::AnswerImpact(request));
  if (o.json) {
    fmt::print("{}\n", DumpJson(plan::ImpactJson(answer), 2));
  } else {
    fmt::print("{}", plan::ImpactText(answer));
  }
  // Without --remaining the answer is a horizon ("drain if the job runs on for more than X"),
  // not a finding: only a decided drain is.
  return answer.result.verdict == plan::Verdict::kDrain ? ExitCode::kDefect : ExitCode::kHealthy;
}

}  // namespace vigil::cli
