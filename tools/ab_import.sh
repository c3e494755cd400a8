#!/bin/bash
# ab_import.sh N BIN_A BIN_B TRACE...: the summed wall and CPU (user + system) seconds of N imports of each TRACE
# by each binary, the two binaries taking turns per trace (docs/PERFORMANCE.md compares an importer with and
# without a feature this way). Needs GNU time and bc.
set -euo pipefail
n=$1 a=$2 b=$3
shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for t in "$@"; do
  for bin in "$a" "$b"; do
    wall=0 cpu=0
    for _ in $(seq "$n"); do
      r=$({ /usr/bin/time -f "%e %U %S" "$bin" import -q "$t" -o "$out/p.msdb" >/dev/null; } 2>&1 | tail -1)
      wall=$(echo "$wall + $(echo "$r" | awk '{print $1}')" | bc)
      cpu=$(echo "$cpu + $(echo "$r" | awk '{print $2 + $3}')" | bc)
    done
    echo "$(basename "$t") $(basename "$bin"): wall $wall s, cpu $cpu s over $n runs"
  done
done
