#!/usr/bin/env python3
"""Cuts a Kineto trace to the CPU events that start in the first FRACTION of its CPU operators' time, and the GPU
work those launched: a capture window that ends part-way through a step, as a trace stopped early leaves it.
Metadata events and the trace's header are kept as they are.

  tests/data/cut_trace.py IN.json.gz OUT.json.gz FRACTION

tests/data/qwen_first_third.json.gz was made from ../shared/traces/tracelens/h100_qwen1.5_0.5b_inference.json.gz
with FRACTION 0.33 (tests/compare/coverage_test.cpp); tests/data/generate_cut.json.gz from
tests/data/known_models/llama_gqa_generate.json.gz with FRACTION 0.95: it ends inside the second of four passes
(tests/compare/known_models_test.cpp).
"""
import gzip
import json
import sys


def main():
    source, target, fraction = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with gzip.open(source, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    ops = sorted(e["ts"] for e in events if e.get("cat") == "cpu_op")
    cut = ops[0] + fraction * (ops[-1] - ops[0])
    gpu = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "ac2g"}
    launched = {e["args"]["correlation"] for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and e["ts"] < cut and "correlation" in e.get("args", {})}

    def kept(e):
        if e.get("ph") == "M" or "ts" not in e:
            return True
        if e.get("cat") == "ac2g":
            return e.get("id") in launched
        if e.get("cat") in gpu:
            return e.get("args", {}).get("correlation") in launched
        return e["ts"] < cut

    trace["traceEvents"] = [e for e in events if kept(e)]
    with gzip.open(target, "wt", compresslevel=9) as f:
        json.dump(trace, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
