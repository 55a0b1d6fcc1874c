#!/usr/bin/env bash
# Usage: check_golden.sh EXPECTED_FILE EXPECTED_EXIT_CODE -- COMMAND ARGS...
# Runs the command and compares its stdout+stderr and exit code with the golden file.
# CCLMESH_UPDATE_GOLDEN=1 rewrites the golden file instead.
set -u
expected_file=$1
expected_code=$2
shift 3
actual=$("$@" 2>&1)
code=$?
if [ "${CCLMESH_UPDATE_GOLDEN:-0}" = 1 ]; then
  printf '%s\n' "$actual" > "$expected_file"
  exit 0
fi
status=0
if [ "$code" != "$expected_code" ]; then
  echo "exit code $code, expected $expected_code"
  status=1
fi
if ! diff -u "$expected_file" <(printf '%s\n' "$actual"); then
  status=1
fi
exit $status
