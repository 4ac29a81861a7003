#!/usr/bin/env bash
# README.md's "First hour" section, run as written (issue 33) from a directory outside the clone,
# with a fresh HOME (so its results store starts empty and the real one is never touched) and
# the example server's port 8000 replaced by a free one (tests run in parallel).
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
# The README says python3 (Debian's, with python3-aiohttp); where another python3 comes first on
# PATH, Debian's is put first for this run.
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import aiohttp' 2> /dev/null; then PATH="$(dirname "$(command -v "$py")"):$PATH"; break; fi
done
python3 -c 'import aiohttp' 2> /dev/null || { echo "skip: python3-aiohttp not installed (scripts/install-deps.sh)"; exit 77; }
T="$GOLDEN_TMP"
block=$(awk '/^## First hour/{f=1} f && /^```bash$/{b=1; next} b && /^```$/{exit} b' "$MAGPIE_SOURCE_DIR/README.md")
[ -n "$block" ] || fail "no bash block in README's First hour section"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '%s\n' "$block" | sed "s/8000/$port/g" > "$T/first_hour.sh"
# The clone as the reader has it: MAGPIE_HOME's build/ holds the binary under test.
mkdir -p "$T/clone"
for d in examples include python data README.md; do ln -s "$MAGPIE_SOURCE_DIR/$d" "$T/clone/$d"; done
mkdir -p "$T/clone/build" && ln -s "$MAGPIE_BIN" "$T/clone/build/magpie"
unset MAGPIE_RESULTS XDG_DATA_HOME
export HOME="$T/home" TMPDIR="$T"
mkdir -p "$HOME"
(cd "$T/clone" && bash -euo pipefail "$T/first_hour.sh") > "$T/out.txt" 2> "$T/err.txt" \
  || fail "README First hour failed: $(tail -20 "$T/err.txt")"
grep -q "Top kernels" "$T/out.txt" || fail "no trace summary"
grep -q "COMPARISON RESULTS" "$T/out.txt" || fail "no compare"
grep -q "^ *median\|median *noise *samples" "$T/out.txt" || fail "compare table without median/noise/samples"
test -f "$HOME/.local/share/magpie/results.sqlite" || fail "runs not in the per-user store"
[ "$(grep -c "benchmark" "$T/out.txt")" -ge 2 ] || fail "results list/compare output: $(tail -20 "$T/out.txt")"
! grep -q "working_dir is not set" "$T/err.txt" || fail "working_dir warnings: $(grep working_dir "$T/err.txt")"
! grep -qi "warn" "$T/err.txt" || fail "warnings: $(grep -i warn "$T/err.txt" | head -5)"
echo "ok: README First hour ran as written"
