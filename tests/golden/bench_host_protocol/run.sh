#!/usr/bin/env bash
# Golden test of include/magpie/bench.hpp (host backend): builds example harnesses with g++
# -std=c++17 and drives them through every protocol mode (driver.py): standalone, correctness
# (manifest, npy files, generator, poison, pre/post mutation, trial errors, guard zones),
# timing (control-channel conversation), profile.
set -euo pipefail
SRC="${MAGPIE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}"
command -v g++ >/dev/null || { echo "skip: g++ not found"; exit 77; }
PY=python3
command -v "$PY" >/dev/null || { echo "skip: python3 not found"; exit 77; }
WORK="$(mktemp -d "${TMPDIR:-/tmp}/magpie_bench_host.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/bin" "$WORK/run"
build() {  # output-name source
  g++ -O2 -std=c++17 -Wall -Wextra -Werror -I"$SRC/include" "$2" -o "$WORK/bin/$1"
}
build vector_add "$SRC/examples/host/vector_add.cpp" &
build vector_add_offbyone "$SRC/examples/host/vector_add_offbyone.cpp" &
wait
build mutates_input "$SRC/tests/golden/gates_fixtures/mutates_input.cpp" &
build edge "$SRC/tests/golden/bench_host_protocol/edge.cpp" &
wait
build convert_dump "$SRC/tests/golden/bench_host_protocol/convert_dump.cpp"
"$PY" "$SRC/tests/golden/bench_host_protocol/driver.py" "$WORK/bin" "$WORK/run"
