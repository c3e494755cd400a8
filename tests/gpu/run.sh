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
# 3. Overhead: tests/gpu/overhead.sh for GPU_OVERHEAD_SECONDS (default 120): plainly, under `meshscope record`
#    (also flushing every 100 ms) and under torch.profiler, alternated round after round.
# 4. NCCL on one GPU: nccl_self sends to itself (point-to-point runs as a profiled kernel even on one rank); the
#    plugin must record every send and receive with its bytes and GPU times.
# GPU_CHECK_SECTIONS="smoke train overhead nccl" (the default) picks sections.
set -uo pipefail
out="${1:?usage: run.sh OUT_DIR [--quick]}"
quick="${2:-}"
source "$(dirname "$0")/setup.sh"
mkdir -p "$out"
results="$out/results.txt"
: >"$results"
: >"$out/logs.txt"
say() { echo "$*" | tee -a "$results"; }
want() { [[ " ${GPU_CHECK_SECTIONS:-smoke train overhead nccl} " == *" $1 "* ]]; }

say "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$results"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1 | tee -a "$results"
say "libcupti used: ${torch_cupti:-not found}; packed libraries used: $(ls "$work/lib" | tr '\n' ' ')"
"$ms" --version 2>&1 | tee -a "$results"

# check NAME DB SQL EXPECTED: one SQL value compared with what it must be.
check() {
  local got
  got="$(python3 -c 'import sqlite3,sys; print(sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True).execute(sys.argv[2]).fetchone()[0])' "$2" "$3" 2>&1)"
  if [ "$got" = "$4" ]; then say "PASS $1: $got"; else say "FAIL $1: got $got, expected $4"; fi
}
# at_least NAME DB SQL MIN
at_least() {
  local got
  got="$(python3 -c 'import sqlite3,sys; print(sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True).execute(sys.argv[2]).fetchone()[0])' "$2" "$3" 2>&1)"
  if [[ "$got" =~ ^[0-9]+$ ]] && [ "$got" -ge "$4" ]; then say "PASS $1: $got"; else say "FAIL $1: got $got, expected >= $4"; fi
}
# log NAME: a run's whole output into logs.txt, its last lines into results.txt (at most 8 files come back).
log() {
  { echo "== $1"; cat "$work/$1.log"; } >>"$out/logs.txt"
  tail -3 "$work/$1.log" | tee -a "$results"
}
diagnostics() {
  python3 -c 'import sqlite3,sys
for r in sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True).execute("SELECT rank, severity, message FROM diagnostics ORDER BY rowid"): print("  ", *r)' "$1" 2>&1 | tee -a "$results"
}

