#!/usr/bin/env bash
# Usage: check_sweep_jobs.sh EXPECTED_EXIT_CODE JOBS -- CCLMESH sweep ARGS...
# Runs the sweep with -j 1 and with -j JOBS and checks that both exit with EXPECTED_EXIT_CODE and
# print the same stdout and stderr and write the same --csv, --plot and --json (but for the
# wall-clock "wall_s" fields), or that neither wrote them.
set -u
expected_code=$1
jobs=$2
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
for j in 1 "$jobs"; do
  dir="$work/j$j"
  mkdir -p "$dir"
  "$@" -j "$j" --csv "$dir/rows.csv" --json "$dir/rows.json" --plot "$dir/busbw.svg" >"$dir/stdout" 2>"$dir/stderr"
  echo $? >"$dir/code"
  if [ -f "$dir/rows.json" ]; then
    grep -v '"wall_s":' "$dir/rows.json" >"$dir/rows.nowall.json"
    rm "$dir/rows.json"
  fi
  code=$(cat "$dir/code")
  if [ "$code" != "$expected_code" ]; then
    echo "-j $j: exit code $code, expected $expected_code"
    cat "$dir/stderr"
    status=1
  fi
done

if ! diff -ru "$work/j1" "$work/j$jobs"; then
  echo "-j 1 and -j $jobs differ (above)"
  status=1
fi
if [ ! -s "$work/j1/stdout" ] && [ ! -s "$work/j1/stderr" ]; then
  echo "the sweep printed nothing"
  status=1
fi
exit $status
