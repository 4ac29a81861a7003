#!/usr/bin/env bash
# The python examples (examples/pytorch/numpy_cpu always; examples/pytorch and
# examples/kernelbench when torch is importable, on the CPU) behave as their YAML says when run
# through python/magpie_bench: correct variants match the reference, wrong ones do not.
set -euo pipefail
src="${MAGPIE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}"
source "$src/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
here="$src/tests/golden/py_harness_examples"
export PYTHONPATH="$src/python:$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
exec "$py" "$here/check_examples.py" NumpyExamples
