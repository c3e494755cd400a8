#!/usr/bin/env bash
# Proves the README on machines that have nothing but stock Debian 12 and the CUDA toolkit (needs root and Debian's
# package mirror; about 15-25 minutes on 2 cores):
#   1. a fresh root runs the README's two quick-start commands (../shared/tools/fresh-machine.sh);
#   2. the same root builds the Debian package (./build.sh package);
#   3. a second fresh root installs that package with apt and, with no source tree present, runs `meshscope info`
#      on the installed sample job and `meshscope predict`.
# Usage: tools/fresh-machine-check.sh [WORKDIR]   (default: a new folder under /tmp; roots are kept for reuse)
set -euo pipefail
cd "$(dirname "$0")/.."
fresh=../shared/tools/fresh-machine.sh
if [ ! -x "$fresh" ]; then
  echo "fresh-machine-check: $fresh not found (the shared folder must sit beside the repository)" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-machine-check: needs root (debootstrap, chroot, bind mounts)" >&2
  exit 1
fi
work=${1:-$(mktemp -d /tmp/meshscope-fresh.XXXXXX)}
mkdir -p "$work"
echo "fresh-machine-check: roots in $work"

# The build root compiles through this machine's compiler cache (build.sh installs ccache there too): the same
# sources built in the same folder names hit what CI's earlier steps compiled. A cache serves compiles only: a
# package or header missing from the fresh root still fails its configure or compile.
cache=""
if command -v ccache >/dev/null; then
  cache=$(ccache --get-config cache_dir 2>/dev/null || true)
fi
if [ -n "$cache" ]; then
  mkdir -p "$cache" "$work/build-root/root/.cache/ccache"
  mountpoint -q "$work/build-root/root/.cache/ccache" || mount --bind "$cache" "$work/build-root/root/.cache/ccache"
  trap 'umount "$work/build-root/root/.cache/ccache" 2>/dev/null || true' EXIT
  echo "fresh-machine-check: the build root uses the compiler cache $cache"
fi

echo "== 1. the README's quick start on a fresh Debian 12 root"
"$fresh" "$work/build-root" .

echo "== 2. the Debian package, built in that root"
"$fresh" "$work/build-root" . "./build.sh package && cp build-package/meshscope_*.deb /tmp/"
debs=("$work"/build-root/tmp/meshscope_*.deb)
[ -f "${debs[0]}" ] || {
  echo "fresh-machine-check: no .deb was built" >&2
  exit 1
}

echo "== 3. installing ${debs[0]##*/} on a second fresh root, with no source tree"
FRESH_FILES="${debs[0]}" "$fresh" "$work/install-root" . \
  "sh -c 'cd / && rm -rf /proj && apt-get update -qq \
   && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/${debs[0]##*/} \
   && meshscope --version \
   && meshscope info /usr/share/meshscope/assets/sample/sample_job.msdb \
   && meshscope report /usr/share/meshscope/assets/sample/sample_job.msdb > /dev/null \
   && meshscope import /usr/share/meshscope/assets/sample/sample_job -o /tmp/reimported.msdb \
   && meshscope predict --model llama3-70b --hardware h100-sxm --gpus 64 --tp 8 --pp 4 --global-batch 512 \
   && meshscope record --help > /dev/null && ls /usr/lib/meshscope/'"
echo "fresh-machine-check: all three passed"
