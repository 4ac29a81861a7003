#!/usr/bin/env bash
# MCP drop-in: a stdio client calls every tool of `magpie mcp` with Magpie's argument names,
# validates each call's arguments against the tool's inputSchema and each structured result
# against its outputSchema (JSON Schema 2020-12, python3-jsonschema).
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
python3 -c "import jsonschema" 2>/dev/null || { echo "skip: python3-jsonschema not installed (scripts/install-deps.sh)"; exit 77; }
SIM="${MAGPIE_BUILD_DIR:?}/tests/sim/magpie_sim_server"
[ -x "$SIM" ] || { echo "skip: $SIM is not built"; exit 77; }
command -v g++ >/dev/null || { echo "skip: g++ not found"; exit 77; }
export MAGPIE_SIM_SERVER="$SIM"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 "$MAGPIE_SOURCE_DIR/tests/golden/dropin_mcp_client/test_mcp_client.py"
