#!/usr/bin/env bash
# GPU check of the CUDA harness + CUPTI injection library (label gpu; run on the H200):
#   bash tests/gpu/cuda_harness.sh            (from the repository root)
# Builds libmagpie_cupti.so (or takes $MAGPIE_BUILD_DIR/lib/libmagpie_cupti.so) and the
# examples/cuda kernels with nvcc -arch=sm_XX of GPU 0, then runs cuda_harness_driver.py:
# GPU correctness, timing under CUDA_INJECTION64_PATH (event vs CUPTI per sample, dropped
# records, blocking-kernel timeouts), a synchronising launch, ncu vs CUPTI. Exit 77 without a GPU.
set -euo pipefail
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "skip: no nvidia-smi / NVIDIA GPU"; exit 77; }
SRC="${MAGPIE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
BUILD="${MAGPIE_BUILD_DIR:-}"
NVCC="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
[ -x "$NVCC" ] || { echo "skip: nvcc not found"; exit 77; }
CUDA_ROOT="$(cd "$(dirname "$(readlink -f "$NVCC")")/.." && pwd)"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
WORK="${MAGPIE_GPU_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/magpie_cuda_harness.XXXXXX")}"
mkdir -p "$WORK/bin"
cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 | head -1 | tr -d ' .')"
ARCH="sm_${cc:-90}"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader -i 0); arch $ARCH; nvcc $("$NVCC" --version | tail -1)"

# libcupti: toolkit lib dirs, then the CUPTI extras, then anywhere under the toolkit.
CUPTI_SO=""
for d in "$CUDA_ROOT/lib64" "$CUDA_ROOT/lib" "$CUDA_ROOT/extras/CUPTI/lib64" "$CUDA_ROOT/targets/x86_64-linux/lib"; do
  if ls "$d"/libcupti.so* >/dev/null 2>&1; then CUPTI_SO="$(ls "$d"/libcupti.so* | head -1)"; break; fi
done
[ -n "$CUPTI_SO" ] || CUPTI_SO="$(find "$CUDA_ROOT"/ -name 'libcupti.so*' 2>/dev/null | head -1)"
[ -n "$CUPTI_SO" ] || { echo "FAIL: libcupti.so not found under $CUDA_ROOT"; exit 1; }
CUPTI_DIR="$(dirname "$CUPTI_SO")"
CUPTI_INC="$CUDA_ROOT/include"
[ -f "$CUPTI_INC/cupti.h" ] || CUPTI_INC="$CUDA_ROOT/extras/CUPTI/include"
echo "cupti: $CUPTI_SO (headers $CUPTI_INC)"

LIB="$WORK/libmagpie_cupti.so"
if [ -n "$BUILD" ] && [ -f "$BUILD/lib/libmagpie_cupti.so" ]; then
  cp "$BUILD/lib/libmagpie_cupti.so" "$LIB"; echo "injection library: $BUILD/lib/libmagpie_cupti.so"
else
  g++ -O2 -std=c++17 -shared -fPIC -fvisibility=hidden -I"$CUPTI_INC" -I"$CUDA_ROOT/include" \
    "$SRC/src/cupti/magpie_cupti.cpp" -o "$LIB" -L"$CUPTI_DIR" -lcupti -static-libstdc++ -static-libgcc \
    -Wl,--exclude-libs,ALL -Wl,--as-needed -Wl,--version-script="$SRC/src/cupti/magpie_cupti.map"
  echo "injection library: built $LIB"
fi
readelf -d "$LIB" | grep NEEDED | sed 's/^/  /'

build() { "$NVCC" -O3 -std=c++17 -arch="$ARCH" -I"$SRC/include" "$2" -o "$WORK/bin/$1"; }
build vector_add "$SRC/examples/cuda/vector_add.cu" &
build vector_add_twopass "$SRC/examples/cuda/vector_add_twopass.cu" &
build vector_add_offbyone "$SRC/examples/cuda/vector_add_offbyone.cu" &
build sync_in_launch "$SRC/tests/golden/bench_cuda_compile/sync_in_launch.cu" &
wait
for b in vector_add vector_add_twopass vector_add_offbyone sync_in_launch; do
  [ -x "$WORK/bin/$b" ] || { echo "FAIL: nvcc build of $b"; exit 1; }
done
echo "== standalone"
"$WORK/bin/vector_add"
python3 "$SRC/tests/gpu/cuda_harness_driver.py" --bin "$WORK/bin" --cupti "$LIB" --cupti-dir "$CUPTI_DIR" --work "$WORK/run"
