#!/usr/bin/env python3
"""Independent cross-check of the golden counts.csv files: recounts every shared trace with Python's json and
decimal modules (no meshscope code) and compares event counts by kind and first/last timestamps in ns.
Run by hand after regenerating golden files: python3 tests/golden/tools/cross_check.py ../shared/traces"""
import csv, gzip, json, os, sys
from decimal import Decimal

KINDS = {
    "kernel": "kernels", "Kernel": "kernels", "cuda_profiler_range": "kernels",
    "gpu_memcpy": "memcpys", "Memcpy": "memcpys", "gpu_memset": "memsets", "Memset": "memsets",
    "cuda_sync": "syncs", "cuda_runtime": "runtime_calls", "Runtime": "runtime_calls",
    "cuda_driver": "driver_calls", "Driver": "driver_calls", "cpu_op": "cpu_ops", "Operator": "cpu_ops",
    "operator": "cpu_ops", "user_annotation": "annotations", "User annotation": "annotations",
    "python_function": "python_functions", "Python function": "python_functions",
    "gpu_user_annotation": "gpu_annotations",
}

def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)

def count(path):
    d = load(path)
    base = int(d.get("baseTimeNanoseconds", 0)) if isinstance(d, dict) else 0
    events = d["traceEvents"] if isinstance(d, dict) else d
    counts = {k: 0 for k in set(KINDS.values()) | {"steps", "other_ranges"}}
    first = last = None
    for e in events:
        if e.get("ph") != "X" or e.get("cat") == "Trace":
            continue
        kind = KINDS.get(e.get("cat"), "other_ranges")
        if kind in ("cpu_ops", "annotations", "python_functions", "other_ranges") and \
                e.get("name", "").startswith("ProfilerStep#") and e["name"][13:].isdigit():
            kind = "steps"
        counts[kind] += 1
        start = int(Decimal(e["ts"]) * 1000) + base
        end = start + int(Decimal(e.get("dur", 0)) * 1000)
        first = start if first is None else min(first, start)
        last = end if last is None else max(last, end)
    return counts, first, last

def main():
    traces = sys.argv[1]
    golden = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    failures = 0
    for case in sorted(os.listdir(golden)):
        inputs = os.path.join(golden, case, "inputs")
        expected = os.path.join(golden, case, "counts.csv")
        if not os.path.exists(inputs) or not os.path.exists(expected):
            continue
        files = []
        for line in open(inputs):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            p = os.path.join(traces, line)
            if os.path.isdir(p):
                files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith((".json", ".json.gz")))
            elif p.endswith((".json", ".json.gz")):
                files.append(p)
        rows = list(csv.DictReader(open(expected)))
        if len(rows) != len(files):
            print(f"{case}: {len(rows)} ranks in counts.csv, {len(files)} files")
            failures += 1
            continue
        checked = {(r["first_ns"], r["last_ns"]): r for r in rows}
        for f in files:
            counts, first, last = count(f)
            row = checked.get((str(first), str(last)))
            if row is None:
                print(f"{case}: {os.path.basename(f)}: first/last {first}/{last} not in counts.csv")
                failures += 1
                continue
            for key, value in counts.items():
                if int(row[key]) != value:
                    print(f"{case}: {key}: counts.csv says {row[key]}, the trace has {value}")
                    failures += 1
        print(f"{case}: checked {len(files)} file(s)")
    print("cross-check:", "OK" if failures == 0 else f"{failures} difference(s)")
    return 1 if failures else 0

if __name__ == "__main__":
    sys.exit(main())
