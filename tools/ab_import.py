#!/usr/bin/env python3
"""ab_import.py N BIN_A BIN_B TRACE...: import each TRACE N times with each binary, the two taking turns run by
run (ABBA...), and print the median wall-clock and CPU (user + system) time of each and B's change over A.

docs/PERFORMANCE.md compares an importer with and without a feature this way: medians of interleaved runs are
steadier than sums on a shared machine, and wall time is read with perf_counter (not GNU time's 10 ms steps).
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    if len(sys.argv) < 5:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    runs, bins, traces = int(sys.argv[1]), sys.argv[2:4], sys.argv[4:]
    with tempfile.TemporaryDirectory() as out:
        for trace in traces:
            wall = {b: [] for b in bins}
            cpu = {b: [] for b in bins}
            for i in range(runs):
                for b in bins if i % 2 == 0 else bins[::-1]:
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    start = time.perf_counter()
                    subprocess.run([b, "import", "-q", trace, "-o", os.path.join(out, "p.msdb")], check=True)
                    wall[b].append(time.perf_counter() - start)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu[b].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            a, b = bins
            w = {x: statistics.median(wall[x]) * 1e3 for x in bins}
            c = {x: statistics.median(cpu[x]) * 1e3 for x in bins}
            print(f"{os.path.basename(trace.rstrip('/'))}: wall {w[a]:.1f} -> {w[b]:.1f} ms ({w[b] / w[a] - 1:+.1%}), "
                  f"cpu {c[a]:.1f} -> {c[b]:.1f} ms ({c[b] / c[a] - 1:+.1%}), medians of {runs} runs each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
