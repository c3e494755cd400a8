"""Summarises tests/gpu/overhead.sh's overhead.jsonl as a Markdown table.

Per workload (launch-bound, gpu-bound; eager or CUDA graph) and way of running it (plain, record, ...): the number
of rounds, the median over rounds of each process's median step time, its quartiles and range; and the overhead
against plain, paired by round (each round's process median over the same round's plain one, minus one), as the
median of those ratios with their quartiles. Pairing by round cancels the drift that runs from round to round.

    python3 overhead_summary.py overhead.jsonl
"""

import json
import statistics
import sys
from collections import defaultdict

MODES = ["plain", "record", "record-flush100", "record-nodriver", "record-driver-callbacks", "record-nocupti",
         "torch-profiler"]


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def main():
    medians = defaultdict(dict)  # (workload, graphs) -> {(mode, round): median ms}
    about = None
    with open(sys.argv[1]) as rows:
        for line in rows:
            row = json.loads(line)
            medians[(row["workload"], row["graphs"])][(row["mode"], row["round"])] = row["median_ms"]
            about = about or (row["gpu"], row["torch"], row["cuda"])
    if about:
        print(f"GPU {about[0]}, PyTorch {about[1]}, CUDA {about[2]}\n")
    print("| workload | run | rounds | median step (ms) | quartiles | range | overhead vs plain (paired) | quartiles |")
    print("|---|---|---|---|---|---|---|---|")
    for (workload, graphs), by in medians.items():
        name = f"{workload}, {'CUDA graph' if graphs else 'eager'}"
        overheads = {}
        for mode in MODES:
            rounds = sorted(r for m, r in by if m == mode)
            if not rounds:
                continue
            values = [by[(mode, r)] for r in rounds]
            low, high = quartiles(values)
            cells = [name, f"`{mode}`", str(len(values)), f"{statistics.median(values):.2f}",
                     f"{low:.2f}-{high:.2f}", f"{min(values):.2f}-{max(values):.2f}"]
            if mode == "plain":
                cells += ["", ""]
            else:
                ratios = [by[(mode, r)] / by[("plain", r)] - 1 for r in rounds if ("plain", r) in by]
                if ratios:
                    overheads[mode] = statistics.median(ratios)
                    low, high = quartiles(ratios)
                    cells += [f"{overheads[mode] * 100:+.1f} %", f"{low * 100:+.1f} to {high * 100:+.1f} %"]
                else:
                    cells += ["", ""]
            print("| " + " | ".join(cells) + " |")
        if "record" in overheads and overheads.get("torch-profiler", 0) > 0:
            print(f"| {name} | `record` / `torch-profiler` overhead | | "
                  f"{overheads['record'] / overheads['torch-profiler']:.2f} | | | | |")


if __name__ == "__main__":
    main()
