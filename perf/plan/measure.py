#!/usr/bin/env python3
"""Measures on a real GPU what `vigil plan train` and `vigil plan infer` predict, so that their
predictions can be scored on hardware Vigil did not model (perf/plan/compare.py scores them).

Training: GPT models as Megatron-LM builds them (learned position embeddings, pre-LayerNorm,
fused QKV, GeLU MLP of 4 x hidden, output head tied to the word embedding), written in plain
PyTorch with FlashAttention through scaled_dot_product_attention, BF16 autocast over FP32
parameters, fused AdamW. One GPU: TP = PP = DP = 1, gradient accumulation over micro-batches.
Each configuration is timed eagerly and, where torch.compile works on the machine, compiled
(fused element-wise kernels, closer to Megatron's fused kernels). The step time is the median of
timed steps after warm-up steps; peak memory is torch.cuda.max_memory_allocated over the warm-up
and timed steps (torch.compile's own allocations included; the eager and compiled peaks came out
within 0.1 GiB of each other).

Inference: a GPT model in BF16 with a preallocated KV cache. Prefill of `batch` prompts of
`prompt` tokens (eager; the time to the first token), then `output - 1` decode steps, each the
replay of one CUDA graph that reads the whole cache with a mask (fixed shapes: up to O/2 more
cache than the mean context); the decode time per token is the median step.

Writes one JSON document (--out): {"gpu", "torch", "train": [...], "infer": [...]}, each entry
with its model (the keys of Vigil's model files) and what was measured; inference is measured
first, and the document is rewritten after each case, so a run stopped at a time limit keeps the
cases it finished. A configuration that does not fit is recorded with "error" rather than
stopping the run.

    python3 perf/plan/measure.py --out plan-measured.json
"""

import argparse
import json
import os
import statistics
import time

import torch
import torch.nn.functional as F

TRAIN = [
    # name, layers, hidden, heads, micro-batch, global batch (sequences)
    ("gpt-350m", 24, 1024, 16, 8, 32),
    ("gpt-1.3b", 24, 2048, 16, 4, 32),
    ("gpt-2.7b", 32, 2560, 32, 2, 16),
]
INFER_MODEL = ("gpt-6.7b", 32, 4096, 32)
INFER_CASES = [  # batch, prompt, output
    (1, 512, 128),
    (1, 1920, 128),
    (8, 512, 128),
    (32, 512, 128),
    (64, 1024, 64),
]
VOCAB = 50304
SEQ = 2048


def model_keys(name, layers, hidden, heads):
    return {
        "name": name,
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": heads,
        "ffn_hidden": 4 * hidden,
        "vocab": VOCAB,
        "seq_len": SEQ,
    }


