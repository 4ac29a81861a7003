#!/usr/bin/env bash
# magpie next to HTA and TraceLens on the same traces (bench, not a test): wall time and peak
# RSS ratios, GPU timeline and top kernels side by side, one invocation.
#
# Usage: bench/trace/peers.sh [--runs 3] [--tracelens-src DIR] [TRACE...]
#   default traces: the example H200 trace and the generate trace of tests/golden/trace_generate_split
# Env: MAGPIE_BIN (default build/magpie), PEERS_VENV (default /tmp/magpie-peers-venv)
# The peers are pinned and installed into PEERS_VENV from PyPI on first use. TraceLens has no
# PyPI release: pass its source tree (a clone of github.com/AMD-AGI/TraceLens; verified at commit
# 171dd747) with --tracelens-src; it is run from there, never copied into magpie.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${PEERS_VENV:-/tmp/magpie-peers-venv}"
runs=3 tl_src="" traces=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --tracelens-src) tl_src="$2"; shift 2 ;;
    *) traces+=("$1"); shift ;;
  esac
done
[ ${#traces[@]} -gt 0 ] || traces=("$root/examples/traces/llama_tiny-rank-0.pt.trace.json.gz"
                                   "$root/tests/golden/trace_generate_split/hf_generate.pt.trace.json.gz")
bin="${MAGPIE_BIN:-$root/build/magpie}"
[ -x "$bin" ] || { echo "magpie binary not found: $bin (set MAGPIE_BIN)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time needed (apt-get install time)" >&2; exit 2; }
if [ ! -x "$venv/bin/python" ]; then
  echo "creating $venv with the pinned peers ..." >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q holistictraceanalysis==0.5.0 pandas==2.2.3 numpy==2.4.6 openpyxl==3.1.5 orjson==3.13.0 \
    tqdm==4.70.1 tabulate==0.10.0 PyYAML==6.0.4
fi
existing=()
for t in "${traces[@]}"; do [ -f "$t" ] && existing+=("$t") || echo "skipping missing trace $t" >&2; done
exec "$venv/bin/python" "$here/peers.py" --magpie "$bin" --runs "$runs" ${tl_src:+--tracelens-src "$tl_src"} "${existing[@]}"
