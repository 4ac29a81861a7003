#!/usr/bin/env bash
# The optimization loop's decisions (examples/loop/loop_lib.py) on synthetic step outputs and
# on real ones: every stop reason, the happy path, the Welch test against known values, the
# kernel registry vs the sources, and kernel choice on a gap CSV made by the real binary from
# the shipped H200 trace. Needs python3 only (no numpy, no torch).
set -euo pipefail
src="${MAGPIE_SOURCE_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)}"
export PYTHONDONTWRITEBYTECODE=1
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" "$src/tests/golden/loop_decide/test_loop_decide.py" -v
