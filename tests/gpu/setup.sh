# Sourced by tests/gpu/run.sh and tests/gpu/overhead.sh on the GPU machine: finds the packed build (.gpu/ from
# tests/gpu/pack.sh), the libcupti this machine's PyTorch loads, and sets the library path. Defines `ms` (the
# packed meshscope), `pack` and `work` (a scratch folder), and the library path every run below inherits.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
pack="$here/.gpu"
[ -x "$pack/meshscope" ] || { echo "$(basename "$0"): $pack/meshscope missing: run tests/gpu/pack.sh first" >&2; exit 2; }
work="$(mktemp -d)"

# The libcupti this process's PyTorch loads: the CUDA collector must use the same one (two copies of CUPTI in one
# process do not work), so its folder goes first.
torch_cupti="$(python3 - <<'PYTHON' 2>/dev/null
import ctypes, torch
torch.cuda.init()
with open("/proc/self/maps") as maps:
    paths = sorted({l.split()[-1] for l in maps if "libcupti.so" in l})
print(paths[0] if paths else "")
PYTHON
)"
if [ -z "$torch_cupti" ]; then
  sites="$(python3 -c 'import site; print(*site.getsitepackages())' 2>/dev/null)"
  # shellcheck disable=SC2086
  torch_cupti="$(find $sites -name 'libcupti.so.1[0-9]' 2>/dev/null | head -1)"
fi
[ -z "$torch_cupti" ] && torch_cupti="$(find /usr/local/cuda*/ -name 'libcupti.so.1[0-9]' 2>/dev/null | head -1)"
cupti_dir="$(dirname "${torch_cupti:-/usr/local/cuda/lib64/libcupti.so}")"
# Only the packed libraries this machine lacks go on the path: its own SQLite, zlib, ... stay the ones its Python
# and PyTorch were built with.
mkdir -p "$work/lib"
for lib in "$pack"/lib/*; do
  ldconfig -p | grep -q "^[[:space:]]*$(basename "$lib") " || ln -s "$lib" "$work/lib/"
done
export LD_LIBRARY_PATH="$cupti_dir:$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
export PATH="$PATH:/usr/local/cuda/bin"
ms="$pack/meshscope"