class Block(torch.nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc1 = torch.nn.Linear(hidden, 4 * hidden)
        self.fc2 = torch.nn.Linear(4 * hidden, hidden)

    def attention(self, x, cache, step):
        b, s, h = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        if step is not None:  # a decode step of fixed shapes, for a CUDA graph
            cache[0].index_copy_(2, step.pos, k)
            cache[1].index_copy_(2, step.pos, v)
            o = F.scaled_dot_product_attention(q, cache[0], cache[1], attn_mask=step.mask)
        else:
            if cache is not None:  # cache: (2, batch, heads, max_len, head_dim); prefill
                cache[0, :, :, :s] = k
                cache[1, :, :, :s] = v
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(o.transpose(1, 2).reshape(b, s, h))

    def forward(self, x, cache=None, step=None):
        x = x + self.attention(self.ln1(x), cache, step)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class Gpt(torch.nn.Module):
    def __init__(self, layers, hidden, heads):
        super().__init__()
        self.wte = torch.nn.Embedding(VOCAB, hidden)
        self.wpe = torch.nn.Embedding(SEQ, hidden)
        self.blocks = torch.nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln = torch.nn.LayerNorm(hidden)

    def forward(self, tokens, caches=None, step=None):
        positions = step.pos if step is not None else torch.arange(tokens.shape[1], device=tokens.device)
        x = self.wte(tokens) + self.wpe(positions)
        for i, block in enumerate(self.blocks):
            x = block(x, None if caches is None else caches[i], step)
        if caches is not None:  # inference: the next token's logits only
            x = x[:, -1:]
        return self.ln(x) @ self.wte.weight.t()  # tied output head


def timed(fn, warmup, steps):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return times


def train_case(name, layers, hidden, heads, micro, global_batch, compiled, steps):
    """One training configuration's median step time and peak memory."""
    torch.manual_seed(0)
    model = Gpt(layers, hidden, heads).cuda()
    params = sum(p.numel() for p in model.parameters())
    forward = torch.compile(model) if compiled else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    accumulation = global_batch // micro
    data = torch.randint(0, VOCAB, (micro, SEQ + 1), device="cuda")

    def step():
        for _ in range(accumulation):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = forward(data[:, :-1])
            loss = F.cross_entropy(logits.float().view(-1, VOCAB), data[:, 1:].reshape(-1))
            (loss / accumulation).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    torch.cuda.reset_peak_memory_stats()
    times = timed(step, 3, steps)
    step_s = statistics.median(times)
    return {
        "params": params,
        "step_time_s": step_s,
        "step_times_s": times,
        "tokens_per_s": global_batch * SEQ / step_s,
        "peak_memory_gib": torch.cuda.max_memory_allocated() / 2**30,
    }


class DecodeStep:
    """A decode step's inputs as fixed tensors, updated in place between replays of its graph:
    the position it writes, and which cache positions it may attend to (the whole cache is read,
    masked, so that every step has the same shapes)."""

    def __init__(self, batch, max_len):
        self.pos = torch.zeros(1, dtype=torch.long, device="cuda")
        self.mask = torch.zeros(1, 1, 1, max_len, dtype=torch.bool, device="cuda")
        self.token = torch.zeros(batch, 1, dtype=torch.long, device="cuda")

    def at(self, pos):
        self.pos.fill_(pos)
        self.mask[..., : pos + 1] = True


def infer_case(model, layers, hidden, heads, batch, prompt, output):
    """Prefill eagerly; decode each token by replaying one CUDA graph, as serving engines do (an
    eager decode step of a 32-layer model is bound by the CPU's kernel launches, not the GPU)."""
    max_len = prompt + output
    caches = torch.zeros(layers, 2, batch, heads, max_len, hidden // heads,
                         dtype=torch.bfloat16, device="cuda")
    tokens = torch.randint(0, VOCAB, (batch, prompt), device="cuda")
    step = DecodeStep(batch, max_len)
    with torch.inference_mode():
        prefill = timed(lambda: model(tokens, caches)[:, -1].argmax(-1), 2, 5)
        step.token.copy_(model(tokens, caches)[:, -1:].argmax(-1))
        step.at(prompt)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                model(step.token, caches, step)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            next_token = model(step.token, caches, step)[:, -1:].argmax(-1)
        steps = []
        torch.cuda.synchronize()
        for pos in range(prompt, max_len - 1):
            start = time.perf_counter()
            step.at(pos)
            graph.replay()
            step.token.copy_(next_token)
            torch.cuda.synchronize()
            steps.append(time.perf_counter() - start)
    prefill_s = statistics.median(prefill)
    return {
        "prefill_s": prefill_s,
        "decode_s_per_token": statistics.median(steps),
        "latency_s": prefill_s + sum(steps),
    }


def guarded(fn):
    try:
        return fn()
    except Exception as e:  # a case that does not fit or does not compile is recorded, not fatal
        torch.cuda.empty_cache()
        return {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=8, help="timed training steps per case")
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--only", choices=["train", "infer"], help="measure one of the two")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "train": [], "infer": []}
    # Inference first: it is the shorter, and a run stopped at a time limit keeps it.
    if args.only != "train":
        name, layers, hidden, heads = INFER_MODEL
        torch.manual_seed(0)
        model = Gpt(layers, hidden, heads).cuda().to(torch.bfloat16).eval()
        for batch, prompt, output in INFER_CASES:
            entry = {"model": model_keys(name, layers, hidden, heads), "batch": batch,
                     "prompt": prompt, "output": output}
            entry.update(guarded(lambda: infer_case(model, layers, hidden, heads, batch, prompt,
                                                    output)))
            print(json.dumps(entry), flush=True)
            doc["infer"].append(entry)
            write(args.out, doc)
            torch.cuda.empty_cache()
        del model
        torch.cuda.empty_cache()
    for name, layers, hidden, heads, micro, global_batch in [] if args.only == "infer" else TRAIN:
        for compiled in [False] if args.no_compile else [False, True]:
            entry = {"model": model_keys(name, layers, hidden, heads), "micro_batch": micro,
                     "global_batch": global_batch, "compiled": compiled}
            entry.update(guarded(lambda: train_case(name, layers, hidden, heads, micro,
                                                    global_batch, compiled, args.steps)))
            print(json.dumps({k: v for k, v in entry.items() if k != "step_times_s"}), flush=True)
            doc["train"].append(entry)
            write(args.out, doc)  # after each case: a run stopped at a time limit keeps the rest
            torch.cuda.empty_cache()
    write(args.out, doc)


def write(path, doc):
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
