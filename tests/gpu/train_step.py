"""A real PyTorch training step for checking the collectors on a GPU (tests/gpu/run.sh).

A small decoder-only transformer (bf16 autocast, AdamW) trained on random tokens. Each step is an NVTX range
("train_step") so the recorded profile has a known number of them; with --ddp (under torchrun) gradients are
all-reduced by DistributedDataParallel over NCCL; with --graphs the forward and backward run as a captured CUDA
graph. Prints one line of JSON with the step times (milliseconds, after warm-up) and what it did.

    python3 train_step.py --steps 30 --warmup 10
    torchrun --nproc-per-node 1 train_step.py --ddp
    python3 train_step.py --torch-profiler      # the same steps under torch.profiler (CUDA activities)
    python3 train_step.py --emit-nvtx           # every operator an NVTX range too, with its input shapes
"""

import argparse
import contextlib
import json
import os
import statistics
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x, mask):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Model(nn.Module):
    def __init__(self, vocab, width, heads, layers, seq):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.zeros(seq, width))
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.head = nn.Linear(width, vocab)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1))

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        for block in self.blocks:
            x = block(x, self.mask)
        return self.head(x)


def captured(step):
    """STEP as one captured CUDA graph (after three warm-up runs on a side stream): its replay function."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def timed_steps(run, warmup, steps, torch_profiler=False):
    """Runs RUN WARMUP + STEPS times, each an NVTX range "train_step" between two synchronisations (under
    torch.profiler, CPU and CUDA activities, when TORCH_PROFILER); the timed steps' wall times in ms."""
    profiler = None
    if torch_profiler:
        profiler = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
        profiler.__enter__()
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        torch.cuda.nvtx.range_push("train_step")
        run()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
    if profiler:
        profiler.__exit__(None, None, None)
    return times


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--ddp", action="store_true")
    p.add_argument("--graphs", action="store_true")
    p.add_argument("--torch-profiler", action="store_true")
    p.add_argument("--emit-nvtx", action="store_true")
    args = p.parse_args()

    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    torch.manual_seed(0)
    vocab = 32000
    model = Model(vocab, args.width, 16, args.layers, args.seq).to(device)
    if args.ddp:
        torch.distributed.init_process_group("nccl", device_id=device)
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=args.graphs)
    tokens = torch.randint(0, vocab, (args.batch, args.seq), device=device)
    targets = torch.randint(0, vocab, (args.batch, args.seq), device=device)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        # Autocast's weight cache must be off while a graph is captured.
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=not args.graphs):
            loss = loss_fn(model(tokens).flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=not args.graphs)
        return loss

    run = captured(step) if args.graphs else step

    operator_ranges = (torch.autograd.profiler.emit_nvtx(record_shapes=True) if args.emit_nvtx
                       else contextlib.nullcontext())
    with operator_ranges:
        times = timed_steps(run, args.warmup, args.steps, args.torch_profiler)
    if args.ddp:
        torch.distributed.destroy_process_group()
    if rank == 0:
        print(json.dumps({
            "steps": args.steps, "warmup": args.warmup, "nvtx_ranges": args.warmup + args.steps,
            "graphs": args.graphs, "ddp": args.ddp, "torch_profiler": args.torch_profiler,
            "median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
            "gpu": torch.cuda.get_device_name(device), "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "nccl": ".".join(map(str, torch.cuda.nccl.version())) if args.ddp else None,
        }), flush=True)


if __name__ == "__main__":
    main()
