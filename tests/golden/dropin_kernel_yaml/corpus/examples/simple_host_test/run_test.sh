#!/usr/bin/env bash
# Magpie-style testcase: runs the built kernel (KERNEL_BIN, default ./vector_add) and checks its
# output; exit 0 = correct. Records where it ran (Magpie runs it inside working_dir).
set -euo pipefail
bin="${KERNEL_BIN:-./vector_add}"
pwd > ran_in.txt
expected=$(check_tool 65536)          # on PATH through the entry's env: (PATH is prepended)
got=$("$bin" 65536)
[ "$got" = "$expected" ] || { echo "wrong result: $got != $expected" >&2; exit 1; }
echo "ok $got ${DROPIN_LABEL:-}"
