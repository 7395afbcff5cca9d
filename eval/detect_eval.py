#!/usr/bin/env python3
"""The detector on telemetry it was not tuned to (docs/benchmarks.md, "Detector in the field").

Runs `vigil detect` over
  - jobs written by eval/jobgen, the independent generator (written from a specification
    without the detector or Vigil's simulator in view), across cadence, scrape alignment, the
    query_range grid, job size and benign-event length, with faults and without;
  - the real per-worker step times of eval/data/field (when converted: see its README);
and prints what a user would suffer: precision, recall (hits only: an alert on the faulty machine
whose evidence is not the fault's signal is a coincidental hit, not a detection), false alerts
per machine-hour, and the median and p95 time from onset per fault kind.

  eval/detect_eval.py --vigil build/dev/vigil --jobgen build/dev/eval/jobgen [--suite quick|full]
                       [--jobs TEXT] [--field eval/data/field/out] [--json FILE] [--keep DIR]
  eval/detect_eval.py --report FILE.json [FILE.json ...]    # earlier --json runs, together
  eval/detect_eval.py --compare BEFORE.json AFTER.json      # the jobs whose alerts differ

The issue's targets hold at cadence up to 15 s; the tables end with the same figures over
those jobs only (and the false alerts on fault-free jobs among them).

A gradual straggler that never slowed its machine's compute by VISIBLE_SIZE for VISIBLE_S
seconds of training (jobgen's faults.csv gives its size and ramp; another machine's fatal fault
can stop the job first) is scored as its own kind, "straggler_gradual (never visible)", and
each summary then also gives the recall over the other faults.

One host's benign events that overlap or follow each other with no scrape interval of training
between them are one deviation; an alert on no fault, on a signal they move, while such a union
lasts longer than the signal's persistence (the issue's rule: a deviation that lasts it alerts),
is counted apart from the false alerts, as "benign union" (BENIGN_MOVES, benign_unions).

Python 3, standard library only. The detector's parameters are its defaults: nothing here tunes.
"""
import argparse
import csv
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# What counts as the fault's own signal, per label kind: the alert kind, and for divergences a
# word one of its evidence signals must contain (None: any divergence is the fault's signal).
EXPECTED = {
    "straggler": [("divergence", None)],
    "straggler_gradual": [("divergence", None)],
    "straggler_gradual (never visible)": [("divergence", None)],
    "host_slow": [("divergence", None)],
    "slow_by_placement_then_worse": [("divergence", None)],
    "hang": [("divergence", None), ("job", None)],
    "nvlink_degraded": [("divergence", "nvlink"), ("rule", "nvlink")],
    "pcie_downgrade": [("rule", "pcie_width"), ("divergence", "pcie")],
    "nic_flap": [("rule", "link_down"), ("divergence", "net_")],
    "gpu_lost": [("missing", "component"), ("rule", "xid")],
    "xid_fatal": [("rule", "xid"), ("rule", "ecc")],
    "machine_down": [("missing", "machine")],
    # Field data.
    "straggler_field": [("divergence", None)],
    "slow_worker": [("divergence", None)],
    "stage_imbalance": [("divergence", None)],
}


# The cadence up to which the targets hold.
TARGET_CADENCE_S = 15


def matches(alert, kind):
    for want_kind, word in EXPECTED.get(kind, [(alert["kind"], None)]):
        if alert["kind"] != want_kind:
            continue
        if word is None:
            return True
        if want_kind == "divergence":
            if any(word in e["signal"] for e in alert.get("evidence", [])):
                return True
        elif word in alert.get("rule", "") or word in alert.get("component", ""):
            return True
    return False


