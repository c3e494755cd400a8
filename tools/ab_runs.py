#!/usr/bin/env python3
"""Times shell commands run in turn (A B A B ...), N runs each, and prints per command the minimum and median
of the wall time and of the CPU time (user + system of the command and its children).

    python3 tools/ab_runs.py N LABEL=COMMAND [LABEL=COMMAND ...]

On a shared or virtual machine whose speed drifts, commands timed in turn see the same drift; compare medians.
Used for docs/PERFORMANCE.md ("`report` streaming the ranks").
"""
import resource
import statistics
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit() or any("=" not in a for a in sys.argv[2:]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runs = int(sys.argv[1])
    specs = [a.split("=", 1) for a in sys.argv[2:]]
    results = {label: [] for label, _ in specs}
    for _ in range(runs):
        for label, command in specs:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(command, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                print(f"{label}: exit status {done.returncode}: {command}", file=sys.stderr)
                return 1
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            results[label].append((wall, cpu))
    for label, _ in specs:
        walls = sorted(r[0] for r in results[label])
        cpus = sorted(r[1] for r in results[label])
        print(f"{label:12s} wall min {walls[0]:.2f} med {statistics.median(walls):.2f} | "
              f"cpu min {cpus[0]:.2f} med {statistics.median(cpus):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
