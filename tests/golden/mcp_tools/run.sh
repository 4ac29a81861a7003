#!/usr/bin/env bash
# MCP tools on the real binary: CLI-child tools (analyze, compare, gap_analysis, trace_report),
# cancellation, run handles, results and source-mapping tools.
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 "$MAGPIE_SOURCE_DIR/tests/golden/mcp_tools/test_tools.py"
