#!/usr/bin/env python3
"""PyTorch's figures for the targets of Vigil's GPU benchmarks, measured the way Vigil measures
its own, and the table of Vigil's figures against them.

The shapes and byte counts are Vigil's quick-suite defaults: m = n = k = 8192 matrix products on
random data in [-1, 1), a 1 GiB device-to-device copy counted as bytes read plus bytes written
(gpu-membw's copy), 256 MiB pinned host copies each way (gpu-copy). Each figure is the median of
timed repetitions after untimed warm-up runs. Matrix products are timed as gpu-gemm times them:
batches of back-to-back products of about 30 ms between two CUDA events, after --gemm-warmup
seconds of products (gpu-gemm's `warmup`, 2 s), so that the GPU's clocks have settled under its
power limit. (The warm-ups differ in form: here one batch of back-to-back products, in gpu-gemm
batches that double up to 30 ms with a wait for each; both keep the GPU busy for the time.) The burst figure beside it (0.2 s of warm-up, the faster of one product between two
events and batches) is recorded too: on an H100 it is up to 15% higher, and varies as much from
run to run. Run on the GPU Vigil measured, in the same session (perf/gpu/on_device.sh does both):

    python3 perf/gpu/reference.py --vigil vigil-quick.json --out reference.json

A GPU's speed drifts by several per cent from minute to minute (clocks, power, temperature). With
`--vigil-command CMD --rounds N`, CMD (which writes the --vigil document) runs before each of N
rounds of PyTorch's measurements, and each figure is the median over the rounds: Vigil and PyTorch
alternate on the GPU instead of following each other once.

Prints a Markdown table (figure, Vigil, PyTorch, ratio, target) and exits 1 when a target is
missed or a figure is absent, 3 when the Vigil command fails, 0 otherwise.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")  # GPU n is nvidia-smi's, as in Vigil

import torch  # noqa: E402  (after the device order is set)

GEMM_TFLOPS = ("fp64", "tf32", "fp16", "bf16", "fp8")

# (label, Vigil's metric without the GPU index, PyTorch's figure, least ratio or None)
ROWS = (
    ("bf16 GEMM (TFLOP/s)", "gpu-gemm/bf16_tflops", "bf16_tflops", 0.95),
    ("fp16 GEMM (TFLOP/s)", "gpu-gemm/fp16_tflops", "fp16_tflops", 0.95),
    ("fp8 e4m3 GEMM (TFLOP/s)", "gpu-gemm/fp8_tflops", "fp8_tflops", 0.95),
    ("tf32 GEMM (TFLOP/s)", "gpu-gemm/tf32_tflops", "tf32_tflops", None),
    ("fp64 GEMM (TFLOP/s)", "gpu-gemm/fp64_tflops", "fp64_tflops", None),
    ("HBM copy (GB/s)", "gpu-membw/copy_gbps", "d2d_copy_gbps", 0.95),
    ("host to device (GB/s)", "gpu-copy/h2d_gbps", "h2d_gbps", 0.95),
    ("device to host (GB/s)", "gpu-copy/d2h_gbps", "d2h_gbps", 0.95),
)


def time_each(fn, reps, warmup):
    """Seconds of each of `reps` calls of `fn`, each between two CUDA events, after `warmup`."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    seconds = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        seconds.append(start.elapsed_time(stop) * 1e-3)
    return seconds


def time_batches(fn, reps, warmup_s=0.2, sample_s=0.03):
    """Seconds per call of `fn` in each of `reps` batches of back-to-back calls between two CUDA
    events, each batch about `sample_s` long, after about `warmup_s` of calls: Vigil's method."""
    def batch(ops):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(ops):
            fn()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e-3 / ops

    per_op = batch(2)
    batch(max(1, round(warmup_s / per_op)))
    ops = max(1, round(sample_s / per_op))
    return [batch(ops) for _ in range(reps)]


def uniform(shape, dtype, device):
    return torch.empty(shape, device=device, dtype=torch.float32).uniform_(-1, 1).to(dtype)


def gemm_tflops(kind, n, reps, warmup_s, device):
    """(TFLOP/s timed as gpu-gemm times it, burst TFLOP/s) of `kind` products of n x n x n."""
    flops = 2.0 * n * n * n
    if kind == "fp8":
        a = uniform((n, n), torch.float8_e4m3fn, device)
        b = uniform((n, n), torch.float8_e4m3fn, device).t()  # column-major, as _scaled_mm needs
        one = torch.ones((), device=device, dtype=torch.float32)

        def run():
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    else:
        dtype = {"fp64": torch.float64, "tf32": torch.float32, "fp16": torch.float16,
                 "bf16": torch.bfloat16}[kind]
        torch.backends.cuda.matmul.allow_tf32 = kind == "tf32"
        a = uniform((n, n), dtype, device)
        b = uniform((n, n), dtype, device)

        def run():
            return torch.matmul(a, b)

    def median_rate(seconds):
        return statistics.median(flops / s / 1e12 for s in seconds)

    burst = max(median_rate(time_each(run, reps, 2)), median_rate(time_batches(run, reps)))
    return median_rate(time_batches(run, reps, warmup_s=warmup_s)), burst


