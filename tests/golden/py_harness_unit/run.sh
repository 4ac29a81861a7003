#!/usr/bin/env bash
# Unit tests of python/magpie_bench internals (tests/unit/python/test_*.py, unittest).
set -euo pipefail
src="${MAGPIE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}"
source "$src/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
exec "$py" -m unittest discover -v -s "$src/tests/unit/python" -p 'test_*.py'
