#!/usr/bin/env bash
# A long-lived `cclmesh serve`'s resident set across client sessions (docs/remote_device.md,
# "A long-lived server's memory"): starts `cclmesh serve --system SYSTEM --port 0 --max-sim-time
# 100us`, runs SESSIONS `cclmesh run --device ... --op all_gather --size 1MiB` sessions one after
# another, one in every HANG_EVERY a 4 MiB all_gather that runs past the 100 us budget (the device
# then fails and the server resets it after the session), and prints the server's VmRSS every
# STEP sessions. A measurement, not a test: no threshold.
#
# usage: tools/bench/serve_rss.sh [CCLMESH_BIN] [SESSIONS=200] [STEP=20] [HANG_EVERY=10] [SYSTEM=t3k]
set -euo pipefail

bin=${1:-build/tools/cclmesh/cclmesh}
sessions=${2:-200}
step=${3:-20}
hang_every=${4:-10}
system=${5:-t3k}

work=$(mktemp -d)
"$bin" serve --system "$system" --port 0 --max-sim-time 100us >"$work/out" 2>"$work/err" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$work"' EXIT

for _ in $(seq 1 600); do
  [[ -s "$work/out" ]] && break
  sleep 0.1
done
port=$(sed -n '1s/.*://p' "$work/out")
[[ -n "$port" ]] || { echo "serve did not start: $(cat "$work/err")" >&2; exit 1; }

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$server/status"; }

echo "# cclmesh serve --system $system: VmRSS (KiB) after N client sessions (1 MiB all_gather each; one in ${hang_every} a 4 MiB one timing out, then a reset; 0: none)"
echo "# sessions  vmrss_kib"
printf '%10d  %9d\n' 0 "$(rss_kib)"
for ((n = 1; n <= sessions; ++n)); do
  size=1MiB
  # Midway between two samples, so that a sample follows a session that ran, not a reset.
  if ((hang_every > 0 && n % hang_every == hang_every / 2)); then size=4MiB; fi
  "$bin" run --device "127.0.0.1:$port" --op all_gather --size "$size" >/dev/null 2>&1 || true
  if ((n % step == 0)); then
    sleep 0.3  # the client is gone once it said goodbye; the server then ends the session and tidies up
    printf '%10d  %9d\n' "$n" "$(rss_kib)"
  fi
done
