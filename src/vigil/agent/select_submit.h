// `vigil select --submit` between its flags and its printing (docs/select.md, "Submitting the plan
// to Slurm"): the plan is made with Slurm's view of every node, then each planned validation is
// submitted as one whole-node Slurm job.
//
// Slurm's view: a node that Slurm lists as idle is planned first; an allocated one is planned
// after (its job waits for the node); a node down, drained, failing, not responding or unknown to
// Slurm is not planned; a node with a validation job of Vigil's already queued or running is not
// planned again, and counts against --max-share. So a `vigil select --submit` that cron runs every
// hour never piles up validations on one node, and never holds more than the share at once.
#pragma once

#include <string>
#include <vector>

#include "vigil/cluster/command.h"
#include "vigil/cluster/slurm.h"
#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/select/history.h"
#include "vigil/select/selector.h"
#include "vigil/telemetry/http_client.h"

namespace vigil::agent {

struct SubmitOptions {
  cluster::SlurmOptions slurm;
  // The job's script, one shell command line, in which {node} and {benchmarks} (the planned
  // benchmarks, comma-separated) are replaced by single-quoted words (so they must not stand
  // inside quotes of the line's own); it must hold {benchmarks}. "": this program's `run --bench
  // {benchmarks} --out vigil-validate-{node}-$SLURM_JOB_ID.json`, reporting to `report_url` when
  // set, and then every planned benchmark must be one that this build of Vigil runs
  // (InvalidArgument otherwise, before anything is submitted).
  std::string command;
  // The default command's `--report`, `--token-file` and TLS flags: the fleet service whose
  // history the plan came from, so that the next plan sees these validations. "": none.
  std::string report_url;
  std::string token_file;
  telemetry::TlsClientOptions tls;
  std::string partition;  // sbatch's --partition; "" : Slurm's default
  std::string account;    // --account; "" : the user's default
  std::string output;     // --output; "" : Slurm's default
  // A job's --time: this many times its benchmarks' expected seconds, and at least kMinJobTime.
  double time_factor = 2;
  bool dry_run = false;  // plan with Slurm's view, print what would be submitted, submit nothing
};

inline constexpr double kMinJobTime = 600;

// How the history's nodes stand in Slurm when the plan was made.
struct SlurmView {
  int idle = 0;
  int busy = 0;
  int unavailable = 0;  // down, drained, failing...
  int validating = 0;   // a validation job of Vigil's queued or running
  int unknown = 0;      // in the history, not in Slurm
};

struct Submission {
  std::string node;
  std::vector<std::string> benchmarks;
  std::vector<std::string> sbatch;  // the program and its arguments
  std::string job_id;               // "" in a dry run, or when sbatch failed
  Status status;                    // sbatch's failure
};

struct SubmitOutcome {
  select::Selection selection;
  SlurmView view;
  std::vector<cluster::SlurmJob> queued;  // the validations already queued for the history's nodes
  std::vector<Submission> submissions;    // one per planned validation, in the plan's order
  // IoError saying how many submissions failed, with the first one's node and message (the others
  // were still tried); Ok when none failed.
  Status Failed() const;
};

// InvalidArgument naming the flag unless the command holds {benchmarks} and the time factor is
// finite and >= 1.
Status Validate(const SubmitOptions& options);

// Reads Slurm's nodes and queue through `runner`, plans, and submits (unless a dry run).
// Errors before any submission: Validate's, SelectFromHistory's, Slurm's (scontrol, squeue),
// CheckValidationJob's, a planned benchmark whose name is not plain (letters, digits and
// "._:/-": names come from uploads, and reach a shell) or that the default command cannot run.
// Failures of single submissions are in the outcome (SubmitOutcome::Failed), not an error here.
Result<SubmitOutcome> SelectAndSubmit(const select::History& history,
                                      const select::SelectOptions& select_options,
                                      const SubmitOptions& options, cluster::CommandRunner& runner);

// SelectionToJson with "slurm" (the view's counts), "queued" (node, job_id, state of the
// validations already queued) and "submissions" (node, benchmarks, sbatch's words, job_id, and
// error when it failed) added.
Json SubmitOutcomeToJson(const SubmitOutcome& outcome, const select::History& history);

}  // namespace vigil::agent
