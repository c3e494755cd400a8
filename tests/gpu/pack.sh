#!/usr/bin/env bash
# Packs what a GPU machine needs to check the collectors, into .gpu/ (ignored by git): a Release build of
# `meshscope` without the desktop front end, both collector libraries, and the shared libraries they use that a
# machine with only CUDA and PyTorch may lack (SQLite, fmt, simdjson, ...). The C and C++ runtimes and the CUDA
# libraries are the machine's own. Then, on the GPU machine (the device tool carries .gpu):
#
#   tests/gpu/pack.sh                      # here
#   bash tests/gpu/run.sh "$OUT"           # there, with .gpu carried
set -euo pipefail
cd "$(dirname "$0")/../.."

cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DMESHSCOPE_GUI=OFF -DMESHSCOPE_TESTS=OFF >/dev/null
cmake --build build-gpu -j "$(nproc)" --target meshscope meshscope_cupti meshscope_nccl

rm -rf .gpu
mkdir -p .gpu/lib
cp build-gpu/meshscope build-gpu/libmeshscope_cupti.so build-gpu/libnccl-profiler-meshscope.so .gpu/
cp tests/gpu/cuda_smoke.cu tests/gpu/train_step.py .gpu/
# The one-GPU NCCL program, against the toolkit's NCCL (its header is not on every GPU machine).
cuda=/usr/local/cuda
nccl_header="$(find "$cuda/" "$cuda/include/" -maxdepth 3 -name nccl.h 2>/dev/null | head -1)"
nccl_lib="$(find "$cuda/" "$cuda/lib64/" -maxdepth 3 -name 'libnccl.so*' 2>/dev/null | head -1)"
if [ -n "$nccl_header" ] && [ -n "$nccl_lib" ]; then
  g++ -O2 -std=c++17 -Wall -Wextra -I"$cuda/include" -I"$(dirname "$nccl_header")" -o .gpu/nccl_self \
    tests/gpu/nccl_self.cpp -L"$cuda/lib64" -L"$(dirname "$nccl_lib")" -lcudart -lnccl
else
  echo "pack.sh: no NCCL in $cuda: run.sh will skip the one-GPU NCCL check" >&2
fi

# The libraries the three need, less the ones every Linux or CUDA machine has its own (newer) copy of.
for binary in .gpu/meshscope .gpu/libmeshscope_cupti.so .gpu/libnccl-profiler-meshscope.so; do
  ldd "$binary" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    case "$name" in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | libutil.so* | ld-linux* | libstdc++.so* | libgcc_s.so*) ;;
    libcuda.so* | libcupti.so* | libnccl.so* | libcudart.so*) ;;
    *) cp -L "$path" ".gpu/lib/$name" ;;
    esac
  done
done
du -sh .gpu
ls .gpu .gpu/lib
