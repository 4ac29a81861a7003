#!/usr/bin/env bash
# The MCP trust model on the real binary: command injection through every tool that takes a
# command is refused by default and allowed with --allow-command / --trust-client; path escapes
# (.., absolute, symlinks) are refused and named; a cancelled analyze ends a setsid grandchild.
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 "$MAGPIE_SOURCE_DIR/tests/golden/mcp_trust/test_trust.py"
