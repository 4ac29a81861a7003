#!/usr/bin/env bash
# MCP protocol over pipes: both eras, malformed input, unknown methods/tools, bad arguments,
# huge lines, output schemas, progress notifications.
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
cd "$(mktemp -d)"
exec python3 "$MAGPIE_SOURCE_DIR/tests/golden/mcp_protocol/test_protocol.py"
