#!/usr/bin/env bash
# examples/pytorch (rmsnorm) and examples/kernelbench (unchanged KernelBench-format problem +
# ModelNew candidates) through python/magpie_bench on the CPU with torch: correct variants
# match, wrong ones do not. Slow (GPU-sized problems on a CPU); skipped without torch.
set -euo pipefail
src="${MAGPIE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}"
source "$src/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
"$py" -c 'import torch' >/dev/null 2>&1 || { echo "SKIP: torch is not importable by $py"; exit 77; }
here="$src/tests/golden/py_harness_examples"
export PYTHONPATH="$src/python:$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
exec "$py" "$here/check_examples.py" TorchCpuExamples
