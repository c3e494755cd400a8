#!/usr/bin/env bash
# Sets up a Debian 12 machine for meshscope (installing only the Debian packages that are missing), builds it, and
# then runs it.
#
#   ./build.sh          set up, build, and run meshscope on its built-in default (the desktop front end on the
#                       bundled sample job when a display is available; otherwise the sample job's text report)
#   ./build.sh test     set up, build, and run the whole test suite with ctest
#   ./build.sh asan     the same tests in an AddressSanitizer + UndefinedBehaviorSanitizer build
#   ./build.sh build    set up and build only
#   ./build.sh package  set up, build a Release and write a Debian package (build-package/meshscope_*.deb)
#   ./build.sh fuzz [SECONDS]  set up clang and libFuzzer, build only the fuzz harnesses (build-fuzz/) and run each
#                       for SECONDS (default 60) from the seed corpora (tests/fuzz/run_fuzzers.sh; fails on a finding)
#
# Builds go to build/ (warnings are errors), build-asan/, build-fuzz/ and build-package/. Compiles go through
# ccache: CI and the fresh-machine check build the same sources in the same folder names, and hit its cache.
set -euo pipefail
cd "$(dirname "$0")"

mode="${1:-run}"
case "$mode" in run | test | asan | build | package | fuzz) ;; *)
  echo "usage: ./build.sh [run|test|asan|build|package|fuzz [SECONDS]]" >&2
  exit 2
  ;;
esac

# What meshscope needs to build and test (build), and what the program itself needs at run time (run: the font
# of the desktop front end, and xvfb-run for screenshots without a display).
packages=(
  cmake g++ make pkg-config git ccache
  libsqlite3-dev sqlite3 zlib1g-dev libdeflate-dev
  libsimdjson-dev libcli11-dev libfmt-dev libtomlplusplus-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libimgui-dev libglfw3-dev libgl-dev libstb-dev
  fonts-dejavu-core xvfb xauth xdotool
)
if [ "$mode" = package ]; then packages+=(dpkg-dev file); fi
# libFuzzer comes with clang's runtime libraries (a recommendation of clang-14 that --no-install-recommends skips).
if [ "$mode" = fuzz ]; then packages+=(clang-14 libclang-rt-14-dev); fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "build.sh: this is not a Debian-like system (no dpkg-query/apt-get); install by hand the equivalents of the" \
    "Debian 12 packages: ${packages[*]}; then run: cmake --preset dev && cmake --build --preset dev" >&2
  exit 1
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "build.sh: missing Debian packages and neither root nor sudo to install them; as root, run:" \
        "apt-get install ${missing[*]}" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  echo "build.sh: installing missing Debian packages: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs="$(nproc)"

# Runs a test preset; when tests fail, runs the failed ones again on their own so that their output ends the log
# (where a CI excerpt shows it). The run still fails, whatever the second try gives.
run_tests() {
  if ! ctest --preset "$1" -j "$jobs"; then
    echo "build.sh: the failed tests again, one at a time, with their output:"
    ctest --preset "$1" --rerun-failed --output-on-failure || true
    exit 8
  fi
}

case "$mode" in
  fuzz)
    exec tests/fuzz/run_fuzzers.sh "${2:-60}"
    ;;
  asan)
    cmake --preset asan >/dev/null
    cmake --build --preset asan -j "$jobs"
    run_tests asan
    ;;
  package)
    cmake --preset package >/dev/null
    cmake --build --preset package -j "$jobs"
    (cd build-package && cpack -G DEB)
    ls build-package/meshscope_*.deb
    ;;
  *)
    preset=dev dir=build
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset" -j "$jobs"
    case "$mode" in
      run) exec "./$dir/meshscope" ;;
      test) run_tests "$preset" ;;
      build) ;;
    esac
    ;;
esac
