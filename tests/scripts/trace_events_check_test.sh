#!/usr/bin/env bash
# Runs cclmesh with --trace on a completed run, a legacy run and a hung run (exit 3), and checks
# each trace with check_trace_events.py (an independent reader of the trace-event format).
# Usage: trace_events_check_test.sh CCLMESH CHECKER PYTHON
set -u
cclmesh=$1 checker=$2 python=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
check() {  # expected_exit name args...
  local expected=$1 name=$2
  shift 2
  "$cclmesh" run "$@" --trace "$dir/$name.json" >"$dir/$name.out" 2>&1
  local got=$?
  if [[ $got != "$expected" ]]; then echo "$name: exit $got, expected $expected"; status=1; return; fi
  "$python" "$checker" "$dir/$name.json" || status=1
}
check 0 fabric --system t3k --op all_gather --size 256KiB
check 0 legacy --system t3k --op all_gather --size 256KiB --mode legacy --trace-limit 2
check 3 hang --system t3k --op all_gather --size 1MiB --fault link-down:0-2@12us
exit $status
