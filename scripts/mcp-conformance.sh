#!/usr/bin/env bash
# Runs the MCP conformance suite (npm @modelcontextprotocol/conformance) against `magpie mcp`
# through scripts/mcp-http-bridge.py (the suite speaks Streamable HTTP; magpie speaks stdio).
#
# usage: scripts/mcp-conformance.sh [MAGPIE_BIN] [extra conformance args, e.g. --scenario tools-list]
# env:   MAGPIE_CONFORMANCE_DIR  npm install dir (default /tmp/magpie-mcp-conformance; not in the repo)
#        MAGPIE_CONFORMANCE_VERSION  package version (default 0.1.16)
#        MAGPIE_CONFORMANCE_PORT     bridge port (default 3391)
# Needs node + npm (npm registry reachable on first run; offline afterwards). The suite needs
# node >= 22 (it imports fs.globSync); with an older node the npm package node@22 is installed
# into the same directory. Exit status: the suite's (0 when every failure is in the baseline
# scripts/mcp-conformance-baseline.yml, which lists scenarios that need the suite's own
# "everything server" fixtures — resources, prompts, sampling, elicitation, test_* tools).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/magpie}
[ $# -gt 0 ] && shift
dir=${MAGPIE_CONFORMANCE_DIR:-/tmp/magpie-mcp-conformance}
ver=${MAGPIE_CONFORMANCE_VERSION:-0.1.16}
port=${MAGPIE_CONFORMANCE_PORT:-3391}
command -v npm >/dev/null || { echo "mcp-conformance: npm not found" >&2; exit 77; }
[ -x "$bin" ] || { echo "mcp-conformance: $bin is not executable (give the magpie binary)" >&2; exit 2; }
mkdir -p "$dir"
if [ ! -f "$dir/node_modules/@modelcontextprotocol/conformance/package.json" ]; then
  (cd "$dir" && { [ -f package.json ] || npm init -y >/dev/null; } &&
   npm install --no-audit --no-fund --loglevel=error "@modelcontextprotocol/conformance@$ver" >&2)
fi
node=node
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 22 ]; then
  [ -x "$dir/node_modules/.bin/node" ] || (cd "$dir" && npm install --no-audit --no-fund --loglevel=error node@22 >&2)
  node="$dir/node_modules/.bin/node"
fi
work=$(mktemp -d)
python3 "$here/mcp-http-bridge.py" --port "$port" -- "$bin" mcp -o "$work/results" 2> "$work/bridge.log" &
bridge=$!
trap 'kill $bridge 2>/dev/null || true; wait $bridge 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do
  python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
  sleep 0.1
done
cd "$work"
set +e
"$node" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
  --url "http://127.0.0.1:$port/mcp" --expected-failures "$here/mcp-conformance-baseline.yml" "$@"
rc=$?
set -e
[ $rc -eq 0 ] || { echo "--- bridge log (tail) ---" >&2; tail -40 "$work/bridge.log" >&2; }
exit $rc
