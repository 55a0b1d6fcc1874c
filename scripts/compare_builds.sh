#!/usr/bin/env bash
# Checks that two cclmesh binaries compute the same thing (e.g. the GCC and Clang fast builds, or
# a branch against main): for a fixed set of runs, the --json output (every field but wall_s,
# the host time), the text output, the stderr and the exit code must be identical, and so must
# the Perfetto trace of one run. Prints one line per run and exits 1 on the first difference
# set (all runs are still compared).
#
#   scripts/compare_builds.sh [--events-may-differ] CCLMESH_A CCLMESH_B ["RUN OPTIONS"...]
#
# --events-may-differ also leaves out the JSON's sim_events (for a change meant to run fewer
# events for the same results); each further argument is one more run's options, in quotes.
set -uo pipefail

ignored_keys='"wall_s"'
if [[ "${1:-}" == --events-may-differ ]]; then
  ignored_keys='"wall_s", "sim_events"'
  shift
fi
if [[ $# -lt 2 ]]; then
  echo "usage: scripts/compare_builds.sh [--events-may-differ] CCLMESH_A CCLMESH_B [\"RUN OPTIONS\"...]" >&2
  exit 2
fi
a="$1"
b="$2"
shift 2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

runs=(
  "--system t3k --op all_gather --size 16MiB"
  "--system t3k --op all_gather --size 8MiB --no-data"
  "--system t3k --op all_gather --size 8MiB --no-data --workers-per-link 1"
  "--system t3k --op all_gather --size 8MiB --no-data --ag-ring-algorithm multicast"
  "--system t3k --op reduce_scatter --topology line --size 4MiB"
  "--system t3k --op all_reduce --size 1MiB"
  "--system n300 --op all_gather --size 1MiB"
  "--system galaxy --cluster-axis 1 --topology line --op all_gather --size 1MiB --no-data"
  "--system t3k --op all_gather --mode legacy --size 4MiB"
  "--system t3k --op all_gather --mode legacy --links 2 --cluster-axis 0 --size 1MiB"
  "--system t3k --op all_to_all --size 1MiB"
  "--system t3k --op all_gather --size 2MiB --fault link-down:0-1@20us"
  "--system t3k --op all_gather --size 1MiB --fault drop:0.01:3"
  "--system torus:8x8 --cluster-axis 0 --op all_gather --size 4MiB --links 2 --no-data"
  "--system t3k --op reduce_scatter --mode legacy --size 4MiB --no-data"
  "--system t3k --op all_gather --size 4MiB --memory l1"
  "$@"
)

# The --json output without wall_s (and sim_events if asked), keys sorted: one canonical text.
strip_wall='import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in ('"$ignored_keys"')}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
text = sys.stdin.read()
try:
    print(json.dumps(strip(json.loads(text)), sort_keys=True, indent=1))
except ValueError:
    print(text)  # not JSON (an error report): compare it as it is'

run_one() {  # run_one BINARY TAG ARGS...
  local bin="$1" tag="$2"
  shift 2
  "$bin" run "$@" >"$work/$tag.txt" 2>"$work/$tag.err"
  echo "exit $?" >>"$work/$tag.txt"
  rm -f "$work/$tag.raw.json"
  "$bin" run "$@" --json "$work/$tag.raw.json" >"$work/$tag.json.out" 2>"$work/$tag.json.err"
  echo "exit $?" >>"$work/$tag.json.out"
  python3 -c "$strip_wall" <"$work/$tag.raw.json" >"$work/$tag.json" 2>&1
}

status=0
compare() {  # compare LABEL ARGS...
  local label="$1"
  shift
  run_one "$a" a "$@"
  run_one "$b" b "$@"
  local differ=""
  for f in txt err json json.out json.err; do
    cmp -s "$work/a.$f" "$work/b.$f" || differ="$differ $f"
  done
  local events
  events="$(python3 -c 'import json,sys
def count(path):
    try: return str(json.load(open(path)).get("sim_events", "-"))
    except Exception: return "-"
a, b = count(sys.argv[1]), count(sys.argv[2])
print(a if a == b else a + " -> " + b)' "$work/a.raw.json" "$work/b.raw.json" 2>/dev/null)"
  if [[ -z "$differ" ]]; then
    echo "same      $label ($(tail -1 "$work/a.txt"), sim_events $events)"
  else
    echo "DIFFERENT $label:$differ"
    for f in $differ; do diff "$work/a.$f" "$work/b.$f" | head -10; done
    status=1
  fi
}

for args in "${runs[@]}"; do
  # shellcheck disable=SC2086  # each entry is a list of options
  compare "$args" $args
done

# NoC statistics go to stderr; the windowed form too.
CCLMESH_NOC_STATS=0 CCLMESH_NOC_STATS_WINDOW=10:20 compare \
  "CCLMESH_NOC_STATS=0 CCLMESH_NOC_STATS_WINDOW=10:20 t3k all_gather 4MiB --no-data" \
  --system t3k --op all_gather --size 4MiB --no-data

"$a" run --system t3k --op all_gather --size 8MiB --no-data --trace "$work/a.trace.json" >/dev/null 2>&1
"$b" run --system t3k --op all_gather --size 8MiB --no-data --trace "$work/b.trace.json" >/dev/null 2>&1
if cmp -s "$work/a.trace.json" "$work/b.trace.json" && [[ -s "$work/a.trace.json" ]]; then
  echo "same      --trace of t3k all_gather 8MiB --no-data ($(wc -c <"$work/a.trace.json") bytes)"
else
  echo "DIFFERENT --trace of t3k all_gather 8MiB --no-data"
  status=1
fi
exit $status