def copy_gbps(kind, nbytes, reps, device):
    if kind == "d2d":
        src = torch.empty(nbytes // 4, device=device).uniform_(1, 2)
        dst = torch.empty_like(src)
        moved = 2 * nbytes  # read plus written, as gpu-membw counts

        def run():
            dst.copy_(src)

    else:
        host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True).fill_(7)
        gpu = torch.empty(nbytes, dtype=torch.uint8, device=device).fill_(5)
        moved = nbytes
        if kind == "h2d":
            def run():
                gpu.copy_(host, non_blocking=True)
        else:
            def run():
                host.copy_(gpu, non_blocking=True)

    return statistics.median(moved / s / 1e9 for s in time_each(run, reps, 1))


def measure(args, device):
    props = torch.cuda.get_device_properties(device)
    figures = {}
    for kind in GEMM_TFLOPS:
        if kind == "fp8" and (props.major, props.minor) < (8, 9):
            continue
        settled, burst = gemm_tflops(kind, args.gemm_size, args.reps, args.gemm_warmup, device)
        figures[f"{kind}_tflops"], figures[f"{kind}_burst_tflops"] = settled, burst
        print(f"{kind} GEMM: {settled:.1f} TFLOP/s (burst {burst:.1f})", file=sys.stderr)
    figures["d2d_copy_gbps"] = copy_gbps("d2d", args.copy_bytes, args.reps, device)
    figures["h2d_gbps"] = copy_gbps("h2d", args.host_copy_bytes, args.reps, device)
    figures["d2h_gbps"] = copy_gbps("d2h", args.host_copy_bytes, args.reps, device)
    return figures


def vigil_figures(path, gpu):
    """Vigil's figures of GPU `gpu` from a results document: metric without index -> value."""
    with open(path) as f:
        doc = json.load(f)
    suffix = f":{gpu}"
    out = {}
    for bench in doc.get("benchmarks", []):
        for m in bench.get("metrics", []):
            if m["key"].endswith(suffix):
                out[m["key"][: -len(suffix)]] = m["value"]
    return out


def median_of(rounds):
    """Each key's median over the rounds (dicts of figures) that have it."""
    keys = {k for r in rounds for k in r}
    return {k: statistics.median(r[k] for r in rounds if k in r) for k in keys}


def table(vigil, ref):
    ok = True
    lines = ["| figure | Vigil | PyTorch | ratio | target |", "|---|---:|---:|---:|---|"]
    for label, key, ref_key, least in ROWS:
        v, r = vigil.get(key), ref.get(ref_key)
        if v is None or r is None:
            if least is not None and ref_key in ref:
                ok = False
            lines.append(f"| {label} | {v if v is not None else 'absent'} | "
                         f"{f'{r:.1f}' if r is not None else 'absent'} | | |")
            continue
        ratio = v / r
        verdict = "" if least is None else (
            f">= {least:.2f}: met" if ratio >= least else f">= {least:.2f}: MISSED")
        ok = ok and (least is None or ratio >= least)
        lines.append(f"| {label} | {v:.1f} | {r:.1f} | {ratio:.3f} | {verdict} |")
    return "\n".join(lines), ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vigil", help="Vigil's results document of the same GPU (vigil run --out)")
    p.add_argument("--out", help="write PyTorch's figures here (JSON)")
    p.add_argument("--gpu", type=int, default=0, help="GPU index, as nvidia-smi numbers them")
    p.add_argument("--gemm-size", type=int, default=8192)
    p.add_argument("--copy-bytes", type=int, default=1 << 30)
    p.add_argument("--host-copy-bytes", type=int, default=256 << 20)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--gemm-warmup", type=float, default=2.0,
                   help="seconds of products before timing (gpu-gemm's warmup)")
    p.add_argument("--rounds", type=int, default=1, help="rounds of the matrix products")
    p.add_argument("--vigil-command", help="shell command that writes --vigil, run every round")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("reference.py: PyTorch sees no GPU", file=sys.stderr)
        return 2
    if args.vigil_command and not args.vigil:
        print("reference.py: --vigil-command writes the document --vigil names", file=sys.stderr)
        return 2
    device = torch.device("cuda", args.gpu)
    torch.cuda.set_device(device)
    vigil_rounds, torch_rounds = [], []
    for r in range(args.rounds):
        if args.vigil_command:
            print(f"round {r + 1}: {args.vigil_command}", file=sys.stderr)
            done = subprocess.run(args.vigil_command, shell=True, stdout=subprocess.DEVNULL)
            if done.returncode != 0:
                print(f"reference.py: round {r + 1}: the Vigil command exited {done.returncode}",
                      file=sys.stderr)
                return 3
            vigil_rounds.append(vigil_figures(args.vigil, args.gpu))
        torch_rounds.append(measure(args, device))
    ref = {"gpu": torch.cuda.get_device_properties(device).name, "torch": torch.__version__,
           "gemm_size": args.gemm_size, "copy_bytes": args.copy_bytes,
           "host_copy_bytes": args.host_copy_bytes, **median_of(torch_rounds),
           "rounds": torch_rounds, "vigil_rounds": vigil_rounds}
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(ref, f, indent=2)
        os.replace(tmp, args.out)
    if not args.vigil:
        print(json.dumps(ref, indent=2))
        return 0
    vigil = vigil_figures(args.vigil, args.gpu)
    if vigil_rounds:
        vigil.update(median_of(vigil_rounds))
    text, ok = table(vigil, ref)
    print(f"{ref['gpu']}, PyTorch {ref['torch']}\n")
    print(text)
    bursts = [f"{k[:-len('_burst_tflops')]} {v:.1f}" for k, v in sorted(ref.items())
              if k.endswith("_burst_tflops")]
    print(f"\nPyTorch's burst GEMM figures (TFLOP/s, not compared): {', '.join(bursts)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
