#!/usr/bin/env bash
# The npm MCP conformance suite against `magpie mcp` (scripts/mcp-conformance.sh), run only when
# the suite is already installed (no network in tests): install it once with
#   MAGPIE_CONFORMANCE_DIR=/tmp/magpie-mcp-conformance scripts/mcp-conformance.sh build/magpie
set -euo pipefail
dir=${MAGPIE_CONFORMANCE_DIR:-/tmp/magpie-mcp-conformance}
[ -f "$dir/node_modules/@modelcontextprotocol/conformance/package.json" ] ||
  { echo "skip: conformance suite not installed in $dir (run scripts/mcp-conformance.sh once, needs npm)"; exit 77; }
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
command -v node >/dev/null || [ -x "$dir/node_modules/.bin/node" ] || { echo "skip: node not found"; exit 77; }
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
[ "$major" -ge 22 ] || [ -x "$dir/node_modules/.bin/node" ] || { echo "skip: node >= 22 not installed in $dir"; exit 77; }
MAGPIE_CONFORMANCE_PORT=$((20000 + $$ % 20000)) MAGPIE_CONFORMANCE_DIR="$dir" \
  exec "$MAGPIE_SOURCE_DIR/scripts/mcp-conformance.sh" "$MAGPIE_BIN"
