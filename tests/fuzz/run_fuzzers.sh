#!/usr/bin/env bash
# Runs every libFuzzer harness of tests/fuzz for SECONDS seconds each, from the checked-in seed corpora, and
# fails when any of them finds something (a crash, a sanitizer report, a timeout, an out-of-memory, or an
# invariant a harness checks). See docs/RELIABILITY.md.
#
#   tests/fuzz/run_fuzzers.sh [SECONDS] [BUILD_DIR]
#
# Runs add up: each starts from the corpus earlier runs kept in the repository (tests/fuzz/grown/HARNESS/). With
# MESHSCOPE_FUZZ_KEEP=1 a run merges what it found into that folder (libFuzzer's -merge=1: only inputs that add
# coverage) and appends its executions and coverage to tests/fuzz/runs.tsv, to be committed (docs/RELIABILITY.md
# "Fuzzers" sums them per harness).
#
# MESHSCOPE_FUZZ_ONLY=HARNESS runs one harness alone.
#
# SECONDS defaults to 60. BUILD_DIR defaults to build-fuzz: configured with the `fuzz` preset (clang-14 and
# libclang-rt-14-dev, Debian packages) when it does not exist yet, and the harnesses (only) are built there.
# Findings are kept in BUILD_DIR/fuzz-findings/HARNESS/ with the harness's log; the corpus each run grows is
# kept in BUILD_DIR/fuzz-corpus/HARNESS/ (the seeds stay as they are). Inputs that once found a defect are kept
# in tests/fuzz/regressions/HARNESS/ and replayed by every run. Reproduce a finding with
#   BUILD_DIR/tests/fuzz/meshscope_fuzz_HARNESS FINDING_FILE
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${1:-60}"
build="${2:-$root/build-fuzz}"
case "$seconds" in '' | *[!0-9]*) echo "run_fuzzers.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;; esac

if [ ! -f "$build/CMakeCache.txt" ]; then
  if [ "$build" != "$root/build-fuzz" ]; then
    echo "run_fuzzers.sh: $build is not a configured build folder (configure it with cmake --preset fuzz)" >&2
    exit 2
  fi
  cmake --preset fuzz -S "$root" >/dev/null
fi
cmake --build "$build" --target meshscope_fuzzers -j "$(nproc)" >/dev/null
# The commit the harnesses were built from (uncommitted changes marked), for tests/fuzz/runs.tsv.
built_from="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no -- ':!tests/fuzz' 2>/dev/null)" ]; then
  built_from="$built_from+changes"
fi

# harness  seed folder  longest input  dictionary
harnesses=(
  "kineto_memory kineto 65536 kineto.dict"
  "kineto_streaming kineto 65536 kineto.dict"
  "nsys nsys 131072 sql.dict"
  "profile profile 131072 sql.dict"
  "profile_memory profile 131072 sql.dict"
  "merge merge 4096 sql.dict"
  "summary_merge summary_merge 4096 sql.dict"
  "summary_tables summary_merge 4096 sql.dict"
)

failed=0
for entry in "${harnesses[@]}"; do
  read -r name seeds max_len dict <<<"$entry"
  # MESHSCOPE_FUZZ_ONLY=NAME runs that harness alone (a long round of one harness).
  if [ -n "${MESHSCOPE_FUZZ_ONLY:-}" ] && [ "$name" != "$MESHSCOPE_FUZZ_ONLY" ]; then continue; fi
  binary="$build/tests/fuzz/meshscope_fuzz_$name"
  corpus="$build/fuzz-corpus/$name"
  findings="$build/fuzz-findings/$name"
  mkdir -p "$corpus" "$findings"
  log="$findings/run.log"
  # Inputs that once found a defect (tests/fuzz/regressions/HARNESS/) are replayed first, with the seeds.
  grown="$root/tests/fuzz/grown/$name"
  inputs=("$corpus" "$root/tests/fuzz/corpus/$seeds")
  if [ -d "$grown" ]; then inputs+=("$grown"); fi
  # A harness that reads another's inputs (profile_memory: profile's; summary_tables: summary_merge's) starts
  # from what that one kept too.
  if [ "$seeds" != "$name" ] && [ -d "$root/tests/fuzz/grown/$seeds" ]; then inputs+=("$root/tests/fuzz/grown/$seeds"); fi
  if [ -d "$root/tests/fuzz/regressions/$name" ]; then inputs+=("$root/tests/fuzz/regressions/$name"); fi
  status=0
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    "$binary" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len="$max_len" \
    -dict="$root/tests/fuzz/$dict" -artifact_prefix="$findings/" -print_final_stats=1 \
    "${inputs[@]}" >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  time_s="$(sed -n 's/^stat::.*total_time.*: *//p' "$log" | tail -1)"
  if [ "$status" -ne 0 ]; then
    failed=1
    echo "FAIL $name: exit $status after ${runs:-?} executions; findings in $findings" >&2
    grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*deadly signal|.*Test unit written|meshscope wrote|an error that)" \
      "$log" | head -8 >&2 || true
  else
    echo "ok   $name: ${runs:-?} executions in ${seconds} s, corpus $(ls "$corpus" | wc -l) inputs"
  fi
  if [ "${MESHSCOPE_FUZZ_KEEP:-0}" = 1 ]; then
    # Coverage as libFuzzer last reported it: "#N ... cov: C ft: F corp: ...".
    coverage="$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 | sed -E 's/.*cov: ([0-9]+) ft: ([0-9]+).*/\1\t\2/')"
    merged="$build/fuzz-merged/$name"
    rm -rf "$merged"
    mkdir -p "$merged" "$grown"
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}" \
      "$binary" -merge=1 -timeout=20 -rss_limit_mb=4096 -max_len="$max_len" "$merged" "$grown" "$corpus" \
      >"$findings/merge.log" 2>&1 || echo "note $name: merging the corpus failed (see $findings/merge.log)" >&2
    if [ -n "$(ls -A "$merged")" ]; then
      rm -rf "$grown"
      mv "$merged" "$grown"
    fi
    if [ ! -f "$root/tests/fuzz/runs.tsv" ]; then
      printf 'date\tcommit\tharness\tseconds\texecutions\tcoverage\tfeatures\tkept_inputs\n' >"$root/tests/fuzz/runs.tsv"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%MZ)" \
      "$built_from" "$name" "$seconds" "${runs:-0}" \
      "${coverage:-$'?\t?'}" "$(ls "$grown" | wc -l)" >>"$root/tests/fuzz/runs.tsv"
  fi
done
exit "$failed"
