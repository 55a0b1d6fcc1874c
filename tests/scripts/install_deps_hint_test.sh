#!/usr/bin/env bash
# scripts/install_deps.sh as a user that is not root, with packages missing: it must print one
# command that runs both apt-get steps as root (sudo sh -c '...', or su -c '...' without sudo)
# and exit 1, never running apt-get itself. id, dpkg-query, sudo and apt-get are stubs on PATH,
# so this runs the same as root or not, and installs nothing. PATH is the stubs' directory alone.
set -u
script=$1
stubs=$(mktemp -d)
trap 'rm -rf "$stubs"' EXIT
mkdir "$stubs/with_sudo" "$stubs/without_sudo"
for dir in with_sudo without_sudo; do
  printf '#!/bin/sh\necho 1000\n' > "$stubs/$dir/id"
  # Every package is missing but cmake.
  printf '#!/bin/sh\n[ "$3" = cmake ] && printf "install ok installed"\nexit 0\n' > "$stubs/$dir/dpkg-query"
  printf '#!/bin/sh\necho "apt-get ran" >&2\nexit 99\n' > "$stubs/$dir/apt-get"
  ln -s "$(command -v grep)" "$stubs/$dir/grep"
done
printf '#!/bin/sh\nexit 99\n' > "$stubs/with_sudo/sudo"
chmod +x "$stubs"/*/*
status=0
check() {  # $1: stub dir, $2: the root prefix expected
  local out code
  out=$(PATH="$stubs/$1" "$BASH" "$script" 2>&1)
  code=$?
  if [ "$code" != 1 ]; then echo "$1: exit code $code, expected 1: $out"; status=1; fi
  local expected="cclmesh: install them as root, then run this again: $2 'apt-get update && apt-get install -y --no-install-recommends make g++"
  if ! grep -qF -- "$expected" <<<"$out"; then echo "$1: no line starting '$expected' in: $out"; status=1; fi
  if grep -q "apt-get ran" <<<"$out"; then echo "$1: apt-get ran"; status=1; fi
  if grep -q " cmake" <<<"$(grep 'apt-get install' <<<"$out")"; then echo "$1: names the installed cmake: $out"; status=1; fi
}
check with_sudo "sudo sh -c"
check without_sudo "su -c"
exit $status
