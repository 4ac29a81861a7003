#!/usr/bin/env bash
# magpie ($MAGPIE_REAL_BIN) whose kernels log the GPU they were bound to into <-o DIR>.devlog
# (MAGPIE_TEST_DEVICE_LOG, read by sleepy.cpp.in): one log per compare of a script that runs
# several (tests/gpu/multi_gpu_x2.sh in the compare_workers and gpu_select_busy goldens).
prev=
for a in "$@"; do
  [ "$prev" = -o ] && export MAGPIE_TEST_DEVICE_LOG="$a.devlog"
  prev="$a"
done
real="${MAGPIE_REAL_BIN:?MAGPIE_REAL_BIN is not set}"
[ "$(realpath "$real")" != "$(realpath "$0")" ] || { echo "magpie_logged.sh: MAGPIE_REAL_BIN is this wrapper" >&2; exit 2; }
exec "$real" "$@"
