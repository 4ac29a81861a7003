#!/usr/bin/env bash
# Prints the python of a virtualenv holding the official MCP Python SDK (PyPI `mcp`, pinned),
# installing it on first use (${MAGPIE_MCP_SDK_VENV:-$TMPDIR/magpie-mcp-sdk-<version>}).
# Exit 77 with the reason on stdout where it cannot be had (no PyPI, Python < 3.10, no venv).
# Used by tests/golden/mcp_sdk and tests/golden/ray_compare (the jobs tools).
set -euo pipefail
SDK_VERSION=2.3.0
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' || { echo "skip: the MCP SDK needs Python >= 3.10"; exit 77; }
venv=${MAGPIE_MCP_SDK_VENV:-${TMPDIR:-/tmp}/magpie-mcp-sdk-$SDK_VERSION}
check="import mcp, jsonschema; from importlib.metadata import version; assert version('mcp') == '$SDK_VERSION'"
if ! "$venv/bin/python" -c "$check" 2>/dev/null; then
  exec 9> "$venv.lock"  # one install at a time (ctest -j)
  flock 9
  if ! "$venv/bin/python" -c "$check" 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv" > /dev/null 2>&1 || { echo "skip: python3 -m venv failed (install python3-venv)"; exit 77; }
    if ! timeout 600 "$venv/bin/pip" install -q --disable-pip-version-check "mcp==$SDK_VERSION" > "$venv.log" 2>&1; then
      echo "skip: cannot install mcp==$SDK_VERSION from PyPI: $(tail -1 "$venv.log")"
      rm -rf "$venv"
      exit 77
    fi
  fi
fi
echo "$venv/bin/python"
