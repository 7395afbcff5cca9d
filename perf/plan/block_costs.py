#!/usr/bin/env python3
"""Times on a real GPU one transformer block of every scored table's rows, as that table's code ran
it on one tensor-parallel rank, and the costs around it that `vigil plan train` prices apart from
its matrix products: the memory-bound kernels, the gaps between kernels, the gradients'
accumulation and the optimizer. perf/plan/gemm_shapes.py scored the products alone (session 37);
this asks what the rest of a block costs (docs/benchmarks.md, "Plan: what a block costs besides
its products").

For every row of eval/data/plan/{megatron_gpt_weak_scaling,megatron_gpt_mfu_2022,megascale_175b}.csv
(the 2021 weak-scaling table has no layout columns: full recomputation, attention unfused, no
sequence parallelism, as its authors' script ran it):

- block: one pre-LayerNorm GPT block in BF16 at one TP rank's shapes (QKV and the MLP's up
  projection split by columns, the output projection and the MLP's down projection by rows; heads
  / TP heads), attention unfused as Megatron-LM computed it before FlashAttention (baddbmm of the
  scores, causal mask, softmax, dropout 0.1, bmm with V) or through scaled_dot_product_attention
  (flash), hidden dropout 0.1, eager PyTorch kernels. Recomputation as the row's: full (forward
  without autograd, then forward again and backward), selective (attention's core checkpointed,
  unfused rows only) or none. Under sequence parallelism the norms, dropouts and residuals work on
  1/TP of the sequence; the all-gather and reduce-scatter are stand-ins that move no bytes (the
  communication is priced apart). No communication is timed. The parameters' gradients
  accumulate, as from a second micro-batch on. Timed with CUDA events: forward and backward
  separately, the median of --iterations after two warm-ups; then one iteration under
  torch.profiler, whose kernels are summed by name (`kernels`: name, calls, seconds), so that the
  matrix products, the memory-bound kernels and the idle time between kernels can be told apart.
- elementwise: the memory-bound kernels of that block in isolation at its shapes (LayerNorm,
  GeLU, dropout and the residual add on the hidden states; the mask, softmax and dropout on the
  scores of unfused rows), forward and backward, each with the bytes it must move (each input read
  once, each output written once): their bandwidth against the copy's measured here.

Also, once: the 8192^3 BF16 product's rate and a 1 GiB device copy's bandwidth (read + written) at
the start and at the end, and the optimizer's kernels over 0.5 billion FP32 parameters (fused
AdamW, the gradient norm and clipping, the BF16 copy of the weights, the BF16 gradients into FP32).

Writes one JSON document (--out), rewritten after each row, so a run stopped at a time limit keeps
what finished.

    python3 perf/plan/block_costs.py --out block-costs.json
"""

import argparse
import csv
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "gpu")]
from gemm_shapes import TABLES, settle, time_call  # noqa: E402
from measure import write  # noqa: E402
from reference import copy_gbps  # noqa: E402

DROPOUT = 0.1
COPY_BYTES = 1 << 30
COPY_REPS = 20  # of perf/gpu/reference.py's device copy, read + written


def table_rows(data_dir):
    for table in TABLES:
        with open(os.path.join(data_dir, table), newline="") as f:
            for line, row in enumerate(csv.DictReader(f), start=2):
                yield {
                    "source": f"{table}:{line} {row['model']}",
                    "hidden": int(row["hidden"]),
                    "heads": int(row["heads"]),
                    "tp": int(row["tp"]),
                    "micro_batch": int(row["micro_batch"]),
                    "seq": int(row.get("seq_len") or 2048),
                    "recompute": row.get("recompute") or "full",
                    "attention": row.get("attention") or "unfused",
                    "sequence_parallel": (row.get("sequence_parallel") or "0") == "1",
                }


