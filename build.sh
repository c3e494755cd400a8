#!/usr/bin/env bash
# Sets up a Debian 12 machine for meshscope (installing only the Debian packages that are missing), builds it, and
# then runs it.
#
#   ./build.sh          set up, build, and run meshscope on its built-in default (the desktop front end on the
#                       bundled sample job when a display is available; otherwise the sample job's text report)
#   ./build.sh test     set up, build, and run the whole test suite with ctest
#   ./build.sh asan     the same tests in an AddressSanitizer + UndefinedBehaviorSanitizer build
#   ./build.sh build    set up and build only
#
# Builds go to build/ (or build-asan/). CI=true turns warnings into errors (and they stay errors in that build).
set -euo pipefail
cd "$(dirname "$0")"

mode="${1:-run}"
case "$mode" in run | test | asan | build) ;; *)
  echo "usage: ./build.sh [run|test|asan|build]" >&2
  exit 2
  ;;
esac

packages=(
  cmake g++ make pkg-config git
  libsqlite3-dev sqlite3 zlib1g-dev libdeflate-dev
  libsimdjson-dev libcli11-dev libfmt-dev libtomlplusplus-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libimgui-dev libglfw3-dev libgl-dev libstb-dev
  xvfb xauth
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "build.sh: installing missing Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
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
werror=()
if [ "${CI:-}" = "true" ]; then werror=(-DMESHSCOPE_WERROR=ON); fi

if [ "$mode" = asan ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  run_tests asan
  exit 0
fi

cmake --preset dev "${werror[@]}" >/dev/null
cmake --build --preset dev -j "$jobs"
case "$mode" in
  run) exec ./build/meshscope ;;
  test) run_tests dev ;;
  build) ;;
esac
