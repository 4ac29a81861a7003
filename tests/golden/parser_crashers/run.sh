#!/usr/bin/env bash
# Issue 18's crashers and issue 10's YAML mistakes through the real binary: each is a clean
# error exit (non-zero, never a signal or a hang) whose message names file:line:col, no
# workspace is left for a refused run, and `magpie mcp` answers the requests after hostile ones.
# Inputs: tests/regress/parsers/ (the regression corpus the regress.parsers_* CTests replay).
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
R="$MAGPIE_SOURCE_DIR/tests/regress/parsers"
T=$GOLDEN_TMP
cd "$T"
cp "$R"/config/*.yaml .

# expect_error NEEDLE CMD...: exit status in 1..123 (124 = timeout, >=128 = signal), NEEDLE on stderr.
expect_error() {
  local needle=$1 rc=0
  shift
  timeout 60 "$@" > out.txt 2> err.txt < /dev/null || rc=$?
  if [[ $rc -eq 0 || $rc -ge 124 ]]; then cat err.txt >&2; fail "$* exited $rc (want a clean error)"; fi
  grep -qF -- "$needle" err.txt || { cat err.txt >&2; fail "$*: stderr lacks: $needle"; }
}
no_workspace() { [[ -z "$(ls -A res 2>/dev/null)" ]] || fail "a refused run left $(ls res) behind"; }

# 1. A 14-byte self-referencing alias (was SIGSEGV in analyze -k and benchmark -b).
expect_error "self_alias.yaml:2:6: alias *a refers to a node that contains it" "$MAGPIE_BIN" analyze -k self_alias.yaml -o res
expect_error "self_alias.yaml:2:6: alias *a refers to a node that contains it" "$MAGPIE_BIN" benchmark -b self_alias.yaml -o res
expect_error "self_alias_sequence.yaml:1:10: alias *s refers" "$MAGPIE_BIN" compare -k self_alias_sequence.yaml -o res
expect_error "merge_self.yaml:2:7: alias *m refers" "$MAGPIE_BIN" analyze -k merge_self.yaml -o res
# 2. Billion laughs (was 12 GB and growing after 82 s).
start=$SECONDS
expect_error "billion_laughs.yaml:" "$MAGPIE_BIN" analyze -k billion_laughs.yaml -o res
grep -qF "expands to more than 1000000 nodes" err.txt || fail "billion laughs: $(cat err.txt)"
expect_error "expands to more than 1000000 nodes" "$MAGPIE_BIN" benchmark -b billion_laughs.yaml -o res
(( SECONDS - start < 30 )) || fail "billion laughs took $((SECONDS - start)) s"
# Deep nesting: flow and block.
expect_error "deep_flow.yaml:1:" "$MAGPIE_BIN" analyze -k deep_flow.yaml -o res
grep -qF "nests deeper than 128 levels" err.txt || fail "deep flow: $(cat err.txt)"
expect_error "deep_block.yaml:" "$MAGPIE_BIN" benchmark -b deep_block.yaml -o res
grep -qF "nests deeper than 128 levels" err.txt || fail "deep block: $(cat err.txt)"
# Issue 10: an unclosed quote and a duplicate key are errors with line and column.
expect_error "unclosed_quote.yaml:3:3: the double-quoted string opened at line 2, column 7 is not closed" \
  "$MAGPIE_BIN" analyze -k unclosed_quote.yaml -o res
printf 'kernel:\n  id: "vector_add\n' > eof_quote.yaml
expect_error "eof_quote.yaml:2:7: unclosed double quote" "$MAGPIE_BIN" analyze -k eof_quote.yaml -o res
printf 'kernel:\n  id: a\n  type: host\n  id: b\n' > dup.yaml
expect_error "dup.yaml:4:3: duplicate key 'id' (first at line 2)" "$MAGPIE_BIN" analyze -k dup.yaml -o res
printf 'benchmark:\n  framework: vllm\n  envs:\n    TP: 1\n    TP: 2\n' > dup_bench.yaml
expect_error "dup_bench.yaml:5:5: duplicate key 'TP' (first at line 4)" "$MAGPIE_BIN" benchmark -b dup_bench.yaml -o res
# A directory, a FIFO (no writer: must not hang) and an oversized file as the config.
mkdir cfgdir && mkfifo pipe.yaml
expect_error "cfgdir: is a directory, not a YAML config file" "$MAGPIE_BIN" analyze -k cfgdir -o res
expect_error "pipe.yaml: is a FIFO (named pipe), not a YAML config file" "$MAGPIE_BIN" analyze -k pipe.yaml -o res
expect_error "pipe.yaml: is a FIFO (named pipe), not a benchmark config file" "$MAGPIE_BIN" benchmark -b pipe.yaml -o res
expect_error "cfgdir: is a directory, not a benchmark config file" "$MAGPIE_BIN" benchmark -b cfgdir -o res
head -c 5000000 /dev/zero | tr '\0' '#' > big.yaml
expect_error "big.yaml: the YAML config file is 4.8 MiB, over the 4.0 MiB limit" "$MAGPIE_BIN" analyze -k big.yaml -o res
no_workspace

# 3. MCP: params nested 100,000 deep (was SIGSEGV) and 1e400 (was SIGABRT); the server answers
# every later request and exits 0 at EOF.
{ cat "$R/json/mcp_deep_params.jsonl" "$R/json/mcp_number_overflow.jsonl"
  echo '{"jsonrpc":"2.0","id":3,"method":"ping"}'; } | timeout 60 "$MAGPIE_BIN" mcp > mcp.out 2> mcp.err \
  || fail "magpie mcp exited $? ($(tail -3 mcp.err))"
check_json mcp.out <<'PY'
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1])]
assert len(msgs) == 5, msgs
deep, ping2, num, cursor, ping3 = msgs
assert deep["id"] is None and deep["error"]["code"] == -32700, deep
assert "nesting deeper than 128 levels" in deep["error"]["message"], deep
assert ping2 == {"jsonrpc": "2.0", "id": 2, "result": {}}, ping2
for m in (num, cursor):
    assert m["error"]["code"] == -32700 and "number out of the range of a double" in m["error"]["message"], m
assert ping3["id"] == 3 and ping3["result"] == {}, ping3
PY

# GPU spec JSON (--gpu-spec) and a trace: deep nesting, number overflow, a FIFO.
TR="$MAGPIE_SOURCE_DIR/tests/fixtures/traces/two_ranks/job-rank-0.pt.trace.json"
python3 -c 'print("{\"mem_bw_gbps\":" + "[" * 100000 + "]" * 100000 + "}")' > deep_spec.json
expect_error "deep_spec.json:1:527: invalid JSON (nesting deeper than 512 levels)" \
  "$MAGPIE_BIN" trace report "$TR" --gpu-spec deep_spec.json -o tr --no-html
printf '{"name": "x",\n "mem_bw_gbps": 1e400}\n' > big_number_spec.json
expect_error "big_number_spec.json:2:17: invalid JSON (number out of the range of a double)" \
  "$MAGPIE_BIN" trace report "$TR" --gpu-spec big_number_spec.json -o tr --no-html
mkfifo spec_pipe.json
expect_error "spec_pipe.json: is a FIFO (named pipe), not a JSON file" \
  "$MAGPIE_BIN" trace report "$TR" --gpu-spec spec_pipe.json -o tr --no-html
python3 -c 'print("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"k\", \"ts\": 1, \"dur\": 1, \"pid\": 0, \"tid\": 0, \"args\": " + "[" * 100000 + "]" * 100000 + "}]}")' > deep.trace.json
expect_error "deep.trace.json" "$MAGPIE_BIN" trace report deep.trace.json -o tr2 --no-html
grep -qiF "nesting too deep" err.txt || fail "deep trace: $(cat err.txt)"
echo "ok: parser crashers golden"
