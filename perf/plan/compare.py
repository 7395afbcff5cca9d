#!/usr/bin/env python3
"""Scores `vigil plan train` and `vigil plan infer` against what perf/plan/measure.py measured on
a real GPU, twice: priced with the GPU's datasheet row, and with the profile Vigil measured on the
same GPU in the same run (`--hardware`, perf/plan/on_device.sh writes both files).

    python3 perf/plan/compare.py --vigil build/dev/vigil --gpu h100 \\
        --measured plan-out/plan-measured.json --hardware plan-out/vigil-profile.json

Prints Markdown tables: per training case the measured step time, each prediction and its ratio
(predicted / measured; above 1 the model is pessimistic), and the memory; per inference case the
prefill and per-token decode times the same way. Exits 0 (the figures are reported, not judged),
2 when an input is missing or a `vigil` command fails.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


def fail(message):
    print(f"compare.py: {message}", file=sys.stderr)
    sys.exit(2)


def run_vigil(vigil, args):
    r = subprocess.run([vigil, *args, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{vigil} {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def vigil_parser(doc):
    """The command line every script that scores `vigil plan` against a GPU starts from."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--vigil", required=True, help="the vigil binary")
    parser.add_argument("--gpu", required=True, help="the datasheet row of the measured GPU")
    return parser


def model_file(folder, model):
    path = os.path.join(folder, model["name"] + ".yaml")
    with open(path, "w") as f:
        f.write("".join(f"{k}: {v}\n" for k, v in model.items()))
    return path


def ratio(predicted, measured):
    return f"{predicted / measured:.2f}"


def train_rows(vigil, folder, gpu, hardware, cases):
    print("| model | torch | micro x global | measured step (s) | datasheet (s) | ratio | "
          "measured profile (s) | ratio | peak memory measured (GiB) | predicted (GiB) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in cases:
        if "error" in c:
            print(f"| {c['model']['name']} | {'compiled' if c['compiled'] else 'eager'} | "
                  f"{c['micro_batch']} x {c['global_batch']} | {c['error']} | | | | | | |")
            continue
        args = ["plan", "train", "--model", model_file(folder, c["model"]), "--gpus", "1",
                "--gpu", gpu, "--tp", "1", "--pp", "1", "--dp", "1",
                "--micro-batch", str(c["micro_batch"]), "--global-batch", str(c["global_batch"])]
        sheet = run_vigil(vigil, args)
        measured = run_vigil(vigil, args + ["--hardware", hardware])
        step = c["step_time_s"]
        print(f"| {c['model']['name']} | {'compiled' if c['compiled'] else 'eager'} | "
              f"{c['micro_batch']} x {c['global_batch']} | {step:.3f} | "
              f"{sheet['step_time_s']:.3f} | {ratio(sheet['step_time_s'], step)} | "
              f"{measured['step_time_s']:.3f} | {ratio(measured['step_time_s'], step)} | "
              f"{c['peak_memory_gib']:.1f} | {measured['memory_gib_per_gpu']:.1f} |")


def infer_rows(vigil, folder, gpu, hardware, cases):
    print("| model | batch | prompt | output | prefill measured (ms) | datasheet | ratio | "
          "measured profile | ratio | decode measured (ms/token) | datasheet | ratio | "
          "measured profile | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c in cases:
        head = f"| {c['model']['name']} | {c['batch']} | {c['prompt']} | {c['output']} |"
        if "error" in c:
            print(f"{head} {c['error']} |" + " |" * 9)
            continue
        args = ["plan", "infer", "--model", model_file(folder, c["model"]), "--gpus", "1",
                "--gpu", gpu, "--batch", str(c["batch"]), "--prompt", str(c["prompt"]),
                "--output", str(c["output"])]
        sheet = run_vigil(vigil, args)
        measured = run_vigil(vigil, args + ["--hardware", hardware])
        cells = []
        for key, seen in (("prefill_s", c["prefill_s"]), ("decode_s_per_token", c["decode_s_per_token"])):
            cells += [f"{seen * 1e3:.2f}", f"{sheet[key] * 1e3:.2f}", ratio(sheet[key], seen),
                      f"{measured[key] * 1e3:.2f}", ratio(measured[key], seen)]
        print(f"{head} {' | '.join(cells)} |")


def main():
    parser = vigil_parser(__doc__)
    parser.add_argument("--measured", required=True, help="measure.py's JSON")
    parser.add_argument("--hardware", required=True, help="Vigil's results document of the GPU")
    args = parser.parse_args()
    try:
        with open(args.measured) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{args.measured}: {e}")
    print(f"GPU: {doc['gpu']}, PyTorch {doc['torch']}\n")
    with tempfile.TemporaryDirectory() as folder:
        train_rows(args.vigil, folder, args.gpu, args.hardware, doc["train"])
        print()
        infer_rows(args.vigil, folder, args.gpu, args.hardware, doc["infer"])


if __name__ == "__main__":
    main()
