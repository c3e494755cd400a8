#!/usr/bin/env bash
# The collectors on a real GPU, in one go (well inside the device tool's 10 minutes). Needs .gpu/ from
# tests/gpu/pack.sh, a CUDA toolkit (nvcc) and PyTorch. Writes results.txt, the checks' verdicts and the smallest
# recorded job profiles to OUT_DIR.
#
#   bash tests/gpu/run.sh OUT_DIR [--quick]
#
# 1. cuda_smoke: a CUDA program whose every kernel, copy, memset, graph replay and NVTX range is known; the
#    profile must hold exactly those.
# 2. train_step.py under `meshscope record`: eager, under CUDA graphs, and with DDP over NCCL (torchrun, one
#    process per GPU on this machine); NVTX ranges, graph ids and collectives must be there.
# 3. Overhead: the same steps plainly, under `meshscope record` and under torch.profiler, alternated three times.
set -uo pipefail
out="${1:?usage: run.sh OUT_DIR [--quick]}"
quick="${2:-}"
here="$(cd "$(dirname "$0")/../.." && pwd)"
pack="$here/.gpu"
[ -x "$pack/meshscope" ] || { echo "run.sh: $pack/meshscope missing: run tests/gpu/pack.sh first" >&2; exit 2; }
mkdir -p "$out"
work="$(mktemp -d)"
results="$out/results.txt"
: >"$results"
say() { echo "$*" | tee -a "$results"; }

# The libcupti this process's PyTorch loads: the CUDA collector must use the same one (two copies of CUPTI in one
# process do not work), so its folder goes first.
torch_cupti="$(python3 - <<'EOF' 2>/dev/null
import ctypes, torch
torch.cuda.init()
with open("/proc/self/maps") as maps:
    paths = sorted({l.split()[-1] for l in maps if "libcupti.so" in l})
print(paths[0] if paths else "")
EOF
)"
if [ -z "$torch_cupti" ]; then
  torch_cupti="$(find / -name 'libcupti.so.1[0-9]' -path '*site-packages*' 2>/dev/null | head -1)"
fi
[ -z "$torch_cupti" ] && torch_cupti="$(find /usr/local/cuda*/ -name 'libcupti.so.1[0-9]' 2>/dev/null | head -1)"
cupti_dir="$(dirname "${torch_cupti:-/usr/local/cuda/lib64/libcupti.so}")"
export LD_LIBRARY_PATH="$cupti_dir:$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
ms="$pack/meshscope"

say "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$results"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1 | tee -a "$results"
say "libcupti used: ${torch_cupti:-not found}"

# check NAME DB SQL EXPECTED: one SQL value compared with what it must be.
check() {
  local got
  got="$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$2" "$3" 2>&1)"
  if [ "$got" = "$4" ]; then say "PASS $1: $got"; else say "FAIL $1: got $got, expected $4"; fi
}
# at_least NAME DB SQL MIN
at_least() {
  local got
  got="$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$2" "$3" 2>&1)"
  if [[ "$got" =~ ^[0-9]+$ ]] && [ "$got" -ge "$4" ]; then say "PASS $1: $got"; else say "FAIL $1: got $got, expected >= $4"; fi
}
diagnostics() {
  python3 -c 'import sqlite3,sys
for r in sqlite3.connect(sys.argv[1]).execute("SELECT rank, severity, message FROM diagnostics ORDER BY rowid"): print("  ", *r)' "$1" 2>&1 | tee -a "$results"
}

