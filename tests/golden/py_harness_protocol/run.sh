#!/usr/bin/env bash
# Drives python/magpie_bench (the pytorch/triton harness) through every protocol mode with
# numpy-only fixtures: manifest, pre/post inputs, mutation, seeds, timing over fds 3/4, errors.
set -euo pipefail
src="${MAGPIE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}"
source "$src/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
exec "$py" "$src/tests/golden/py_harness_protocol/check_protocol.py"
