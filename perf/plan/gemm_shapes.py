#!/usr/bin/env python3
"""Measures on a real GPU the BF16 matrix products that `vigil plan train` prices, at the shapes
of the published tables it is scored against, so that the step model's one GEMM function
(`GemmEfficiency` in src/vigil/plan/train.cc) can be scored shape by shape
(`eval/plan_gemm_score`, docs/benchmarks.md).

For every row of eval/data/plan/{megatron_gpt_weak_scaling,megatron_gpt_mfu_2022,megascale_175b}.csv
and for the models perf/plan/measure.py trains, the products of one transformer block as the step
model lists them (QKV projection, attention's two batched products, output projection, MLP up and
down; tokens = micro-batch x sequence, split by TP as Megatron-LM splits them) and the output
layer, each in the three passes of training: the forward (Y = X W^T), the data gradient
(dX = dY W) and the weight gradient (dW = dY^T X), with the operands laid out as Megatron-LM's
linear layers have them. Attention's products are timed as batched products (torch.bmm over
micro-batch x heads / TP), as Megatron-LM computed them before FlashAttention.

Timing: one large product (8192^3) runs for --warmup seconds first so that the clocks settle
under the power limit, as gpu-gemm does; then each shape is timed in batches of back-to-back
products of about 20 ms between two CUDA events, the median of three batches. Each batch cycles
through enough copies of the operands to exceed the L2 cache, so that a small product reads its
operands from HBM as it would in a training step. The 8192^3 product is timed again at the end:
the two bracket the run's clock state.

Writes one JSON document (--out): {"gpu", "torch", "reference_tflops": [before, after],
"shapes": [{"source", "attention", "gemm", "pass", "m", "n", "k", "batch", "seconds",
"tflops"}]}, where the product is C[m x n] = A[m x k] B[k x n], `batch` times, `seconds` is one
call's time, and `attention` is how the row's step model prices attention's two products
("unfused": as GEMMs, which these times score; "flash": as FlashAttention, which they do not).
The document is rewritten after each row, so a run stopped at a time limit keeps the rows it
finished ("after" is then missing).

    python3 perf/plan/gemm_shapes.py --out gemm-shapes.json
"""

import argparse
import csv
import json
import os
import statistics
import time

import torch

TABLES = ("megatron_gpt_weak_scaling.csv", "megatron_gpt_mfu_2022.csv", "megascale_175b.csv")
# perf/plan/measure.py's training runs: name, hidden, heads, micro-batch; vocab 50,304, sequence
# 2,048, TP 1, FlashAttention (scaled_dot_product_attention).
MEASURED = (("gpt-350m", 1024, 16, 8), ("gpt-1.3b", 2048, 16, 4), ("gpt-2.7b", 2560, 32, 2))
L2_BYTES = 60 << 20


