#!/usr/bin/env bash
# Creates the two virtual environments bench/serve/peers.py runs the peer clients from (never CI:
# they are large). vLLM: `pip install vllm` resolves CUDA torch and GPU-only pins (flashinfer
# among them, not installable here), so the lock holds vllm itself plus what `vllm bench serve`
# imports, installed with --no-deps. Measured on the 2-core VM: vllm 8.3 GB (torch 2.14 with its
# CUDA libraries is most of it), about 35 minutes; aiperf 1.2 GB, about 24 minutes.
# Usage: bench/serve/setup_peers.sh [DIR]   (default ~/.cache/magpie-peers)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$HOME/.cache/magpie-peers}
py=${PYTHON:-python3}
mkdir -p "$dir"
for peer in vllm aiperf; do
  [ -x "$dir/$peer/bin/python" ] || "$py" -m venv "$dir/$peer"
  "$dir/$peer/bin/pip" install -q --no-deps -r "$here/peers-$peer.lock"
done
"$dir/vllm/bin/vllm" bench serve --help > /dev/null
"$dir/aiperf/bin/aiperf" profile --help > /dev/null
echo "peer clients ready in $dir"