if want smoke; then
say "== 1. cuda_smoke"
if nvcc -O2 -std=c++17 -arch=native -o "$work/cuda_smoke" "$pack/cuda_smoke.cu" 2>&1 | tee -a "$results"; then
  timeout 120 "$ms" record -q -o "$work/smoke" -- "$work/cuda_smoke" 2>&1 | tee "$work/smoke.log" | tee -a "$results"
  db="$work/smoke/job.msdb"
  # What cuda_smoke says it did ("missing" when it said nothing, which fails every check below).
  reported() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$work/smoke.log" | grep . || echo missing; }
  kernel="(SELECT value FROM enums WHERE enum_name = 'activity_kind' AND name = 'kernel')"
  check "kernels" "$db" "SELECT count(*) FROM activities WHERE kind = $kernel" \
    "$(reported kernels)"
  check "graph kernels" "$db" "SELECT count(*) FROM activities WHERE kind = $kernel AND graph_id IS NOT NULL" \
    "$(reported graph_kernels)"
  check "memcpys" "$db" "SELECT count(*) FROM activities WHERE kind = (SELECT value FROM enums WHERE enum_name = 'activity_kind' AND name = 'memcpy')" \
    "$(reported memcpys)"
  check "memsets" "$db" "SELECT count(*) FROM activities WHERE kind = (SELECT value FROM enums WHERE enum_name = 'activity_kind' AND name = 'memset')" \
    "$(reported memsets)"
  check "NVTX ranges" "$db" "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value LIKE 'smoke: %' AND r.end_ns > r.start_ns" \
    "$(reported nvtx_ranges)"
  check "NVTX marks" "$db" "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value = 'smoke: start' AND r.end_ns = r.start_ns" 1
  runtime="(SELECT value FROM enums WHERE enum_name = 'api_kind' AND name = 'runtime')"
  at_least "runtime API calls" "$db" "SELECT count(*) FROM api_calls WHERE kind = $runtime" 30
  # Every kernel, copy and memset has the API call that launched it (graph kernels: cudaGraphLaunch), and none
  # starts before that call.
  gpu_work="a.kind IN (1, 2, 3)"
  launch="(SELECT min(c.start_ns) FROM api_calls c WHERE c.rank = a.rank AND c.correlation = a.correlation)"
  launched="$(reported kernels) + $(reported memcpys) + $(reported memsets)"
  [[ "$launched" =~ ^[0-9]+\ \+\ [0-9]+\ \+\ [0-9]+$ ]] && launched=$((launched)) || launched=missing
  check "kernels, copies and memsets linked to their API call" "$db" \
    "SELECT count(*) FROM activities a WHERE $gpu_work AND $launch IS NOT NULL" "$launched"
  check "GPU work that starts before its API call" "$db" "SELECT count(*) FROM activities a WHERE $gpu_work AND a.start_ns < $launch" 0
  check "graph kernels launched by cudaGraphLaunch" "$db" \
    "SELECT count(*) FROM activities a JOIN api_calls c ON c.rank = a.rank AND c.correlation = a.correlation JOIN strings s ON s.id = c.name WHERE a.graph_id IS NOT NULL AND s.value LIKE 'cudaGraphLaunch%'" \
    "$(reported graph_kernels)"
  diagnostics "$db"
  "$ms" report "$db" >"$out/smoke_report.txt" 2>&1
  [ -f "$db" ] && cp "$db" "$out/smoke.msdb"
  # Driver calls through CUPTI's callbacks (MESHSCOPE_CUPTI_DRIVER_API=2): the same links must hold.
  MESHSCOPE_CUPTI_DRIVER_API=2 timeout 120 "$ms" record -q -o "$work/smoke_cb" -- "$work/cuda_smoke" >"$work/smoke_cb.log" 2>&1
  db="$work/smoke_cb/job.msdb"
  check "kernels, copies and memsets linked to their API call (driver calls by callback)" "$db" \
    "SELECT count(*) FROM activities a WHERE $gpu_work AND $launch IS NOT NULL" "$launched"
  check "GPU work that starts before its API call (driver calls by callback)" "$db" \
    "SELECT count(*) FROM activities a WHERE $gpu_work AND a.start_ns < $launch" 0
  check "API calls on threads of their own (driver calls by callback: must be 0)" "$db" \
    "SELECT count(*) FROM (SELECT tid FROM api_calls GROUP BY tid HAVING count(DISTINCT kind) = 1 AND min(kind) = 2)" 0
  diagnostics "$db"
fi

fi

steps=30
warmup=10
[ "$quick" = "--quick" ] && steps=10 && warmup=5
train=("$pack/train_step.py" --steps "$steps" --warmup "$warmup")
kernel="(SELECT value FROM enums WHERE enum_name = 'activity_kind' AND name = 'kernel')"

if want train; then
say "== 2. train_step under record"
timeout 180 "$ms" record -q -o "$work/eager" -- python3 "${train[@]}" >"$work/eager.log" 2>&1
log eager
db="$work/eager/job.msdb"
check "train_step NVTX ranges (eager)" "$db" "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value = 'train_step'" $((steps + warmup))
at_least "kernels (eager)" "$db" "SELECT count(*) FROM activities WHERE kind = $kernel" $((steps + warmup))
diagnostics "$db"

timeout 180 "$ms" record -q -o "$work/graphs" -- python3 "${train[@]}" --graphs >"$work/graphs.log" 2>&1
log graphs
db="$work/graphs/job.msdb"
at_least "graph-launched kernels" "$db" "SELECT count(*) FROM activities WHERE kind = $kernel AND graph_id IS NOT NULL" $((steps + warmup))
diagnostics "$db"

gpus="$(python3 -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 1)"
timeout 240 "$ms" record -q -o "$work/ddp" -- python3 -m torch.distributed.run --standalone --nproc-per-node "$gpus" \
  "${train[@]}" --ddp >"$work/ddp.log" 2>&1
log ddp
db="$work/ddp/job.msdb"
check "NCCL communicators seen by the plugin" "$db" "SELECT count(*) > 0 FROM process_groups WHERE backend = 'nccl'" 1
# torchrun's agent touches CUDA too, without a rank variable: the merge leaves its file out.
check "processes in the job profile (one per GPU)" "$db" "SELECT count(DISTINCT pid) FROM api_calls" "$gpus"
if [ "$gpus" -ge 2 ]; then
  at_least "NCCL collectives (DDP)" "$db" "SELECT count(*) FROM collectives" $((steps + warmup))
  at_least "collectives with GPU times from the plugin" "$db" "SELECT count(*) FROM collectives WHERE end_ns > start_ns" $((steps + warmup))