def read_labels(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [
            {"machine": r["machine"], "onset": float(r["onset"]), "kind": r["kind"],
             "end": float(r["end"]) if r.get("end") else None}
            for r in csv.DictReader(f)
        ]


# A gradual fault counts toward recall once it could be seen: its slowdown of compute reached
# VISIBLE_SIZE for VISIBLE_S seconds while the job trained (the detector's documented minimum
# effect and persistence, docs/detect.md). One that grew slower than its job lived is reported
# apart. Fixed before the rule was first scored (session 32); nothing here is tuned to it.
VISIBLE_SIZE = 0.10
VISIBLE_S = 60
GRADUAL = "straggler_gradual"
UNSEEN = GRADUAL + " (never visible)"
# Faults that stop the whole job until the watchdog kills it.
STOPS_JOB = {"gpu_lost", "xid_fatal", "machine_down", "hang"}
# jobgen's phases that end a fatal fault's hang: the watchdog's kill (and the restart after it).
HANG_ENDS = {"job_killed_by_watchdog", "job_restart_init"}


def training_gaps(job, labels):
    """The intervals in which jobgen's job did not train: every job-wide event that lasts (`*` in
    benign.csv: init, checkpoints, evaluations, data-loader stalls, collective hangs, the
    watchdog's kill and the restart; in none does an iteration run, so a straggler does not show),
    and a fatal fault's hang from its onset until the next kill (labels.csv). Until session 80
    only init, kill and restart counted (benign_unions counted every one). The first is the init."""
    gaps, ends = [], []
    with open(os.path.join(job, "benign.csv")) as f:
        for r in csv.DictReader(f):
            start, end = float(r["start"]), float(r["end"])
            if r["machine"] == "*" and end > start:
                gaps.append((start, end))
                if r["kind"] in HANG_ENDS:
                    ends.append(start)
    ends.sort()
    for l in labels:
        if l["kind"] in STOPS_JOB:
            later = [k for k in ends if k >= l["onset"]]
            gaps.append((l["onset"], later[0] if later else float("inf")))
    return gaps


def seconds_training(start, end, gaps):
    """Seconds of [start, end] outside every one of `gaps` (training_gaps; they may overlap)."""
    spans = [(start, end)]
    for a, b in gaps:
        spans = [p for lo, hi in spans for p in ((lo, min(hi, a)), (max(lo, b), hi)) if p[1] > p[0]]
    return sum(hi - lo for lo, hi in spans)


def visible_seconds(onset, size, ramp_s, end, gaps):
    """Seconds of training, before `end`, in which a fault growing linearly from 0 at `onset`
    to `size` over `ramp_s` seconds was at least VISIBLE_SIZE."""
    if size < VISIBLE_SIZE:
        return 0.0
    return seconds_training(onset + ramp_s * VISIBLE_SIZE / size, end, gaps)


def mark_unseen(job, labels, hours):
    """Renames the gradual faults of jobgen's job that never reached a visible size to UNSEEN."""
    path = os.path.join(job, "faults.csv")
    if not os.path.exists(path):
        return labels
    with open(path) as f:
        drawn = {(r["machine"], float(r["onset"])): r for r in csv.DictReader(f)}
    gaps = training_gaps(job, labels)
    end = min(a for a, b in gaps) + hours * 3600
    for l in labels:
        d = drawn.get((l["machine"], l["onset"]))
        if l["kind"] == GRADUAL and d and visible_seconds(
                l["onset"], float(d["size"]), float(d["ramp_s"]), end, gaps) < VISIBLE_S:
            l["kind"] = UNSEEN
    return labels


# One host's benign events that follow each other or overlap make one deviation, and the issue's
# own rule is that a deviation lasting the persistence time alerts: jobgen draws its events
# independently and labels their unions benign. An alert on such a union is counted apart from
# the false ones (neither true nor false, as a job alert is). Which of the detector's signals each
# of jobgen's single-machine events moves (eval/jobgen/README.md, "Single-machine benign events";
# a network burst raises the received rate, which is no deviation by itself), and how long each
# signal's deviation must last (docs/detect.md: the default signal map, `--persistence`). Fixed
# before the rule was first scored (session 67); nothing here is tuned to a seed.
BENIGN_MOVES = {
    "cron_cpu_busy": {"cpu_idle"},
    "noisy_neighbour": {"cpu_idle", "step_time"},
    "gpu_clock_dip": {"step_time", "gpu_power", "gpu_util", "tensor_active", "gr_engine_active"},
}
PERSISTENCE_S = {"cpu_idle": 120, "gpu_temp": 300, "memory_temp": 300}
DEFAULT_PERSISTENCE_S = 60


def benign_unions(job, interval):
    """{(machine, signal): [(start, end, seconds deviating), ...]} of jobgen's job: each machine's
    benign events that move the signal, joined where the job trained for less than `interval` (the
    scrape interval: no sample need have seen the machine alike its peers) between one and the
    next, with the seconds they cover while the job trained (job-wide events, `*`, cut out)."""
    stopped, events = [], {}
    with open(os.path.join(job, "benign.csv")) as f:
        for r in csv.DictReader(f):
            start, end = float(r["start"]), float(r["end"])
            if r["machine"] == "*":
                if end > start:
                    stopped.append((start, end))
                continue
            for sig in BENIGN_MOVES.get(r["kind"].split(":")[0], ()):
                events.setdefault((r["machine"], sig), []).append((start, end))
    unions = {}
    for key, spans in events.items():
        joined = []
        for start, end in sorted(spans):
            if joined and seconds_training(joined[-1][1], start, stopped) < interval:
                joined[-1][1] = max(joined[-1][1], end)
                joined[-1][2].append((start, end))
            else:
                joined.append([start, end, [(start, end)]])
        unions[key] = [(a, b, deviating_seconds(parts, stopped)) for a, b, parts in joined]
    return unions


def deviating_seconds(spans, stopped):
    """Seconds covered by `spans` (they may overlap) outside every one of `stopped`."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        lo = max(start, reach)
        if end > lo:
            total += seconds_training(lo, end, stopped)
            reach = end
    return total


def on_benign_union(alert, unions, interval):
    """Whether the alert names a machine while one of its benign unions that outlasts its
    signal's persistence deviates on an evidence signal (or at most two intervals and the
    smoothing's few seconds after it ended)."""
    for e in alert.get("evidence", []):
        sig = e["signal"]
        for start, end, seconds in unions.get((alert["machine"], sig), ()):
            if (seconds > PERSISTENCE_S.get(sig, DEFAULT_PERSISTENCE_S)
                    and start <= alert["detected"] <= end + 2 * interval + 10):
                return True
    return False


def record(alert, verdict):
    """One alert as --json keeps it: machine, kind, rule, onset, detected, and how it scored
    (hit, coincidental, false, benign_union, or job: naming no machine)."""
    return [alert["machine"], alert["kind"], alert.get("rule", ""), alert.get("onset"),
            alert["detected"], verdict]


def compare(before, after):
    """The jobs of two --json runs (the same suite and seed base) whose alerts differ, as lines:
    each alert only one run has, and how it scored. Runs written before alerts were kept
    (no alert_list) compare by their counts only."""
    def key(s):
        return s["name"], " ".join(s.get("flags", []))

    later = {key(s): s for s in after}
    lines = []
    for s in before:
        t = later.pop(key(s), None)
        if t is None:
            lines.append(f"{s['name']} {' '.join(s.get('flags', []))}: only in the first run")
            continue
        if "alert_list" in s and "alert_list" in t:
            a = {tuple(x) for x in s["alert_list"]}
            b = {tuple(x) for x in t["alert_list"]}
            diff = [f"  - {x}" for x in sorted(a - b)] + [f"  + {x}" for x in sorted(b - a)]
        else:
            fields = ("alerts", "job_alerts", "false", "hits", "coincidental")
            diff = [f"  {f}: {s[f]} -> {t[f]}" for f in fields if s[f] != t[f]]
        if diff:
            lines.append(f"{s['name']} {' '.join(s.get('flags', []))}:")
            lines += diff
    lines += [f"{t['name']} {' '.join(t.get('flags', []))}: only in the second run"
              for t in later.values()]
    return lines


def score(alerts, labels, machines, hours, gaps=(), unions=None, interval=0):
    """Vigil's rule for a true alert (docs/detect.md, "Scoring"), plus hits and coincidences.
    Each hit's latency from onset, and beside it the same less the seconds in `gaps` (the job
    did not train: training_gaps), which no detector can see a divergence in. An alert on no
    fault that names a machine during one of its `unions` of benign events that outlasts the
    persistence (benign_unions, on_benign_union) is counted apart, as a job alert is."""
    job = [a for a in alerts if a["machine"] == "*"]
    alerts = [a for a in alerts if a["machine"] != "*"]
    out = {"alerts": len(alerts), "job_alerts": len(job), "benign_unions": 0, "true": 0,
           "false": 0, "coincidental": 0, "faults": len(labels), "hits": 0,
           "machine_hours": machines * hours, "by_kind": {}, "false_rules": {},
           "missed": [], "alert_list": [record(a, "job") for a in job]}
    first_hit = {}
    for a in alerts:
        live = [l for l in labels if l["machine"] == a["machine"] and l["onset"] <= a["detected"] + 1
                and (l["end"] is None or l["end"] > a["detected"])]
        if not live and on_benign_union(a, unions or {}, interval):
            out["alerts"] -= 1
            out["benign_unions"] += 1
            out["alert_list"].append(record(a, "benign_union"))
            continue
        if not live:
            out["false"] += 1
            why = a["kind"] + "/" + a.get("rule", "")
            out["false_rules"][why] = out["false_rules"].get(why, 0) + 1
            out["alert_list"].append(record(a, "false"))
            continue
        out["true"] += 1
        hit = [l for l in live if matches(a, l["kind"])]
        out["alert_list"].append(record(a, "hit" if hit else "coincidental"))
        if not hit:
            out["coincidental"] += 1
        for l in hit:
            key = (l["machine"], l["onset"])
            if key not in first_hit:
                first_hit[key] = a["detected"] - l["onset"]
    for l in labels:
        k = out["by_kind"].setdefault(l["kind"], {"faults": 0, "hits": 0, "latencies": [],
                                                  "training": []})
        k["faults"] += 1
        lat = first_hit.get((l["machine"], l["onset"]))
        if lat is not None:
            k["hits"] += 1
            k["latencies"].append(lat)
            k["training"].append(seconds_training(l["onset"], l["onset"] + lat, gaps))
            out["hits"] += 1
        else:
            out["missed"].append([l["machine"], l["onset"], l["kind"]])
    return out


def add(total, s):
    for key in ("alerts", "job_alerts", "benign_unions", "true", "false", "coincidental",
                "faults", "hits", "machine_hours"):
        total[key] = total.get(key, 0) + s.get(key, 0)
    for kind, k in s.get("by_kind", {}).items():
        t = total.setdefault("by_kind", {}).setdefault(kind, {"faults": 0, "hits": 0,
                                                              "latencies": [], "training": []})
        t["faults"] += k["faults"]
        t["hits"] += k["hits"]
        t["latencies"] += k["latencies"]
        t["training"] += training_latencies(k)
    for why, n in s.get("false_rules", {}).items():
        total.setdefault("false_rules", {})[why] = total.get("false_rules", {}).get(why, 0) + n


def detect(vigil, telemetry, extra=()):
    t0 = time.time()
    p = subprocess.run([vigil, "--quiet", "detect", "--input", telemetry, "--json", *extra],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"vigil detect {telemetry}: exit {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout), time.time() - t0


def summary_line(name, s):
    precision = s["true"] / s["alerts"] if s["alerts"] else 1.0
    hit_precision = (s["true"] - s["coincidental"]) / s["alerts"] if s["alerts"] else 1.0
    recall = s["hits"] / s["faults"] if s["faults"] else 1.0
    f1 = 2 * hit_precision * recall / (hit_precision + recall) if hit_precision + recall else 0
    per_mh = s["false"] / s["machine_hours"] if s["machine_hours"] else 0
    unions = f", +{s['benign_unions']} benign union" if s.get("benign_unions") else ""
    line = (f"{name:<44} alerts {s['alerts']:>4} (+{s['job_alerts']} job{unions})  "
            f"false {s['false']:>3} "
            f"({per_mh:.4f}/machine-h)  coincidental {s['coincidental']:>2}  "
            f"precision {precision:.3f}  recall {recall:.3f} ({s['hits']}/{s['faults']})  "
            f"F1 {f1:.3f}")
    unseen = s.get("by_kind", {}).get(UNSEEN)
    if unseen:
        faults, hits = s["faults"] - unseen["faults"], s["hits"] - unseen["hits"]
        line += (f"\n{'':<44} recall over faults that reached a visible size "
                 f"{hits / faults if faults else 1.0:.3f} ({hits}/{faults}); never visible "
                 f"{unseen['faults']}, {unseen['hits']} of them found")
    return line


# The divergence faults that begin at full size, whose median from onset the target
# bounds; a gradual straggler grows from nothing over its ramp and is listed apart.
DIVERGENCE_KINDS = ("straggler", "host_slow", "slow_by_placement_then_worse")


def training_latencies(k):
    """A kind's latencies less the time the job did not train; runs scored before session 51
    have none, and their latencies stand in."""
    return k.get("training", k["latencies"])


def kind_line(name, hits, faults, latencies, training):
    def median_p95(values):
        v = sorted(values)
        if not v:
            return "    -", "    -"
        return f"{statistics.median(v):>5.0f}", f"{v[min(len(v) - 1, int(0.95 * len(v)))]:>5.0f}"
    med, p95 = median_p95(latencies)
    t_med, t_p95 = median_p95(training)
    return (f"    {name:<30} {hits:>3}/{faults:<3} median {med} s  p95 {p95} s  "
            f"(in training: {t_med} s, {t_p95} s)")


def kind_table(s):
    """Per fault kind: hits, and the median and p95 from onset; beside them the same less the
    time the job did not train (training_latencies)."""
    by_kind = s.get("by_kind", {})
    lines = [kind_line(kind, k["hits"], k["faults"], k["latencies"], training_latencies(k))
             for kind, k in sorted(by_kind.items())]
    divergence = [by_kind[k] for k in DIVERGENCE_KINDS if k in by_kind]
    if divergence:
        lines.append(kind_line("divergence faults together", sum(k["hits"] for k in divergence),
                               sum(k["faults"] for k in divergence),
                               [x for k in divergence for x in k["latencies"]],
                               [x for k in divergence for x in training_latencies(k)]))
    return "\n".join(lines)


def suite(kind, seed_base):
    """(name, jobgen flags, hours) of every job. Faulty jobs carry several faults on distinct
    machines; fault-free ones none."""
    quick = kind == "quick"
    jobs = []
    seeds = [seed_base + i for i in ([1, 2] if quick else [1, 2, 3, 4])]
    # The full suite adds the sweep's 10 s and the coarsest cadence part 1 names (60 s, watched
    # longer: its faults need minutes of samples).
    cadences = [(1, 16, 30), (5, 32, 45), (15, 64, 60), (30, 64, 60)]
    if not quick:
        cadences[2:2] = [(10, 64, 60)]
        cadences.append((60, 64, 90))
    for interval, machines, minutes in cadences:
        for seed in seeds:
            for aligned in ([False] if quick else [False, True]):
                flags = ["--machines", str(machines), "--duration", f"{minutes}m", "--interval",
                         str(interval), "--seed", str(seed), "--faults", "4"]
                if aligned:
                    flags.append("--aligned")
                jobs.append((f"faults i={interval}s {'aligned' if aligned else 'staggered'}",
                             flags, minutes / 60))
    for seed in seeds:
        jobs.append(("faults i=15s grid 1s (query_range)",
                     ["--machines", "32", "--duration", "45m", "--interval", "15", "--grid", "1",
                      "--seed", str(seed), "--faults", "4"], 0.75))
        jobs.append(("faults pipeline 4 stages",
                     ["--machines", "32", "--duration", "60m", "--interval", "5", "--stages", "4",
                      "--seed", str(seed), "--faults", "4"], 1.0))
        if not quick:
            # Exporters on cadences of their own, and the step time as one row per iteration.
            jobs.append(("faults dcgm 10s node 15s",
                         ["--machines", "32", "--duration", "45m", "--interval", "15",
                          "--dcgm-interval", "10", "--seed", str(seed), "--faults", "4"], 0.75))
            jobs.append(("faults i=15s step time per iteration",
                         ["--machines", "32", "--duration", "45m", "--interval", "15",
                          "--step-export", "event", "--seed", str(seed), "--faults", "4"], 0.75))
    for size in ([8, 128] if quick else [8, 32, 128, 256, 1024]):
        for seed in seeds[:1]:
            jobs.append((f"fault-free {size} machines i=15s",
                         ["--machines", str(size), "--duration", "60m", "--interval", "15",
                          "--seed", str(100 + seed), "--faults", "0"], 1.0))
    for benign in ([60] if quick else [10, 30, 60]):
        jobs.append((f"fault-free 32 machines i=5s benign 1-{benign}s x4",
                     ["--machines", "32", "--duration", "60m", "--interval", "5",
                      "--seed", str(200 + seed_base),
                      "--faults", "0", "--benign-max", str(benign), "--benign-rate", "8"], 1.0))
    return jobs


def report(runs):
    """Prints every group of generated jobs, their total, the targets' scope, and the field runs."""
    groups, field = {}, []
    for s in runs:
        if s["name"].startswith("field "):
            field.append(s)
        else:
            add(groups.setdefault(s["name"], {}), s)
    print()
    total = {}
    for name, s in groups.items():
        print(summary_line(name, s))
        add(total, s)
    if total:  # none where --jobs matched no generated job (the field runs only)
        print(summary_line("all generated jobs", total))
        print(kind_table(total))
    # The targets hold "at cadence up to 15 s": the same figures over those jobs only,
    # and the fault-free jobs' false alerts apart (the target there is none).
    scoped, fault_free, fault_free_unions = {}, 0, 0
    for s in runs:
        flags = s.get("flags")
        if flags and float(flags[flags.index("--interval") + 1]) <= TARGET_CADENCE_S:
            add(scoped, s)
            if "fault-free" in s["name"]:
                fault_free += s["false"]
                fault_free_unions += s.get("benign_unions", 0)
    if scoped:
        print()
        print(summary_line(f"cadence up to {TARGET_CADENCE_S:.0f} s (the targets' scope)", scoped))
        print(f"    false alerts on fault-free jobs: {fault_free} (and {fault_free_unions} on one "
              "host's benign events that together outlast the persistence)")
        print(kind_table(scoped))
    if field:
        print()
        for s in field:
            print(summary_line(s["name"], s))
            print(kind_table(s))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vigil")
    ap.add_argument("--jobgen")
    ap.add_argument("--suite", choices=["quick", "full"], default="quick")
    ap.add_argument("--seed-base", type=int, default=1000,
                    help="added to every job's seed: seeds under 1000 were looked at while the "
                         "detector was developed; the figures in docs/benchmarks.md use 1000")
    ap.add_argument("--field", default=os.path.join(os.path.dirname(__file__), "data/field/out"))
    ap.add_argument("--jobs", metavar="TEXT",
                    help="run only the generated jobs whose name contains TEXT (\"fault-free\")")
    ap.add_argument("--json", help="write every run's score here")
    ap.add_argument("--keep", help="keep the generated jobs in this folder")
    ap.add_argument("--report", nargs="+", metavar="JSON",
                    help="print the tables of earlier --json runs, together, and run nothing")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                    help="print the jobs whose alerts differ between two --json runs of the same "
                         "suite and seed base, and run nothing")
    args = ap.parse_args()
    if args.compare:
        runs = []
        for path in args.compare:
            with open(path) as f:
                runs.append(json.load(f))
        lines = compare(*runs)
        print("\n".join(lines) if lines else "every job's alerts are the same")
        return
    if args.report:
        runs = []
        for path in args.report:
            with open(path) as f:
                runs += json.load(f)
        report(runs)
        return
    if not args.vigil or not args.jobgen:
        ap.error("--vigil and --jobgen are needed to run (or --report to print earlier runs)")
    work = args.keep or tempfile.mkdtemp(prefix="detect_eval.")
    os.makedirs(work, exist_ok=True)
    runs = []
    try:
        for i, (name, flags, hours) in enumerate(suite(args.suite, args.seed_base)):
            if args.jobs and args.jobs not in name:
                continue
            out = os.path.join(work, f"job{i}")
            subprocess.run([args.jobgen, *flags, "--out", out], check=True, capture_output=True)
            machines = int(flags[flags.index("--machines") + 1])
            result, took = detect(args.vigil, os.path.join(out, "telemetry.csv"))
            labels = mark_unseen(out, read_labels(os.path.join(out, "labels.csv")), hours)
            interval = float(flags[flags.index("--interval") + 1])
            s = score(result["alerts"], labels, machines, hours, training_gaps(out, labels),
                      benign_unions(out, interval), interval)
            s["name"], s["flags"], s["seconds"], s["samples"] = name, flags, took, result["samples"]
            runs.append(s)
            print(f"[{i + 1}] {name} {' '.join(flags)}: {s['alerts']} alerts, {s['false']} false, "
                  f"{s['hits']}/{s['faults']} hits ({took:.1f} s)", flush=True)
            if not args.keep:
                shutil.rmtree(out)
        if os.path.isdir(args.field):
            signals = os.path.join(os.path.dirname(__file__), "data/field/signals.yaml")
            for f in sorted(os.listdir(args.field)):
                if not f.endswith(".csv") or f.endswith("_labels.csv"):
                    continue
                path = os.path.join(args.field, f)
                labels = read_labels(path[:-4] + "_labels.csv")
                result, took = detect(args.vigil, path, ["--signals", signals])
                span = [float("inf"), 0]
                machines = set()
                with open(path) as fh:
                    for r in csv.DictReader(fh):
                        t = float(r["timestamp"])
                        span = [min(span[0], t), max(span[1], t)]
                        machines.add(r["machine"])
                s = score(result["alerts"], labels, len(machines), (span[1] - span[0]) / 3600)
                s["name"], s["seconds"] = f"field {f}", took
                runs.append(s)
                print(f"field {f}: alerts {[(a['machine'], a['kind'], a['detected'] - span[0]) for a in result['alerts']]}",
                      flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    report(runs)


if __name__ == "__main__":
    # A kill (SIGTERM) unwinds like an error, so that the temporary directory of jobs or fleets,
    # gigabytes, is removed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
