"""The steps whose time tests/gpu/overhead.sh compares plainly, under `meshscope record` and under torch.profiler.

One process runs four workloads one after the other, so that a process start (Python, PyTorch, the CUDA context)
is paid once for all four:

- launch-bound: train_step.py's default transformer (8 layers, width 1024, batch 8 x 512 tokens): about 650
  kernels a step, the GPU idle most of the step, every per-launch cost shows;
- gpu-bound: the same transformer 8 layers wide 2048, batch 16 x 1024 tokens: the same number of kernels, each
  long, a step of about 100 ms on an H100;

each eagerly and as a captured CUDA graph (forward, backward and optimizer replayed by one cudaGraphLaunch). Every
step is an NVTX range "train_step". Prints one line of JSON per workload: its step times in milliseconds after
warm-up.

    python3 overhead_steps.py --mode plain
    python3 overhead_steps.py --mode torch-profiler   # each workload's steps under torch.profiler (CPU + CUDA)
"""

import argparse
import gc
import json
import statistics

import torch
import torch.nn as nn

from train_step import Model, captured, timed_steps

WORKLOADS = [
    # name, model and batch, warm-up steps, timed steps
    ("launch-bound", dict(batch=8, seq=512, width=1024, layers=8), 3, 12),
    ("gpu-bound", dict(batch=16, seq=1024, width=2048, layers=8), 2, 5),
]
VOCAB = 32000
HEADS = 16


def run_workload(shape, graphs, warmup, steps, torch_profiler):
    device = torch.device("cuda")
    torch.manual_seed(0)
    # Built on the GPU: initialising half a billion parameters on the CPU would take longer than the steps.
    with device:
        model = Model(VOCAB, shape["width"], HEADS, shape["layers"], shape["seq"])
        tokens = torch.randint(0, VOCAB, (shape["batch"], shape["seq"]))
        targets = torch.randint(0, VOCAB, (shape["batch"], shape["seq"]))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, capturable=graphs)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=not graphs):
            loss = loss_fn(model(tokens).flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=not graphs)

    run = captured(step) if graphs else step

    return timed_steps(run, warmup, steps, torch_profiler)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["plain", "torch-profiler"], default="plain")
    p.add_argument("--only", help="run only this workload (launch-bound, gpu-bound)")
    args = p.parse_args()
    for name, shape, warmup, steps in WORKLOADS:
        if args.only and args.only != name:
            continue
        for graphs in (False, True):
            times = run_workload(shape, graphs, warmup, steps, args.mode == "torch-profiler")
            print(json.dumps({
                "workload": name, "graphs": graphs, "median_ms": statistics.median(times),
                "times_ms": [round(t, 4) for t in times],
                "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
            }), flush=True)
            gc.collect()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
