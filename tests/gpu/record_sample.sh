#!/usr/bin/env bash
# Records the real job shipped in assets/sample/: tests/gpu/train_step.py (an 8-layer, width-1024 bf16 transformer,
# batch 8 x 512 tokens, AdamW), 2 warm-up and 6 timed steps, each an NVTX range "train_step", under
# `meshscope record` on one GPU; once plainly and once with PyTorch's per-operator NVTX ranges (emit_nvtx with
# shapes). Checks what the profiles hold and copies both job profiles to OUT_DIR.
#
#   bash tests/gpu/record_sample.sh OUT_DIR
set -uo pipefail
out="${1:?usage: record_sample.sh OUT_DIR}"
source "$(dirname "$0")/setup.sh"
mkdir -p "$out"
log="$out/sample_log.txt"
: >"$log"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  echo "libcupti used: ${torch_cupti:-not found}; packed libraries used: $(ls "$work/lib" | tr '\n' ' ')"
} 2>&1 | tee -a "$log"
for variant in plain emit-nvtx; do
  flag=()
  [ "$variant" = emit-nvtx ] && flag=(--emit-nvtx)
  echo "== $variant" | tee -a "$log"
  timeout 120 "$ms" record -o "$work/$variant" -- python3 "$here/tests/gpu/train_step.py" --steps 6 --warmup 2 \
    "${flag[@]}" 2>&1 | tee -a "$log"
  db="$work/$variant/job.msdb"
  ls -la "$work/$variant" 2>&1 | tee -a "$log"
  python3 -c 'import sqlite3,sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for table in ("activities", "api_calls", "ranges", "diagnostics", "strings"):
    print(" ", table, db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
print("  train_step ranges", db.execute("SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value = ?", ("train_step",)).fetchone()[0])
for r in db.execute("SELECT severity, message FROM diagnostics ORDER BY rowid LIMIT 20"): print("  diagnostic:", *r)
for r in db.execute("SELECT s.value FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value LIKE ? LIMIT 3", ("aten::%",)): print("  operator range:", *r)' \
    "$db" 2>&1 | tee -a "$log"
  "$ms" report "$db" >>"$log" 2>&1
  [ -f "$db" ] && cp "$db" "$out/sample_$variant.msdb"
done
rm -rf "$work"
