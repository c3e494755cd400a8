#!/usr/bin/env bash
# build.sh's refusals: on a machine that is not Debian-like, and without root and sudo
# while packages are missing, it prints one line saying what to install by hand and exits 1, before building.
# The machines are played by a PATH of stand-ins (no real apt-get is ever run).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

expect_refusal() { # NAME PATTERN PATH
  local name=$1 pattern=$2 path=$3 out status lines
  out=$(PATH="$path" /bin/bash "$repo/build.sh" build 2>&1)
  status=$?
  lines=$(printf '%s\n' "$out" | grep -c .)
  if [ "$status" -ne 1 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$out" | grep -q -- "$pattern"; then
    echo "FAIL $name: exit $status, $lines lines: $out"
    failures=$((failures + 1))
  else
    echo "ok   $name: $out"
  fi
}

# Not Debian-like: the usual tools, but no dpkg-query and no apt-get.
mkdir -p "$tmp/plain"
for tool in dirname grep id nproc sed cat; do ln -s "$(command -v $tool)" "$tmp/plain/$tool"; done
expect_refusal "not Debian-like" "not a Debian-like system" "$tmp/plain"

# Debian-like, a package missing, not root and no sudo.
mkdir -p "$tmp/nosudo"
for tool in dirname grep nproc sed cat; do ln -s "$(command -v $tool)" "$tmp/nosudo/$tool"; done
printf '#!/bin/sh\nexit 1\n' > "$tmp/nosudo/dpkg-query"                 # nothing is installed
printf '#!/bin/sh\necho "apt-get must not run" >&2; exit 99\n' > "$tmp/nosudo/apt-get"
printf '#!/bin/sh\n[ "$1" = -u ] && echo 1000 || echo uid=1000\n' > "$tmp/nosudo/id"
chmod +x "$tmp/nosudo/"*
expect_refusal "no root, no sudo" "neither root nor sudo" "$tmp/nosudo"

exit $((failures > 0))