class Gather(torch.autograd.Function):
    """Sequence parallelism's all-gather without its communication: a buffer of the whole
    sequence (NCCL's to fill); the backward hands back the rank's share (the reduce-scatter's)."""

    @staticmethod
    def forward(ctx, x, tp):
        ctx.tp = tp
        return x.new_empty((x.shape[0] * tp,) + tuple(x.shape[1:]))

    @staticmethod
    def backward(ctx, grad):
        return grad.narrow(0, 0, grad.shape[0] // ctx.tp), None


class Scatter(torch.autograd.Function):
    """The reduce-scatter after a row-parallel product, likewise: the rank's share of the sequence."""

    @staticmethod
    def forward(ctx, x, tp):
        ctx.tp = tp
        return x.narrow(0, 0, x.shape[0] // tp)

    @staticmethod
    def backward(ctx, grad):
        return grad.new_empty((grad.shape[0] * ctx.tp,) + tuple(grad.shape[1:])), None


class Block:
    def __init__(self, row, device):
        h, t = row["hidden"], row["tp"]
        self.row = row
        self.h, self.tp, self.np = h, t, row["heads"] // t
        self.d = h // row["heads"]
        self.sp = row["sequence_parallel"] and t > 1

        def param(*shape, scale=0.02):
            return (torch.randn(*shape, device=device, dtype=torch.bfloat16) * scale).requires_grad_()

        self.params = {
            "ln1_w": param(h, scale=1.0), "ln1_b": param(h),
            "w_qkv": param(3 * h // t, h), "b_qkv": param(3 * h // t),
            "w_proj": param(h, h // t), "b_proj": param(h),
            "ln2_w": param(h, scale=1.0), "ln2_b": param(h),
            "w_up": param(4 * h // t, h), "b_up": param(4 * h // t),
            "w_down": param(h, 4 * h // t), "b_down": param(h),
        }
        s = row["seq"]
        self.mask = torch.ones(s, s, device=device, dtype=torch.bool).triu_(1)

    def core(self, qkv):
        """Attention's core, [s, b, 3h/t] -> [s, b, h/t]."""
        s, b = qkv.shape[0], qkv.shape[1]
        q, k, v = qkv.view(s, b * self.np, 3 * self.d).split(self.d, dim=-1)
        if self.row["attention"] == "flash":
            q, k, v = (x.view(s, b, self.np, self.d).permute(1, 2, 0, 3) for x in (q, k, v))
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return out.permute(2, 0, 1, 3).reshape(s, b, self.np * self.d)
        scores = torch.baddbmm(torch.empty(b * self.np, s, s, device=qkv.device, dtype=qkv.dtype),
                               q.transpose(0, 1), k.transpose(0, 1).transpose(1, 2),
                               beta=0.0, alpha=self.d**-0.5)
        probs = F.dropout(torch.softmax(scores.masked_fill(self.mask, -10000.0), dim=-1), DROPOUT)
        out = torch.bmm(probs, v.transpose(0, 1))  # [b np, s, d]
        return out.transpose(0, 1).reshape(s, b, self.np * self.d)

    def forward(self, x):
        p = self.params
        y = F.layer_norm(x, (self.h,), p["ln1_w"], p["ln1_b"])
        if self.sp:
            y = Gather.apply(y, self.tp)
        qkv = F.linear(y, p["w_qkv"], p["b_qkv"])
        if self.row["recompute"] == "selective" and self.row["attention"] == "unfused":
            ctx = checkpoint(self.core, qkv, use_reentrant=False)
        else:
            ctx = self.core(qkv)
        y = F.linear(ctx, p["w_proj"])
        if self.sp:
            y = Scatter.apply(y, self.tp)
        x = x + F.dropout(y + p["b_proj"], DROPOUT)
        y = F.layer_norm(x, (self.h,), p["ln2_w"], p["ln2_b"])
        if self.sp:
            y = Gather.apply(y, self.tp)
        y = F.linear(F.gelu(F.linear(y, p["w_up"], p["b_up"])), p["w_down"])
        if self.sp:
            y = Scatter.apply(y, self.tp)
        return x + F.dropout(y + p["b_down"], DROPOUT)

    def input(self, device):
        s = self.row["seq"] // (self.tp if self.sp else 1)
        return torch.randn(s, self.row["micro_batch"], self.h, device=device, dtype=torch.bfloat16)

    def passes(self, x, grad):
        """(forward, backward) closures of one micro-batch; the backward recomputes as the row does."""
        full = self.row["recompute"] == "full"
        state = {}

        def forward():
            if full:
                with torch.no_grad():
                    self.forward(x)
            else:
                state["y"] = self.forward(x.requires_grad_())

        def backward():
            if full:
                state["y"] = self.forward(x.detach().requires_grad_())
            state.pop("y").backward(grad)

        return forward, backward


def events_median(fns, iterations):
    """Median seconds of each of fns (run in order, each iteration) over iterations."""
    times = [[] for _ in fns]
    for _ in range(iterations):
        for i, fn in enumerate(fns):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times[i].append(start.elapsed_time(stop) / 1e3)
    return [statistics.median(t) for t in times]


def profile_kernels(fns):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for fn in fns:
            fn()
        torch.cuda.synchronize()
    kernels = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        calls, seconds = kernels.get(e.name, (0, 0.0))
        kernels[e.name] = (calls + 1, seconds + e.time_range.elapsed_us() / 1e6)
    return [{"name": n[:160], "calls": c, "seconds": s}
            for n, (c, s) in sorted(kernels.items(), key=lambda kv: -kv[1][1])]


def elementwise(block, device):
    """The block's memory-bound kernels alone: (name, elements, bytes, seconds)."""
    row, h, t = block.row, block.h, block.tp
    s, b = row["seq"], row["micro_batch"]
    s_local = s // (t if block.sp else 1)
    hidden = torch.randn(s_local, b, h, device=device, dtype=torch.bfloat16)
    other = torch.randn_like(hidden)
    w, bias = torch.ones(h, device=device, dtype=torch.bfloat16), torch.zeros(h, device=device, dtype=torch.bfloat16)
    up = torch.randn(s, b, 4 * h // t, device=device, dtype=torch.bfloat16)
    up_grad = torch.randn_like(up)
    n, m = hidden.numel(), up.numel()
    ln_out, mean, rstd = torch.ops.aten.native_layer_norm(hidden, [h], w, bias, 1e-5)
    drop_out, drop_mask = torch.ops.aten.native_dropout(hidden, DROPOUT, True)
    ops = [
        ("layernorm_fwd", n, 4 * n, lambda: torch.ops.aten.native_layer_norm(hidden, [h], w, bias, 1e-5)),
        ("layernorm_bwd", n, 6 * n, lambda: torch.ops.aten.native_layer_norm_backward(
            other, hidden, [h], mean, rstd, w, bias, [True, True, True])),
        ("gelu_fwd", m, 4 * m, lambda: F.gelu(up)),
        ("gelu_bwd", m, 6 * m, lambda: torch.ops.aten.gelu_backward(up_grad, up)),
        ("dropout_fwd", n, 5 * n, lambda: torch.ops.aten.native_dropout(hidden, DROPOUT, True)),
        ("dropout_bwd", n, 5 * n, lambda: torch.ops.aten.native_dropout_backward(other, drop_mask, 1 / 0.9)),
        ("add", n, 6 * n, lambda: hidden + other),
    ]
    del ln_out, drop_out
    if row["attention"] == "unfused":
        scores = torch.randn(b * block.np, s, s, device=device, dtype=torch.bfloat16)
        probs = torch.softmax(scores, dim=-1)
        sm = scores.numel()
        _, score_mask = torch.ops.aten.native_dropout(probs, DROPOUT, True)
        ops += [
            ("mask_scores", sm, 4 * sm, lambda: scores.masked_fill(block.mask, -10000.0)),
            ("softmax_fwd", sm, 4 * sm, lambda: torch.softmax(scores, dim=-1)),
            ("softmax_bwd", sm, 6 * sm, lambda: torch.ops.aten._softmax_backward_data(
                scores, probs, -1, torch.bfloat16)),
            ("dropout_scores_fwd", sm, 5 * sm, lambda: torch.ops.aten.native_dropout(probs, DROPOUT, True)),
            ("dropout_scores_bwd", sm, 5 * sm, lambda: torch.ops.aten.native_dropout_backward(
                scores, score_mask, 1 / 0.9)),
        ]
    out = []
    for name, elements, nbytes, fn in ops:
        seconds = time_call(lambda a, b: fn(), [(None, None)], 0.01)
        out.append({"name": name, "elements": elements, "bytes": nbytes, "seconds": seconds,
                    "gbps": nbytes / seconds / 1e9})
    return out


def optimizer_costs(device, parameters=500_000_000, tensors=50):
    """Seconds per billion parameters of the optimizer's kernels over FP32 master weights."""
    size = parameters // tensors
    master = [torch.randn(size, device=device).requires_grad_() for _ in range(tensors)]
    for p in master:
        p.grad = torch.randn_like(p) * 1e-3
    model = [torch.empty(size, device=device, dtype=torch.bfloat16) for _ in range(tensors)]
    grads16 = [torch.randn(size, device=device, dtype=torch.bfloat16) for _ in range(tensors)]
    adam = torch.optim.AdamW(master, lr=1e-4, fused=True)
    grads32 = [p.grad for p in master]
    ops = {
        "adamw_fused": adam.step,
        "grad_norm_and_clip": lambda: torch.nn.utils.clip_grad_norm_(master, 1.0, foreach=True),
        "master_to_bf16": lambda: torch._foreach_copy_(model, [p.detach() for p in master]),
        "bf16_grads_to_fp32": lambda: torch._foreach_copy_(grads32, grads16),
    }
    result = {}
    for name, fn in ops.items():
        fn()
        seconds = events_median([fn], 5)[0]
        result[name] = seconds * 1e9 / parameters
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../eval/data/plan"))
    p.add_argument("--iterations", type=int, default=5)
    p.add_argument("--warmup", type=float, default=2.0, help="seconds of 8192^3 products first")
    args = p.parse_args()
    device = torch.device("cuda")
    started = time.monotonic()
    doc = {"gpu": torch.cuda.get_device_name(device), "torch": torch.__version__,
           "reference_tflops": [settle(args.warmup, device)],
           "copy_gbps": [copy_gbps("d2d", COPY_BYTES, COPY_REPS, device)], "rows": []}
    print(f"8192^3 bf16 {doc['reference_tflops'][0]:.1f} TFLOP/s, copy {doc['copy_gbps'][0]:.0f} GB/s",
          flush=True)
    doc["optimizer_s_per_billion"] = optimizer_costs(device)
    torch.cuda.empty_cache()
    print("optimizer:", {k: round(v, 4) for k, v in doc["optimizer_s_per_billion"].items()}, flush=True)
    write(args.out, doc)
    for row in table_rows(args.data):
        block = Block(row, device)
        x = block.input(device)
        forward, backward = block.passes(x, torch.randn_like(x))
        events_median([forward, backward], 2)
        fwd_s, bwd_s = events_median([forward, backward], args.iterations)
        try:
            kernels = profile_kernels([forward, backward])
        except Exception as e:  # the profiler is a lead, the events' times are the figures
            kernels = [{"name": f"profiler failed: {e}", "calls": 0, "seconds": 0.0}]
        entry = dict(row, forward_s=fwd_s, backward_s=bwd_s, kernels=kernels,
                     elementwise=elementwise(block, device))
        doc["rows"].append(entry)
        write(args.out, doc)
        busy = sum(k["seconds"] for k in kernels)
        print(f"{row['source']}: forward {fwd_s * 1e3:.1f} ms, backward {bwd_s * 1e3:.1f} ms, "
              f"kernels {busy * 1e3:.1f} ms ({time.monotonic() - started:.0f} s)", flush=True)
        del block, x, forward, backward
        torch.cuda.empty_cache()
    doc["reference_tflops"].append(settle(0.5, device))
    doc["copy_gbps"].append(copy_gbps("d2d", COPY_BYTES, COPY_REPS, device))
    write(args.out, doc)
    print(f"end: 8192^3 bf16 {doc['reference_tflops'][1]:.1f} TFLOP/s, copy {doc['copy_gbps'][1]:.0f} GB/s",
          flush=True)


if __name__ == "__main__":
    main()
