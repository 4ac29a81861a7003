#!/usr/bin/env bash
# The bomb inputs under a hard address-space limit (ulimit -v): each run must end in a clean
# error exit naming the file, not std::bad_alloc (SIGABRT), an OOM kill or a hang. The limit
# is checked to bite first: a 600 MiB allocation under it must fail.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
R="$MAGPIE_SOURCE_DIR/tests/regress/parsers"
cd "$GOLDEN_TMP"
limit_kb=$((512 * 1024))
limited() { (ulimit -v "$limit_kb" && exec timeout 60 "$@"); }
if limited python3 -c 'bytearray(600 << 20)' 2> /dev/null; then
  echo "SKIP: ulimit -v does not limit allocations here"
  exit 77
fi
cp "$R/config/billion_laughs.yaml" "$R/config/deep_flow.yaml" .
# Text bomb: a 3 MiB scalar aliased 40 times (120 MiB of text once expanded).
python3 - <<'PY'
open("text_bomb.yaml", "w").write("a: &a " + "x" * (3 << 20) + "\nb: [" + ", ".join(["*a"] * 40) + "]\n")
PY
expect_clean() {
  local needle=$1 rc=0
  shift
  limited "$MAGPIE_BIN" "$@" > out.txt 2> err.txt < /dev/null || rc=$?
  if [[ $rc -eq 0 || $rc -ge 124 ]]; then cat err.txt >&2; fail "under ulimit -v $limit_kb: $* exited $rc"; fi
  grep -qF -- "$needle" err.txt || { cat err.txt >&2; fail "under ulimit -v: $*: stderr lacks: $needle"; }
}
expect_clean "billion_laughs.yaml:" analyze -k billion_laughs.yaml -o res
expect_clean "billion_laughs.yaml:" benchmark -b billion_laughs.yaml -o res
expect_clean "text_bomb.yaml:2:" analyze -k text_bomb.yaml -o res
grep -qF "more than 67108864 bytes of text" err.txt || fail "text bomb: $(cat err.txt)"
expect_clean "deep_flow.yaml:1:" compare -k deep_flow.yaml -o res
# MCP under the same limit: the deep request is refused and the next one answered.
{ cat "$R/json/mcp_deep_params.jsonl"; echo '{"jsonrpc":"2.0","id":9,"method":"ping"}'; } |
  limited "$MAGPIE_BIN" mcp > mcp.out 2> mcp.err || fail "magpie mcp under ulimit -v exited $?"
grep -q '"id":9,"result":{}' mcp.out || fail "mcp did not answer after the deep request: $(cat mcp.out)"
echo "ok: parser memory limit golden"
