"""A CUDA Kineto trace with shapes of a training step whose configuration is known, for prediction beside
measurement: train_step.py's transformer (8 layers, width 1024, 16 heads, vocabulary 32000, 512 tokens, batch 8,
bf16 autocast, AdamW), eagerly, two profiled steps after three of warm-up (torch.profiler's schedule names them
ProfilerStep#N), CPU and CUDA activities, shapes recorded. Writes the trace gzipped to OUT.

    python3 kineto_trace.py OUT.json.gz
"""

import gzip
import json
import shutil
import sys
import tempfile

import torch
import torch.nn as nn

from train_step import Model

VOCAB, WIDTH, HEADS, LAYERS, SEQ, BATCH = 32000, 1024, 16, 8, 512, 8


def main():
    out = sys.argv[1]
    device = torch.device("cuda")
    torch.manual_seed(0)
    model = Model(VOCAB, WIDTH, HEADS, LAYERS, SEQ).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ), device=device)
    targets = torch.randint(0, VOCAB, (BATCH, SEQ), device=device)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(tokens).flatten(0, 1), targets.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    schedule = torch.profiler.schedule(wait=0, warmup=3, active=2, repeat=1)
    with tempfile.TemporaryDirectory() as scratch:
        trace = f"{scratch}/trace.json"
        with torch.profiler.profile(activities=activities, schedule=schedule, record_shapes=True,
                                    on_trace_ready=lambda p: p.export_chrome_trace(trace)) as profiler:
            for _ in range(5):
                step()
                torch.cuda.synchronize()
                profiler.step()
        with open(trace, "rb") as raw, gzip.open(out, "wb", compresslevel=9) as packed:
            shutil.copyfileobj(raw, packed)
    print(json.dumps({"trace": out, "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "config": dict(vocab=VOCAB, width=WIDTH, heads=HEADS, layers=LAYERS, seq=SEQ,
                                     batch=BATCH)}))


if __name__ == "__main__":
    main()
