#!/usr/bin/env bash
# What recording costs a training step on a GPU: the steps of tests/gpu/overhead_steps.py (a launch-bound and a
# GPU-bound transformer step, each eagerly and as a CUDA graph) run as separate processes, round after round:
#
#   plain            python3 overhead_steps.py
#   record           meshscope record --no-merge -- python3 overhead_steps.py     (both collectors loaded)
#   record-flush100  the same with MESHSCOPE_FLUSH_MS=100 (the collectors flush ten times as often)
#   torch-profiler   python3 overhead_steps.py --mode torch-profiler                (CPU and CUDA activities)
#   record-nodriver  record with MESHSCOPE_CUPTI_DRIVER_API=0 (no driver-API records)  } only when
#   record-nocupti   record with MESHSCOPE_CUPTI=0 (the NCCL plugin and the wrapper)    } GPU_OVERHEAD_MODES names them
#   record-driver-callbacks  record with MESHSCOPE_CUPTI_DRIVER_API=2 (driver calls through CUPTI's callbacks)
#
# Each round runs plain, record and torch-profiler once (record-flush100 every GPU_OVERHEAD_FLUSH_EVERY-th round,
# default 2), or the modes GPU_OVERHEAD_MODES lists, in an order rotated from round to round, so that drift in the
# machine (clocks, heat, other tenants) falls on all alike. GPU_OVERHEAD_ONLY=launch-bound (or gpu-bound) runs one
# workload. Rounds go on until SECONDS have passed (default 420), then overhead_summary.py gives each variant's
# median with its spread and the overhead against plain, paired by round. Needs .gpu/ from tests/gpu/pack.sh.
# Writes overhead.jsonl (every process's step times), overhead_summary.md and overhead_logs.txt to OUT_DIR.
#
#   bash tests/gpu/overhead.sh OUT_DIR [SECONDS]
set -uo pipefail
out="${1:?usage: overhead.sh OUT_DIR [SECONDS]}"
budget="${2:-420}"
source "$(dirname "$0")/setup.sh"
mkdir -p "$out"
steps_py="${GPU_OVERHEAD_STEPS:-$here/tests/gpu/overhead_steps.py}"
jsonl="$out/overhead.jsonl"
logs="$out/overhead_logs.txt"
: >"$jsonl"
: >"$logs"

# run_mode MODE ROUND: one process of MODE; its JSON lines, tagged with mode and round, go to overhead.jsonl.
run_mode() {
  local mode="$1" round="$2" output status
  case "$mode" in
  plain) output="$(timeout 150 python3 "$steps_py" --mode plain ${GPU_OVERHEAD_ONLY:+--only $GPU_OVERHEAD_ONLY} 2>>"$logs")" ;;
  record) output="$(timeout 150 "$ms" record --no-merge -q -o "$work/rec" -- python3 "$steps_py" --mode plain ${GPU_OVERHEAD_ONLY:+--only $GPU_OVERHEAD_ONLY} 2>>"$logs")" ;;
  record-flush100) output="$(MESHSCOPE_FLUSH_MS=100 timeout 150 "$ms" record --no-merge -q -o "$work/rec" -- \
    python3 "$steps_py" --mode plain ${GPU_OVERHEAD_ONLY:+--only $GPU_OVERHEAD_ONLY} 2>>"$logs")" ;;
  # Where record's cost goes: without CUPTI's driver-API records, or without the CUDA collector at all.
  record-nodriver) output="$(MESHSCOPE_CUPTI_DRIVER_API=0 timeout 150 "$ms" record --no-merge -q -o "$work/rec" -- \
    python3 "$steps_py" --mode plain ${GPU_OVERHEAD_ONLY:+--only $GPU_OVERHEAD_ONLY} 2>>"$logs")" ;;
  record-driver-callbacks) output="$(MESHSCOPE_CUPTI_DRIVER_API=2 timeout 150 "$ms" record --no-merge -q -o "$work/rec" -- \
    python3 "$steps_py" --mode plain ${GPU_OVERHEAD_ONLY:+--only $GPU_OVERHEAD_ONLY} 2>>"$logs")" ;;
  record-nocupti) output="$(MESHSCOPE_CUPTI=0 timeout 150 "$ms" record --no-merge -q -o "$work/rec" -- \
    python3 "$steps_py" --mode plain ${GPU_OVERHEAD_ONLY:+--only $GPU_OVERHEAD_ONLY} 2>>"$logs")" ;;
  torch-profiler) output="$(timeout 150 python3 "$steps_py" --mode torch-profiler ${GPU_OVERHEAD_ONLY:+--only $GPU_OVERHEAD_ONLY} 2>>"$logs")" ;;
  esac
  status=$?
  rm -rf "$work/rec"
  echo "$output" | python3 -c '
import json, sys
mode, rnd = sys.argv[1], int(sys.argv[2])
for line in sys.stdin:
    if line.startswith("{"):
        row = json.loads(line)
        row.update(mode=mode, round=rnd)
        print(json.dumps(row))' "$mode" "$round" >>"$jsonl"
  echo "round $round $mode: exit $status, $(echo "$output" | grep -c '^{') workloads" | tee -a "$logs"
  return $status
}

start=$SECONDS
round=${GPU_OVERHEAD_FIRST_ROUND:-0}
while :; do
  round=$((round + 1))
  round_start=$SECONDS
  # record-flush100 every other round (every GPU_OVERHEAD_FLUSH_EVERY-th): a process start costs seconds, and
  # plain, record and torch.profiler are what must be alternated most often.
  # GPU_OVERHEAD_MODES replaces the modes of every round (record-nodriver and record-nocupti are only there).
  read -r -a modes <<<"${GPU_OVERHEAD_MODES:-plain record torch-profiler}"
  [ -z "${GPU_OVERHEAD_MODES:-}" ] && [ $((round % ${GPU_OVERHEAD_FLUSH_EVERY:-2})) -eq 0 ] && modes+=(record-flush100)
  for i in "${!modes[@]}"; do
    run_mode "${modes[$(((i + round - 1) % ${#modes[@]}))]}" "$round"
  done
  if [ "$round" -eq 1 ] && [ -z "${GPU_OVERHEAD_ONLY:-}${GPU_OVERHEAD_MODES:-}" ] && [ "$(wc -l <"$jsonl")" -ne 12 ]; then
    echo "overhead.sh: the first round gave $(wc -l <"$jsonl") step lines, not 12: stopping" | tee -a "$logs"
    tail -40 "$logs"
    exit 3
  fi
  took=$((SECONDS - round_start))
  echo "round $round took ${took}s" | tee -a "$logs"
  [ $((SECONDS - start + took)) -gt "$budget" ] && break
done
python3 "$here/tests/gpu/overhead_summary.py" "$jsonl" | tee "$out/overhead_summary.md"
rm -rf "$work"
