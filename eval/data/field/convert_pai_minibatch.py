#!/usr/bin/env python3
"""Converts Alibaba PAI's per-worker mini-batch times (alibaba/clusterdata,
cluster-trace-gpu-v2020/mini-batch-time, CC BY 4.0) into Vigil's long telemetry CSV, with a labels
file per job. Standard library only.

    python3 convert_pai_minibatch.py --src /work/.mirror/alibaba+clusterdata/repo --out out/

Each source row `<idx>,worker,gpu,time,batch_time_norm` becomes one sample: timestamp
EPOCH + time (the source's `time` is seconds from the job's start), machine `pai-job<J>-w<worker>`,
metric `batch_time_norm` (the source's name: a worker's mini-batch time, normalised per job to
0-1000 by Alibaba, so proportional to step time but not in seconds), component empty.

Labels (see README.md for the authors' words and for what is left unlabelled): a worker is
labelled `straggler` over each run of at least MIN_RUN samples where the rolling median of
ROLL samples is at least FACTOR[job] times the worker's own median over the first half of the
job. The end is the time of the first sample after the run (empty when the run reaches the end).
"""

import csv
import io
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fieldsrc  # noqa: E402

SRC_DIR = "cluster-trace-gpu-v2020/mini-batch-time/data"
JOBS = (1, 2, 3, 4)
ROLL = 5
MIN_RUN = 5
# Job 2 has no label: its authors see stable variation, no straggler. Job 4 uses a higher factor:
# its workers' times fluctuate by 1.3-2.3x all along (see README), and only the level shift of
# workers 5 and 6 at about 18,700 s (3-4x) is unmistakably what the authors call stragglers.
FACTOR = {1: 1.25, 2: None, 3: 1.25, 4: 3.0}


def machine(job, worker):
    return f"pai-job{job}-w{worker}"


def read_job(src, job, commit):
    text = fieldsrc.read_source(src, f"{SRC_DIR}/job_{job}_norm.csv", commit).decode()
    series = {}
    for r in csv.DictReader(io.StringIO(text)):
        series.setdefault(int(r["worker"]), []).append(
            (int(r["time"]), float(r["batch_time_norm"])))
    for s in series.values():
        s.sort()
    return series


def straggler_runs(samples, factor):
    """(onset, end) of each run; end None when the run lasts to the last sample."""
    n = len(samples)
    base = statistics.median(v for _, v in samples[: n // 2])
    half = ROLL // 2
    flags = [statistics.median(v for _, v in samples[max(0, i - half): i + half + 1])
             >= factor * base for i in range(n)]
    runs, start = [], None
    for i, f in enumerate(flags + [False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            if i - start >= MIN_RUN:
                runs.append((samples[start][0], samples[i][0] if i < n else None))
            start = None
    return runs


def main():
    a = fieldsrc.arguments(__doc__, "alibaba/clusterdata")
    for job in JOBS:
        series = read_job(a.src, job, a.commit)
        rows = [(fieldsrc.EPOCH + t, machine(job, w), "batch_time_norm", v, "")
                for w, s in series.items() for t, v in s]
        n = fieldsrc.write_telemetry(os.path.join(a.out, f"pai_job{job}.csv"), rows)
        labels = []
        if FACTOR[job] is not None:
            for w, s in series.items():
                for onset, end in straggler_runs(s, FACTOR[job]):
                    labels.append((machine(job, w), fieldsrc.EPOCH + onset, "straggler",
                                   None if end is None else fieldsrc.EPOCH + end))
            fieldsrc.write_labels(os.path.join(a.out, f"pai_job{job}_labels.csv"), labels)
        print(f"job {job}: {len(series)} workers, {n} rows, labels: "
              + (", ".join(f"{m} {o - fieldsrc.EPOCH}-{'end' if e is None else e - fieldsrc.EPOCH}"
                           for m, o, _, e in sorted(labels)) or "none"))


if __name__ == "__main__":
    main()
