#!/usr/bin/env bash
# Usage: check_progress.sh -- CCLMESH run ARGS...
# `cclmesh run`'s progress report (tools/cclmesh/progress_line.hpp) changes nothing the run
# writes: with --progress (a report every few thousand events) stderr has report lines and
# nothing else, and stdout, --json (but its wall-clock "wall_s" fields) and --trace are the same as
# without it; the reports themselves are the same run after run (driven by the event count, not a
# clock). Without a terminal and without --progress, and with --no-progress, stderr is empty. On
# a terminal (script(1)'s pty), the default is one line rewritten in place and erased before
# the table.
set -u
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

run_case() {  # NAME EXTRA-ARGS...
  local name=$1
  shift
  local dir="$work/$name"
  mkdir -p "$dir"
  "${cmd[@]}" --json "$dir/run.json" --trace "$dir/run.trace.json" "$@" >"$dir/stdout" 2>"$dir/stderr"
  echo $? >"$dir/code"
  grep -v '"wall_s":' "$dir/run.json" >"$dir/run.nowall.json" && rm "$dir/run.json"
  if [ "$(cat "$dir/code")" != 0 ]; then
    echo "$name: exit code $(cat "$dir/code"), expected 0"
    cat "$dir/stderr"
    status=1
  fi
}

cmd=("$@")
run_case plain
run_case no_progress --no-progress
run_case progress --progress --progress-every 5000
run_case progress_again --progress --progress-every 5000

for name in plain no_progress; do
  if [ -s "$work/$name/stderr" ]; then
    echo "$name: stderr is not a terminal and --progress was not given, yet it has:"
    cat "$work/$name/stderr"
    status=1
  fi
done
lines=$(wc -l <"$work/progress/stderr")
if [ "$lines" -lt 1 ]; then
  echo "--progress --progress-every 5000: no report on stderr"
  status=1
fi
if grep -Ev '^cclmesh: simulated [0-9]+\.[0-9]{2} us, [0-9]+(\.[0-9]+[MG])? events$' "$work/progress/stderr"; then
  echo "--progress: the lines above are not progress reports"
  status=1
fi
if ! diff "$work/progress/stderr" "$work/progress_again/stderr"; then
  echo "--progress: two runs reported differently (above)"
  status=1
fi
# stderr checked above: the rest is compared.
rm -f "$work"/*/stderr
for name in no_progress progress progress_again; do
  if ! diff -ru "$work/plain" "$work/$name"; then
    echo "$name: stdout, --json or --trace differ from the run without it (above)"
    status=1
  fi
done

# A report that cannot be written (stderr closed) changes nothing either: fmt::print threw inside
# the engine's loop, and the run ended as a simulation error (exit 3).
"${cmd[@]}" --progress --progress-every 5000 >"$work/closed_stdout" 2>&-
code=$?
if [ "$code" != 0 ] || ! diff "$work/plain/stdout" "$work/closed_stdout"; then
  echo "--progress with stderr closed: exit code $code, expected 0 and the table of a run without it"
  status=1
fi

# A terminal: script(1) runs the command on a pty, stdout and stderr both to it.
if command -v script >/dev/null; then
  printf -v quoted '%q ' "${cmd[@]}" --progress-every 5000
  script -qec "$quoted" /dev/null >"$work/tty" 2>&1
  if ! grep -q $'\rcclmesh: simulated ' "$work/tty"; then
    echo "on a terminal: no progress line rewritten in place (\\r); got:"
    cat -A "$work/tty" | head -5
    status=1
  fi
  # The table's title line starts clean: the progress line was erased (\r, spaces, \r) before it.
  if ! tr -d '\n' <"$work/tty" | grep -qE $'\r +\r# cclmesh: '; then
    echo "on a terminal: the progress line was not erased before the table; got:"
    cat -A "$work/tty" | head -5
    status=1
  fi
  printf -v quoted '%q ' "${cmd[@]}" --progress-every 5000 --no-progress
  script -qec "$quoted" /dev/null >"$work/tty_no_progress" 2>&1
  if grep -q 'cclmesh: simulated' "$work/tty_no_progress"; then
    echo "on a terminal with --no-progress: a progress report was printed"
    status=1
  fi
fi
exit $status
