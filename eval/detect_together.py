#!/usr/bin/env python3
"""How many machines slowing at once `vigil detect` still names (docs/detect.md, "What the method
assumes"; docs/benchmarks.md, "Machines that slow down together").

Alibaba PAI's job 3 (eval/data/field) has four of ten workers 20-35% slower at once, and nothing
is named. This measures the share: per-worker step times every 10 s (each worker at its own
level, 680-780, with 3% noise; 250 samples), K of N workers slower by a factor R from the 200th
sample to the end, for several seeds; `vigil detect --signals eval/data/field/signals.yaml`
(the field data's own map: the step time is worse higher). Prints, per N, K and R, how many of
the slow workers were named, how many others were, and how many runs had a job-level alert
(`*`: machines that deviate together).

    eval/detect_together.py --vigil build/release/vigil [--machines 10 16 32] [--slow 1 2 3 4 5 8]
                            [--factor 1.25 1.5] [--seeds 5] [--json FILE]
"""
import argparse
import json
import os
import random
import subprocess
import tempfile

SIGNALS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data/field/signals.yaml")
START, INTERVAL, SAMPLES, ONSET = 1790000000, 10, 250, 200


def write_job(path, machines, slow, factor, seed):
    """Writes one job's telemetry CSV: workers w0..w{N-1}, the first `slow` of them slower from
    ONSET on."""
    rng = random.Random(seed)
    level = [rng.uniform(680, 780) for _ in range(machines)]
    with open(path, "w") as f:
        f.write("timestamp,machine,metric,value,component\n")
        for i in range(SAMPLES):
            for m in range(machines):
                v = level[m] * (1 + rng.gauss(0, 0.03))
                if m < slow and i >= ONSET:
                    v *= factor
                f.write(f"{START + INTERVAL * i + 0.01 * m:.2f},w{m},batch_time_norm,{v:.1f},\n")


def tally(alerts, slow):
    """(slow workers named, other workers named, job-level alerts) of one run's alerts."""
    named = {a["machine"] for a in alerts if a["machine"] != "*"}
    slow_named = sum(1 for m in named if int(m[1:]) < slow)
    return slow_named, len(named) - slow_named, sum(1 for a in alerts if a["machine"] == "*")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--machines", type=int, nargs="+", default=[10, 16, 32])
    ap.add_argument("--slow", type=int, nargs="+", default=[1, 2, 3, 4, 5, 8])
    ap.add_argument("--factor", type=float, nargs="+", default=[1.25, 1.5])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--json", help="write every run's tally here")
    args = ap.parse_args()
    rows = []
    print("| machines | slow | factor | slow named | others named | runs with a job alert |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="detect_together.") as work:
        path = os.path.join(work, "job.csv")
        for machines in args.machines:
            for slow in [s for s in args.slow if s < machines]:
                for factor in args.factor:
                    total = [0, 0, 0]
                    for seed in range(1, args.seeds + 1):
                        write_job(path, machines, slow, factor, seed)
                        run = subprocess.run([args.vigil, "--quiet", "detect", "--input", path,
                                              "--signals", SIGNALS, "--json"],
                                             capture_output=True, text=True)
                        if run.returncode not in (0, 1):  # 1: something was named
                            raise SystemExit(f"vigil detect exited {run.returncode}: {run.stderr}")
                        counts = tally(json.loads(run.stdout)["alerts"], slow)
                        total = [t + c for t, c in zip(total, counts)]
                        rows.append({"machines": machines, "slow": slow, "factor": factor,
                                     "seed": seed, "slow_named": counts[0],
                                     "others_named": counts[1], "job_alerts": counts[2]})
                    runs_with_job = sum(1 for r in rows[-args.seeds:] if r["job_alerts"] > 0)
                    print(f"| {machines} | {slow} | {factor} | {total[0]} of {slow * args.seeds} "
                          f"| {total[1]} | {runs_with_job} of {args.seeds} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