say "== 1. cuda_smoke"
if nvcc -O2 -std=c++17 -o "$work/cuda_smoke" "$pack/cuda_smoke.cu" 2>&1 | tee -a "$results"; then
  "$ms" record -q -o "$work/smoke" -- "$work/cuda_smoke" 2>&1 | tee "$work/smoke.log" | tee -a "$results"
  db="$work/smoke/job.msdb"
  kernel="(SELECT value FROM enums WHERE enum_name = 'activity_kind' AND name = 'kernel')"
  check "kernels" "$db" "SELECT count(*) FROM activities WHERE kind = $kernel" \
    "$(sed -n 's/.* kernels=\([0-9]*\).*/\1/p' "$work/smoke.log")"
  check "graph kernels" "$db" "SELECT count(*) FROM activities WHERE kind = $kernel AND graph_id IS NOT NULL" \
    "$(sed -n 's/.*graph_kernels=\([0-9]*\).*/\1/p' "$work/smoke.log")"
  check "memcpys" "$db" "SELECT count(*) FROM activities WHERE kind = (SELECT value FROM enums WHERE enum_name = 'activity_kind' AND name = 'memcpy')" \
    "$(sed -n 's/.*memcpys=\([0-9]*\).*/\1/p' "$work/smoke.log")"
  check "memsets" "$db" "SELECT count(*) FROM activities WHERE kind = (SELECT value FROM enums WHERE enum_name = 'activity_kind' AND name = 'memset')" \
    "$(sed -n 's/.*memsets=\([0-9]*\).*/\1/p' "$work/smoke.log")"
  check "NVTX ranges" "$db" "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value LIKE 'smoke: %' AND r.end_ns > r.start_ns" \
    "$(sed -n 's/.*nvtx_ranges=\([0-9]*\).*/\1/p' "$work/smoke.log")"
  check "NVTX marks" "$db" "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value = 'smoke: start' AND r.end_ns = r.start_ns" 1
  at_least "runtime API calls" "$db" "SELECT count(*) FROM api_calls" 30
  check "kernels that start before the API call that launched them" "$db" \
    "SELECT count(*) FROM activities a JOIN api_calls c ON c.correlation = a.correlation AND c.rank = a.rank WHERE a.start_ns < c.start_ns" 0
  diagnostics "$db"
  "$ms" report "$db" >"$out/smoke_report.txt" 2>&1
  cp "$db" "$out/smoke.msdb"
fi

steps=30
warmup=10
[ "$quick" = "--quick" ] && steps=10 && warmup=5
train="$pack/train_step.py --steps $steps --warmup $warmup"

say "== 2. train_step under record"
"$ms" record -q -o "$work/eager" -- python3 $train 2>&1 | tail -3 | tee -a "$results"
db="$work/eager/job.msdb"
check "train_step NVTX ranges (eager)" "$db" "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value = 'train_step'" $((steps + warmup))
at_least "kernels (eager)" "$db" "SELECT count(*) FROM activities" $((steps + warmup))
diagnostics "$db"

"$ms" record -q -o "$work/graphs" -- python3 $train --graphs 2>&1 | tail -3 | tee -a "$results"
db="$work/graphs/job.msdb"
at_least "graph-launched kernels" "$db" "SELECT count(*) FROM activities WHERE graph_id IS NOT NULL" $((steps + warmup))
diagnostics "$db"

gpus="$(nvidia-smi -L | wc -l)"
"$ms" record -q -o "$work/ddp" -- python3 -m torch.distributed.run --standalone --nproc-per-node "$gpus" $train --ddp 2>&1 | tail -3 | tee -a "$results"
db="$work/ddp/job.msdb"
at_least "NCCL collectives (DDP)" "$db" "SELECT count(*) FROM collectives" $((steps + warmup))
at_least "collectives with GPU times from the plugin" "$db" "SELECT count(*) FROM collectives WHERE end_ns > start_ns" $((steps + warmup))
python3 -c 'import sqlite3,sys
db=sqlite3.connect(sys.argv[1])
print("  collective columns:", [d[1] for d in db.execute("PRAGMA table_info(collectives)")])
for r in db.execute("SELECT * FROM collectives LIMIT 3"): print("  ", r)' "$db" 2>&1 | tee -a "$results"
diagnostics "$db"
"$ms" report "$db" >"$out/ddp_report.txt" 2>&1
cp "$db" "$out/ddp.msdb"

say "== 3. overhead (median step ms; plain / record / torch.profiler, alternated)"
for round in 1 2 3; do
  plain="$(python3 $train | tail -1)"
  recorded="$("$ms" record -q -o "$work/o$round" -- python3 $train | tail -1)"
  profiled="$(python3 $train --torch-profiler | tail -1)"
  say "round $round plain $plain"
  say "round $round record $recorded"
  say "round $round torch.profiler $profiled"
done
rm -rf "$work"
say "== done"
