#!/usr/bin/env python3
"""Converts the three sample traces of ByteDance's straggler study ("Understanding Stragglers in
Large Model Training Using What-if Analysis", OSDI '25; ByteDance-Seed/StragglerAnalysis,
Apache-2.0) into Vigil's long telemetry CSV: per worker and training step, its step time and
the time it spent computing and communicating. Standard library only.

    python3 convert_whatif_timeline.py --src /work/.mirror/ByteDance-Seed+StragglerAnalysis/repo --out out/

The input is data/timeline-<T>.json.gz (T = AR, SE, ST): the authors' Chrome-trace rendering of the
job's original trace (the trace-<T>.parquet beside it needs a Parquet reader). Each event is one
operation of one rank: pid = DP rank, tid = 5 * global rank + lane, `args.step` = training step,
ts and dur in microseconds from the trace's start. A "thread_name" metadata event names each
rank's PP and TP rank. The timeline holds TP rank 0 of every (DP, PP) worker.

Per worker (machine `<T>-dp<d>-pp<p>`) and step, at timestamp EPOCH + the end of the worker's
last operation of that step (seconds):
  training_step_seconds   last operation end - first operation start, of that worker and step
  step_compute_seconds    sum of forward-compute and backward-compute durations
  step_pp_comm_seconds    sum of the pipeline send/recv durations (the timeline keeps only the
                          transfer part of each, not the wait before it)
  step_dp_comm_seconds    sum of the data-parallel collectives (grads-reduce-scatter,
                          params-all-gather, *-grads-all-reduce, optimizer-clip-main-grad)
Only some steps of each job were sampled; in the timeline they follow each other (the gap between
two sampled steps is ~5 s whatever their step numbers), so timestamps are the timeline's own.

Labels: AR only (see README.md): worker dp0-pp0 is the artificially slowed worker, from the first
sample to the end. ST gets a labels file naming its last-stage workers with kind
`stage_imbalance` (a property of the job's partitioning, not of a machine). SE has no label.
"""

import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fieldsrc  # noqa: E402

TRACES = ("AR", "SE", "ST")
LANES = 5  # compute, pp-comm, tp-comm, dp-comm, misc: to_timeline.py's optype_types
COMPUTE = {"forward-compute", "backward-compute"}
PP_COMM = {"forward-send", "backward-send", "forward-recv", "backward-recv",
           "forward-send-backward-recv", "backward-send-forward-recv"}
DP_COMM = {"grads-reduce-scatter", "separate-grads-all-reduce",
           "grads-reduce-scatter-nonoverlapping", "params-all-gather",
           "params-all-gather-nonoverlapping", "embedding-grads-all-reduce",
           "layernorm-grads-all-reduce", "optimizer-clip-main-grad", "optimizer-inner-step"}
US = 1e6


def worker_names(trace, events):
    """Global rank -> machine name, from the thread_name metadata events."""
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["tid"] % LANES == 0:
            # "PP rank <p>, TP rank <t>, compute"
            parts = [p.split() for p in e["args"]["name"].split(",")]
            pp = int(parts[0][2])
            names[e["tid"] // LANES] = f"{trace}-dp{e['pid']}-pp{pp}"
    return names


def per_step(events, names):
    acc = {}  # (machine, step) -> [first start, last end, compute, pp, dp]
    for e in events:
        if e.get("ph") != "X":
            continue
        m = names[e["tid"] // LANES]
        a = acc.setdefault((m, e["args"]["step"]), [float("inf"), float("-inf"), 0.0, 0.0, 0.0])
        a[0] = min(a[0], e["ts"])
        a[1] = max(a[1], e["ts"] + e["dur"])
        if e["name"] in COMPUTE:
            a[2] += e["dur"]
        elif e["name"] in PP_COMM:
            a[3] += e["dur"]
        elif e["name"] in DP_COMM:
            a[4] += e["dur"]
    return acc


def convert(src, commit, trace, out):
    raw = fieldsrc.read_source(src, f"data/timeline-{trace}.json.gz", commit)
    events = json.loads(gzip.decompress(raw))
    names = worker_names(trace, events)
    steps = per_step(events, names)
    rows = []
    for (m, _step), (first, last, comp, pp, dp) in steps.items():
        t = fieldsrc.EPOCH + round(last / US, 6)
        rows += [(t, m, "training_step_seconds", round((last - first) / US, 6), ""),
                 (t, m, "step_compute_seconds", round(comp / US, 6), ""),
                 (t, m, "step_pp_comm_seconds", round(pp / US, 6), ""),
                 (t, m, "step_dp_comm_seconds", round(dp / US, 6), "")]
    n = fieldsrc.write_telemetry(os.path.join(out, f"whatif_{trace}.csv"), rows)
    machines = sorted(set(names.values()))
    labels = []
    if trace == "AR":
        labels = [(f"{trace}-dp0-pp0", fieldsrc.EPOCH, "slow_worker", None)]
    elif trace == "ST":
        last_pp = max(int(m.rsplit("pp", 1)[1]) for m in machines)
        labels = [(m, fieldsrc.EPOCH, "stage_imbalance", None)
                  for m in machines if m.endswith(f"-pp{last_pp}")]
    if labels:
        fieldsrc.write_labels(os.path.join(out, f"whatif_{trace}_labels.csv"), labels)
    print(f"{trace}: {len(machines)} workers, {len({s for _, s in steps})} steps, {n} rows, labels: "
          + (", ".join(f"{m} {k}" for m, _, k, _ in labels) or "none"))


def main():
    a = fieldsrc.arguments(__doc__, "ByteDance-Seed/StragglerAnalysis")
    for trace in TRACES:
        convert(a.src, a.commit, trace, a.out)


if __name__ == "__main__":
    main()
