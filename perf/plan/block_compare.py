#!/usr/bin/env python3
"""Sets one transformer block as perf/plan/block_costs.py timed it on a GPU beside what
`vigil plan train` prices for the same block on that GPU's datasheet row (docs/benchmarks.md,
"Plan: what a block costs besides its products").

    python3 perf/plan/block_compare.py --vigil build/dev/vigil --gpu h200 \\
        --costs eval/data/plan/block_costs_h200.json

Each row's block is priced as a one-block model (vocabulary 1,024, so that the output layer's
product is negligible) at the row's TP, micro-batch, recomputation, attention and sequence
parallelism, on one pipeline stage without data parallelism; `compute_split_s` of
`plan train --json` gives its products and its memory-bound kernels. The measured side splits the
kernels the profiler saw into products (cuBLAS's and CUTLASS's), FlashAttention's and the rest,
and the idle time between kernels (the events' time less the kernels').

The second table is what the step model takes from this measurement: the softmax and dropout over
attention's scores, timed alone at each row's shapes, as a fraction of the device copy's
bandwidth measured in the same run. The fused kernels Megatron-LM ran (scale, mask and softmax in
one) move 9 bytes a score in a forward (softmax reads 2 and writes 2; dropout writes 2 and a 1-byte
mask) and 11 in the backward (dropout's 5, softmax's 6); with recomputation the forward runs
twice: 29 bytes. The mask's own kernel is left out (Megatron-LM fused it).

Exits 0 (the figures are reported, not judged), 2 when an input is missing or malformed or a
`vigil` command fails.
"""

import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import fail, model_file, run_vigil, vigil_parser  # noqa: E402

PRODUCTS = ("gemm", "nvjet", "cutlass", "xmma", "ampere_", "sm90_", "sm80_")
FLASH = ("flash", "fmha")
SCORE_KERNELS = {  # the fused kernels' bytes per score: (forward, backward)
    "softmax_fwd": (4, 0), "dropout_scores_fwd": (5, 0),
    "dropout_scores_bwd": (0, 5), "softmax_bwd": (0, 6),
}


def kernel_split(kernels):
    """Seconds of (products, FlashAttention, everything else) among the profiled kernels."""
    split = [0.0, 0.0, 0.0]
    for k in kernels:
        name = k["name"].lower()
        i = 1 if any(f in name for f in FLASH) else 0 if any(p in name for p in PRODUCTS) else 2
        split[i] += k["seconds"]
    return split


def block_prediction(vigil, folder, gpu, row):
    model = {"name": "block", "layers": 1, "hidden": row["hidden"], "heads": row["heads"],
             "kv_heads": row["heads"], "ffn_hidden": 4 * row["hidden"], "vocab": 1024,
             "seq_len": row["seq"]}
    b = str(row["micro_batch"])
    args = ["plan", "train", "--model", model_file(folder, model), "--gpu", gpu,
            "--gpus", str(row["tp"]), "--tp", str(row["tp"]), "--pp", "1", "--dp", "1",
            "--micro-batch", b, "--global-batch", b, "--recompute", row["recompute"],
            "--attention", row["attention"]]
    if not row["sequence_parallel"]:
        args.append("--no-sequence-parallel")
    split = run_vigil(vigil, args)["compute_split_s"]
    return split["gemm"], split["memory_bound"]


def score_kernels_of_copy(row, copy_gbps):
    """The fused score kernels' bandwidth over the copy's, recomputation as the row's; None for a
    row whose attention never wrote its scores (FlashAttention)."""
    timed = {e["name"]: e for e in row["elementwise"]}
    if not all(name in timed for name in SCORE_KERNELS):
        return None
    forwards = 1 if row["recompute"] == "none" else 2
    nbytes = seconds = 0.0
    for name, (fwd, bwd) in SCORE_KERNELS.items():
        e = timed[name]
        times = forwards if fwd else 1
        nbytes += times * (fwd + bwd) * e["elements"]
        seconds += times * e["seconds"]
    return nbytes / seconds / 1e9 / copy_gbps


def main():
    parser = vigil_parser(__doc__)
    parser.add_argument("--costs", required=True, help="block_costs.py's JSON")
    args = parser.parse_args()
    try:
        with open(args.costs) as f:
            doc = json.load(f)
        rows, copy_gbps = doc["rows"], statistics.mean(doc["copy_gbps"])
    except (OSError, ValueError, KeyError, TypeError, statistics.StatisticsError) as e:
        fail(f"{args.costs}: {type(e).__name__}: {e}")
    print(f"GPU: {doc.get('gpu')}, PyTorch {doc.get('torch')}; 8192^3 BF16 "
          f"{' / '.join(f'{x:.0f}' for x in doc.get('reference_tflops', []))} TFLOP/s, "
          f"copy {copy_gbps:.0f} GB/s\n")
    print("| row | TP | micro-batch | recompute | attention | SP | measured (ms) | products | "
          "FlashAttention | other kernels | idle | predicted products | predicted memory-bound | "
          "predicted / measured | products, predicted / measured |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    efficiencies = []
    with tempfile.TemporaryDirectory() as folder:
        for row in rows:
            try:
                measured = row["forward_s"] + row["backward_s"]
                products, flash, other = kernel_split(row["kernels"])
                gemm, memory = block_prediction(args.vigil, folder, args.gpu, row)
                eff = score_kernels_of_copy(row, copy_gbps)
            except (KeyError, TypeError, ValueError) as e:
                fail(f"{args.costs}: row {row.get('source') if isinstance(row, dict) else row}: "
                     f"{type(e).__name__}: {e}")
            if eff is not None:
                efficiencies.append((row["source"], eff))
            ms = [x * 1e3 for x in (measured, products, flash, other,
                                    max(0.0, measured - products - flash - other), gemm, memory)]
            print(f"| {row['source']} | {row['tp']} | {row['micro_batch']} | {row['recompute']} | "
                  f"{row['attention']} | {'on' if row['sequence_parallel'] else 'off'} | "
                  + " | ".join(f"{x:.2f}" for x in ms)
                  + f" | {(gemm + memory) / measured:.2f} | {gemm / (products + flash):.2f} |")
    if efficiencies:
        print("\n| row | score kernels' bandwidth / copy's |\n|---|---|")
        for source, eff in efficiencies:
            print(f"| {source} | {eff:.3f} |")
        values = [e for _, e in efficiencies]
        print(f"\nmedian {statistics.median(values):.3f}, range {min(values):.3f}-{max(values):.3f} "
              f"over {len(values)} rows")


if __name__ == "__main__":
    main()
