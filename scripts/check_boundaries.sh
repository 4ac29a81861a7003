#!/usr/bin/env bash
# CI check of issue 31's boundary rule: no public header outside codec/printer/schema files
# declares a function returning or taking JSON, except those still listed in
# scripts/boundaries_allowlist.txt (a list that only shrinks: an entry that no longer matches
# fails too), and the comparisons against mode words (scripts/mode_words.txt) outside codec
# files stay within the budget in
# scripts/boundaries_mode_words (lower it as modes become enums; the issue's target is 20).
# Usage: scripts/check_boundaries.sh   (from the repository root; python3 only)
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/boundaries.py check --src src \
  --allowlist scripts/boundaries_allowlist.txt \
  --max-mode-words "$(grep -v '^#' scripts/boundaries_mode_words | head -1)"
