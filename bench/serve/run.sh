#!/usr/bin/env bash
# Client benchmark (bench/serve/run.py): throughput vs a Python aiohttp client, token timestamp
# accuracy at 1000 streams, open-loop schedule slip. Not a ctest: it takes about a minute.
# Usage: bench/serve/run.sh [run.py options]   env: BUILD_DIR (default build), PYTHON (python3 with aiohttp)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 "$root/bench/serve/run.py" "$@"