def block_products(hidden, heads, tp, micro_batch, seq, vocab):
    """(gemm, m, n, k, batch, linear) of one block and the output layer, forward pass."""
    tokens = micro_batch * seq
    d = hidden // heads
    bh = micro_batch * heads // tp
    return [
        ("qkv", tokens, 3 * hidden // tp, hidden, 1, True),
        ("scores", seq, seq, d, bh, False),
        ("values", seq, d, seq, bh, False),
        ("proj", tokens, hidden, hidden // tp, 1, True),
        ("mlp_up", tokens, 4 * hidden // tp, hidden, 1, True),
        ("mlp_down", tokens, hidden, 4 * hidden // tp, 1, True),
        ("logits", tokens, vocab // tp, hidden, 1, True),
    ]


def rows(data_dir):
    # The weak-scaling table (2021) has no attention column: it predates FlashAttention.
    for table in TABLES:
        with open(os.path.join(data_dir, table), newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                yield (f"{table}:{line} {row['model']}", row.get("attention") or "unfused",
                       int(row["hidden"]), int(row["heads"]), int(row["tp"]),
                       int(row["micro_batch"]), int(row.get("seq_len") or 2048),
                       int(row.get("vocab") or 51200))
    for name, hidden, heads, micro in MEASURED:
        yield f"measure.py {name}", "flash", hidden, heads, 1, micro, 2048, 50304


def operands(gemm_pass, m, n, k, batch, linear):
    """Shapes of A and B, and how to multiply them, for one pass of a forward C = A B of m x n x k.

    A linear layer keeps W as [n, k]: forward X[m,k] W^T; data gradient dY[m,n] W[n,k] (m x k x n);
    weight gradient dY^T[n,m] X[m,k] (n x k x m). Attention's products are plain bmm's; their
    gradients are products of the same sizes with one operand transposed."""
    if linear:
        if gemm_pass == "fwd":
            return (m, n, k), ((m, k), (n, k)), lambda a, b: a @ b.t()
        if gemm_pass == "dgrad":
            return (m, k, n), ((m, n), (n, k)), lambda a, b: a @ b
        return (n, k, m), ((m, n), (m, k)), lambda a, b: a.t() @ b
    if gemm_pass == "fwd":
        return (m, n, k), ((batch, m, k), (batch, k, n)), torch.bmm
    if gemm_pass == "dgrad":  # dA = dC B^T: m x k x n
        return (m, k, n), ((batch, m, n), (batch, k, n)), lambda a, b: torch.bmm(a, b.transpose(1, 2))
    # dB = A^T dC: k x n x m
    return (k, n, m), ((batch, m, k), (batch, m, n)), lambda a, b: torch.bmm(a.transpose(1, 2), b)


def time_call(fn, sets, sample_s=0.02):
    """Median seconds of one call over three batches of about sample_s, cycling through sets."""
    def batch(calls):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(calls):
            a, b = sets[i % len(sets)]
            fn(a, b)
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / 1e3 / calls

    batch(2)
    one = batch(max(2, len(sets)))
    calls = max(3, min(5000, int(sample_s / max(one, 1e-7))))
    return statistics.median(batch(calls) for _ in range(3))


def settle(seconds, device):
    a = torch.rand(8192, 8192, device=device, dtype=torch.bfloat16)
    b = torch.rand(8192, 8192, device=device, dtype=torch.bfloat16)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(20):
            a @ b
        torch.cuda.synchronize()
    return 2 * 8192**3 / time_call(lambda x, y: x @ y, [(a, b)], 0.1) / 1e12


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../eval/data/plan"))
    p.add_argument("--warmup", type=float, default=2.0, help="seconds of 8192^3 products first")
    args = p.parse_args()
    device = torch.device("cuda")
    started = time.monotonic()
    before = settle(args.warmup, device)
    print(f"8192^3 bf16 after {args.warmup} s of warm-up: {before:.1f} TFLOP/s", flush=True)
    measured = {}  # (m, n, k, batch, layout) -> seconds: equal shapes are timed once
    shapes = []
    for source, attention, hidden, heads, tp, micro, seq, vocab in rows(args.data):
        for gemm, m, n, k, batch, linear in block_products(hidden, heads, tp, micro, seq, vocab):
            for gemm_pass in ("fwd", "dgrad", "wgrad"):
                (pm, pn, pk), (sa, sb), fn = operands(gemm_pass, m, n, k, batch, linear)
                key = (pm, pn, pk, batch, linear, gemm_pass)
                if key not in measured:
                    per_set = 2 * (torch.Size(sa).numel() + torch.Size(sb).numel())
                    copies = max(1, min(16, -(-3 * L2_BYTES // per_set)))
                    sets = [(torch.rand(sa, device=device, dtype=torch.bfloat16),
                             torch.rand(sb, device=device, dtype=torch.bfloat16))
                            for _ in range(copies)]
                    measured[key] = time_call(fn, sets)
                    del sets
                seconds = measured[key]
                tflops = 2 * pm * pn * pk * batch / seconds / 1e12
                shapes.append({"source": source, "attention": attention, "gemm": gemm,
                               "pass": gemm_pass, "m": pm,
                               "n": pn, "k": pk, "batch": batch, "seconds": seconds,
                               "tflops": tflops})
        write(args.out, device, [before], shapes)
        print(f"{source}: done ({time.monotonic() - started:.0f} s)", flush=True)
    torch.cuda.empty_cache()
    after = settle(0.5, device)
    print(f"8192^3 bf16 at the end: {after:.1f} TFLOP/s; {len(measured)} shapes timed", flush=True)
    write(args.out, device, [before, after], shapes)


def write(path, device, reference, shapes):
    with open(path + ".tmp", "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(device), "torch": torch.__version__,
                   "reference_tflops": reference, "shapes": shapes}, f, indent=1)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
