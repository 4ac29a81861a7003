#!/usr/bin/env bash
# Compile/link checks of the CUDA backend of include/magpie/bench.hpp with nvcc (sm_90):
# the vector_add example (linked, then run: without a GPU it must fail cleanly, exit 2), every
# 16-bit type spelling (cuda_types.cu), the host-compiler CUDA mode (-DMAGPIE_BENCH_CUDA), and
# the runtime dependencies of libmagpie_cupti.so when the build has it. Skips without nvcc.
set -euo pipefail
SRC="${MAGPIE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}"
BUILD="${MAGPIE_BUILD_DIR:-}"
NVCC="$(command -v nvcc || true)"
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
[ -n "$NVCC" ] || { echo "skip: nvcc not found"; exit 77; }
CUDA_ROOT="$(cd "$(dirname "$(readlink -f "$NVCC")")/.." && pwd)"
# The include/library directories nvcc itself uses (targets/<arch>/include on toolkit installs
# where <root>/include is absent); g++ gets the same ones.
DRY="$("$NVCC" --dryrun -x cu -c /dev/null -o /dev/null 2>&1 || true)"
CUDA_INC=(-I"$CUDA_ROOT/include")
for d in $(sed -n 's/^#\$ INCLUDES=//p' <<<"$DRY" | tr -d '"'); do CUDA_INC+=("$d"); done
CUDA_LIB=(-L"$CUDA_ROOT/lib64" -L"$CUDA_ROOT/lib")
for d in $(sed -n 's/^#\$ LIBRARIES=//p' <<<"$DRY" | tr -d '"'); do CUDA_LIB+=("$d"); done
HERE="$SRC/tests/golden/bench_cuda_compile"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/magpie_bench_cuda.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
fail=0

nv() {  # log-name nvcc-args...: compile; fail on errors or on warnings from the bench headers
  local log="$WORK/$1.log"; shift
  "$NVCC" -O3 -std=c++17 -arch=sm_90 -I"$SRC/include" -Xcompiler -Wall,-Wextra "$@" 2>"$log" || { cat "$log"; return 1; }
  if grep -q "magpie/bench" "$log"; then echo "warnings in bench headers:"; cat "$log"; return 1; fi
}
# Two nvcc jobs at a time (CI has 2 cores).
nv vector_add "$SRC/examples/cuda/vector_add.cu" -o "$WORK/vector_add" & p1=$!
nv cuda_types -c "$HERE/cuda_types.cu" -o "$WORK/cuda_types.o" & p2=$!
wait $p1 && echo "ok: nvcc vector_add.cu (linked)" || fail=1
wait $p2 && echo "ok: nvcc -c cuda_types.cu" || fail=1
nv sync_in_launch -c "$HERE/sync_in_launch.cu" -o "$WORK/sync_in_launch.o" & p1=$!
nv copy_kernel -c "$HERE/copy_kernel.cu" -o "$WORK/copy_kernel.o" & p2=$!
wait $p1 && echo "ok: nvcc -c sync_in_launch.cu" || fail=1
wait $p2 || fail=1
if g++ -std=c++17 -O2 -Wall -Wextra -Werror -DMAGPIE_BENCH_CUDA -I"$SRC/include" "${CUDA_INC[@]}" \
     -c "$HERE/host_launcher.cpp" -o "$WORK/host_launcher.o" &&
   g++ "$WORK/host_launcher.o" "$WORK/copy_kernel.o" "${CUDA_LIB[@]}" -lcudart_static -ldl -lpthread -lrt \
     -o "$WORK/host_launcher"; then
  echo "ok: g++ -DMAGPIE_BENCH_CUDA host launcher (linked)"
else
  fail=1
fi

if [ -x "$WORK/vector_add" ]; then
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    "$WORK/vector_add" && echo "ok: vector_add runs on the GPU" || { echo "FAIL: vector_add on the GPU"; fail=1; }
  else
    set +e; out="$("$WORK/vector_add" 2>&1)"; rc=$?; set -e
    if [ $rc -eq 2 ] && grep -q "^magpie-bench: " <<<"$out"; then echo "ok: no GPU -> clean exit 2 ($out)"
    else echo "FAIL: without a GPU expected exit 2 + message, got $rc: $out"; fail=1; fi
  fi
fi

LIB="$BUILD/lib/libmagpie_cupti.so"
if [ -n "$BUILD" ] && [ -f "$LIB" ]; then
  needed="$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')"
  extra="$(tr ' ' '\n' <<<"$needed" | grep -v -E '^(libcupti\.so\.[0-9]+|libc\.so\.6|ld-linux-x86-64\.so\.2|)$' || true)"
  exports="$(nm -D --defined-only "$LIB" | awk '{print $3}' | sort | tr '\n' ' ')"
  if [ -z "$extra" ] && [ "$exports" = "InitializeInjection magpie_cupti_begin magpie_cupti_end magpie_cupti_flush " ]; then
    echo "ok: libmagpie_cupti.so NEEDED: $needed; exports: $exports"
  else
    echo "FAIL: libmagpie_cupti.so NEEDED: $needed (unexpected: $extra); exports: $exports"; fail=1
  fi
else
  echo "note: libmagpie_cupti.so not built in '$BUILD' (CUPTI missing?); not checked"
fi
if command -v hipcc >/dev/null; then
  hipcc -std=c++17 -fsyntax-only -x hip -I"$SRC/include" "$SRC/examples/cuda/vector_add.cu" && echo "ok: hipcc syntax" || fail=1
else
  echo "note: hipcc not found; the HIP backend is not compile-checked (unverified)"
fi
exit $fail
