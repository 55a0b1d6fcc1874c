#!/usr/bin/env bash
# Installs the Debian 12 packages cclmesh builds with, and nothing else.
# Idempotent: it asks dpkg what is missing and installs only that.
# As root it runs apt-get itself; otherwise it prints one command that runs both apt-get steps as
# root (through sudo, or su where sudo is not installed) and exits 1.
#
#   scripts/install_deps.sh          what `make build / test / test-asan` need (g++ brings the
#                                    ASan / UBSan runtimes: libasan8, libubsan1)
#   scripts/install_deps.sh fuzz     and clang with the libFuzzer and sanitizer runtimes
#                                    (`make fuzz`; Debian 12 ships them apart from clang, in
#                                    libclang-rt-14-dev, which --no-install-recommends skips)
set -euo pipefail

packages=(
  cmake make g++ ninja-build
  libboost-dev libboost-context-dev libboost-graph-dev
  libspdlog-dev libfmt-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)
case "${1:-}" in
  "") ;;
  fuzz) packages+=(clang libclang-rt-14-dev) ;;
  *) echo "cclmesh: install_deps.sh: unknown group '$1'; accepted: fuzz (or nothing)" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  # One root shell for both steps: "sudo apt-get update && apt-get install ..." would run the
  # install as this user. Package names need no quoting inside the single quotes.
  install_line="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
  if command -v sudo >/dev/null 2>&1; then
    root_line="sudo sh -c '$install_line'"
  else
    root_line="su -c '$install_line'"
  fi
  echo "cclmesh: missing packages: ${missing[*]}" >&2
  echo "cclmesh: install them as root, then run this again: $root_line" >&2
  exit 1
fi

echo "cclmesh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
