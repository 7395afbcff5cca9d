// A node's own run, what `vigil run` does between parsing its flags and printing: every option
// checked before the first benchmark, the suite run into the node's results document, the node
// judged by the fleet's criteria and by the rules that need no fleet, the one-line verdict (OK or
// the fault line), the fleet service told or asked, and the node's state in Slurm changed
// (docs/run.md, docs/slurm.md).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "vigil/bench/runner.h"
#include "vigil/cluster/node_check.h"
#include "vigil/core/bounds.h"
#include "vigil/core/clock.h"
#include "vigil/core/status.h"
#include "vigil/learned/judge.h"
#include "vigil/results/document.h"
#include "vigil/results/summary.h"
#include "vigil/telemetry/http_client.h"

namespace vigil::agent {

// The options, as `vigil run`'s flags give them; errors name those flags.
struct NodeAgentOptions {
  std::string suite = "quick";          // health, quick or full
  std::vector<std::string> benchmarks;  // only these (default: the suite's)
  std::string out;       // the node results document; "": vigil-results.json, none for health
  std::string summary;   // a fleet JSONL file to append this node's line to
  std::string textfile;  // a directory for node-exporter's textfile collector; "": none
  std::string gpus;      // "0,2-3": only these GPUs (default: every one)
  std::string node;      // "": $SLURMD_NODENAME, else the host name
  std::string scratch;   // where the disk benchmark writes; "": $TMPDIR or /tmp
  std::vector<std::string> set;       // benchmark parameters, "<benchmark>.<name>=<value>"
  std::string criteria;               // learned criteria to judge this node by (`vigil learn`)
  std::string report;                 // a fleet service (`vigil serve`)
  std::string token_file;             // its bearer token
  telemetry::TlsClientOptions tls;    // an https:// report
  std::string spool = "vigil-spool";  // where documents wait when the service is unreachable
  std::string host_root;              // where the host's /sys, /proc and /dev are; "" for /
  bool slurm = false;                 // drain on a fault, resume after a passed validation
  std::string slurm_conf;             // SLURM_CONF for scontrol; "": the environment's
  double max_drained_share = cluster::kDefaultMaxDrainedShare;  // the circuit breaker
  double drain_jitter_s = cluster::kDefaultDrainJitter;         // a drain waits a random part of it
  std::string vigil_version;                                    // the document's vigil_version
};

// --max-drained-share: a share of the nodes, and more than none.
inline constexpr Bounds kDrainedShareBounds{.lo = 0, .hi = 1, .lo_open = true};
// --drain-jitter: inside a health check's 60 s with the suite's 20 s.
inline constexpr Bounds kDrainJitterBounds{.lo = 0, .hi = 30, .seconds = true};

struct NodeAgentResult {
  NodeResults doc;
  std::string out;       // where the document was written; "": nowhere
  std::string textfile;  // where --textfile's vigil.prom was written; "": nowhere
  FleetTable row;        // the node's flat row, as it was judged
  learned::NodeJudgement judged;
  bool with_criteria = false;  // judged by --criteria (not by the rules alone)
  // With --criteria: what judged the node, restricted to the benchmarks it ran (the run table's
  // learned ranges, run_table.h).
  std::optional<learned::LearnedCriteria> criteria;
  std::string line;     // "OK", or "vigil: <component> <finding>" (learned/reason.h)
  bool failed = false;  // a benchmark failed or the node was found at fault: exit 1
  // With --slurm: what the run did to the node's state, or why Slurm could not be told (the
  // rest of the run stands: the document is written and the line is known).
  std::optional<cluster::NodeOutcome> slurm;
  Status slurm_status;
};

// Runs the node's suite and acts on it. Errors, before anything runs: InvalidArgument naming the
// flag for a bad option (an unknown benchmark or parameter, a GPU the node lacks, an unwritable
// --out or --textfile, a missing --scratch, a malformed criteria file); what the runner returns
// after (Cancelled when `interrupted` was set: no document is written); IoError for a document
// or a --textfile that cannot be written; the service's refusal of an upload. --textfile's file
// (textfile.h) is written last, with the run's final verdict (the service's and Slurm's included).
Result<NodeAgentResult> RunNodeAgent(const NodeAgentOptions& options, const RunEvents& events,
                                     const std::atomic<bool>& interrupted, Clock& clock);

}  // namespace vigil::agent
