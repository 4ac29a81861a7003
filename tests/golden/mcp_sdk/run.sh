#!/usr/bin/env bash
# The official MCP Python SDK as the client (PyPI `mcp`, pinned in sdk_venv.sh, in its own
# virtualenv that sdk_venv.sh installs on first use): the drop-in flow of
# tests/golden/dropin_mcp_client calls every tool of `magpie mcp` through mcp.ClientSession,
# which validates each result's structuredContent against the tool's outputSchema (call_tool
# raises on a mismatch); the flow fails unless every tool gave a structured result the SDK
# validated (jobs_status / jobs_collect / jobs_cancel need a cluster: tests/golden/ray_compare
# runs them through the SDK on a real Ray batch). Skips (77) where the SDK cannot be installed.
set -euo pipefail
SIM="${MAGPIE_BUILD_DIR:?}/tests/sim/magpie_sim_server"
[ -x "$SIM" ] || { echo "skip: $SIM is not built"; exit 77; }
command -v g++ >/dev/null || { echo "skip: g++ not found"; exit 77; }
rc=0
py=$(bash "$MAGPIE_SOURCE_DIR/tests/golden/mcp_sdk/sdk_venv.sh") || rc=$?
if [ "$rc" -ne 0 ]; then echo "$py"; exit "$rc"; fi
echo "MCP Python SDK $("$py" -c 'from importlib.metadata import version; print(version("mcp"))') ($py)"
export MAGPIE_SIM_SERVER="$SIM" MAGPIE_MCP_CLIENT=sdk
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$py" "$MAGPIE_SOURCE_DIR/tests/golden/dropin_mcp_client/test_mcp_client.py"