else
  # NCCL runs a one-rank collective locally (in place: nothing at all) before any task is queued, so the plugin
  # sees no collective; its NVTX range is still opened.
  say "SKIP NCCL collectives: one GPU (NCCL runs one-rank collectives locally, with no kernel or profiler event)"
  # (nccl_self, section 4, checks the plugin's operations on one GPU.)
fi
python3 -c 'import sqlite3,sys
db=sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in db.execute("SELECT * FROM process_groups"): print("  process group:", r)
for r in db.execute("SELECT * FROM collectives LIMIT 3"): print("  collective:", r)
print("  NCCL NVTX ranges:", db.execute("SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value LIKE \"%nccl%\" COLLATE NOCASE").fetchone()[0])' "$db" 2>&1 | tee -a "$results"
diagnostics "$db"
"$ms" report "$db" >"$out/ddp_report.txt" 2>&1
[ -f "$db" ] && cp "$db" "$out/ddp.msdb"

fi

if want overhead; then
say "== 3. overhead: tests/gpu/overhead.sh for ${GPU_OVERHEAD_SECONDS:-120} s (its own summary below)"
bash "$here/tests/gpu/overhead.sh" "$out" "${GPU_OVERHEAD_SECONDS:-120}" 2>&1 | grep -v '^round ' | tee -a "$results"
fi

if want nccl; then
say "== 4. NCCL point-to-point on one GPU (sends to itself: queued, launched and profiled like any other)"
nccl_lib="$(find $(python3 -c 'import site; print(*site.getsitepackages())' 2>/dev/null) /usr/local/cuda*/ \
  -name 'libnccl.so.2' 2>/dev/null | head -1)"
if [ -x "$pack/nccl_self" ] && [ -n "$nccl_lib" ]; then
  LD_LIBRARY_PATH="$(dirname "$nccl_lib"):$LD_LIBRARY_PATH" timeout 120 "$ms" record -q -o "$work/nccl" -- \
    "$pack/nccl_self" >"$work/nccl.log" 2>&1
  log nccl
  db="$work/nccl/job.msdb"
  reported() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$work/nccl.log" | grep . || echo missing; }
  op() { echo "(SELECT count(*) FROM collectives c JOIN strings s ON s.id = c.op WHERE c.source LIKE 'nccl_plugin%' AND s.value = '$1'${2:-})"; }
  check "sends recorded by the plugin" "$db" "SELECT $(op send)" "$(reported sends)"
  check "receives recorded by the plugin" "$db" "SELECT $(op recv)" "$(reported recvs)"
  # No kernel channel event comes for a send to itself: the plugin times it by its enqueue call, and the merge
  # gives it the GPU times of the NCCL kernel launched for it.
  timed=" AND c.source = 'nccl_plugin' AND c.activity_id IS NOT NULL AND c.end_ns > c.start_ns"
  check "sends and receives with their kernel's GPU times" "$db" "SELECT $(op send "$timed") + $(op recv "$timed")" \
    $(($(reported sends) + $(reported recvs)))
  check "bytes per send" "$db" "SELECT min(in_bytes) || '-' || max(in_bytes) FROM collectives c JOIN strings s ON s.id = c.op WHERE s.value = 'send'" \
    "$(reported bytes)-$(reported bytes)"
  python3 -c 'import sqlite3,sys
db=sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in db.execute("SELECT s.value, c.in_bytes, c.channels, (c.end_ns - c.start_ns) / 1e3, c.activity_id FROM collectives c JOIN strings s ON s.id = c.op ORDER BY c.start_ns"): print("  op, bytes, channels, GPU us, kernel:", *r)' "$db" 2>&1 | tee -a "$results"
  diagnostics "$db"
  "$ms" report "$db" >"$out/nccl_report.txt" 2>&1
  [ -f "$db" ] && cp "$db" "$out/nccl.msdb"
else
  say "SKIP NCCL on one GPU: ${nccl_lib:-no libnccl.so.2 found}; $pack/nccl_self $([ -x "$pack/nccl_self" ] || echo missing)"
fi
fi

rm -rf "$work"
say "== done"
