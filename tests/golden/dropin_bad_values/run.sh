#!/usr/bin/env bash
# Bad values are refused, never replaced by defaults: each case exits non-zero with an error that
# names the file:line and field (YAML) or the flag (CLI), writes nothing half-done and leaves no
# workspace behind (cases.py holds the battery).
set -euo pipefail
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 "$MAGPIE_SOURCE_DIR/tests/golden/dropin_bad_values/cases.py"
