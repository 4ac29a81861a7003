#!/usr/bin/env bash
# Magpie's exit-code form (no reference:, testcases that write no manifest): a candidate whose own
# testcase always exits 0 cannot be proven correct. Attack: the baseline's testcase fails and the
# cheat's exits 0, so the cheat is the only "correct" kernel and wins. Defence: it still wins (that
# is Magpie's rule and the user's config), but the console, the winner_reason and the integrity
# row all say its correctness rests on its exit code alone; with `correctness.method: outputs`
# the same config fails every kernel instead. Also: a failing candidate whose output holds
# invalid UTF-8 and terminal escape sequences cannot put them on the user's terminal or logs,
# and one whose output holds summary lines ("Winner: ...") cannot add lines to the summary.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
T="$GOLDEN_TMP"
cat > "$T/k.yaml" <<'YAML'
kernels:
  - {id: base, type: host, testcase_command: [bash, -c, "exit 3"]}
  - {id: cheat, type: host, testcase_command: [bash, -c, "exit 0"]}
YAML
"$MAGPIE_BIN" compare -k "$T/k.yaml" --no-perf -o "$T/out" > "$T/o.txt" 2> "$T/e.txt" || fail "compare exited $?: $(tail -3 "$T/e.txt")"
grep -q "^Correctness: 1/2 passed (1 by exit code only: not proven)$" "$T/o.txt" || fail "console count: $(cat "$T/o.txt")"
grep -q " 1 cheat .*  not ranked: not timed (exit code only)$" "$T/o.txt" || fail "console line: $(cat "$T/o.txt")"
check_json "$(workspace_of "$T/out" compare)/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
assert res["winner"] == 1, res["winner"]
assert res["winner_reason"].endswith("correct by its own testcase's exit code only: numerical correctness is not proven"), res["winner_reason"]
cheat = res["kernel_results"][1]
assert cheat["correctness_method"] == "exit_code" and cheat["outcome"] == "passed", cheat["correctness_method"]
checks = {c["name"]: c["status"] for c in cheat["integrity"]["checks"]}
assert checks.get("correctness_method") == "warn", checks
PY
# Asking for outputs: an exit code proves nothing, no kernel passes, there is no winner (compare
# still exits 0: its verdicts are the result).
cat > "$T/k2.yaml" <<'YAML'
kernels:
  - {id: base, type: host, testcase_command: [bash, -c, "exit 3"]}
  - {id: cheat, type: host, testcase_command: [bash, -c, "exit 0"]}
correctness: {method: outputs}
YAML
"$MAGPIE_BIN" compare -k "$T/k2.yaml" --no-perf -o "$T/out2" > "$T/o2.txt" 2> "$T/e2.txt" || fail "outputs method: exit $?"
grep -q "^Correctness: 0/2 passed$" "$T/o2.txt" || fail "outputs method console: $(cat "$T/o2.txt")"
grep -q "^Winner: none (no correct kernel)$" "$T/o2.txt" || fail "outputs method winner: $(cat "$T/o2.txt")"
check_json "$(workspace_of "$T/out2" compare)/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
assert res["winner"] is None and res["comparison_metrics"]["correctness"] == [False, False]
assert any("an exit code alone proves nothing" in e for e in res["kernel_results"][0]["errors"]), res["kernel_results"][0]["errors"]
assert res["kernel_results"][1]["outcome"] != "passed"
PY

# A candidate that prints invalid UTF-8, a terminal escape (clear screen, set title) and random
# bytes, then fails: console, log and report stay valid UTF-8 without a control character.
# compare_against_script N ID: compares a passing baseline with kernel ID running ID.sh of this
# folder; console in $T/oN.txt, log in $T/eN.txt, results under $T/outN.
compare_against_script() {
  cat > "$T/k$1.yaml" <<YAML
kernels:
  - {id: base, type: host, testcase_command: [bash, -c, "exit 0"]}
  - {id: $2, type: host, testcase_command: [bash, $MAGPIE_SOURCE_DIR/tests/golden/exit_code_form/$2.sh]}
YAML
  "$MAGPIE_BIN" compare -k "$T/k$1.yaml" --no-perf -o "$T/out$1" > "$T/o$1.txt" 2> "$T/e$1.txt" || fail "$2 compare exited $?"
}
compare_against_script 3 noisy
python3 - "$T/o3.txt" "$T/e3.txt" "$(workspace_of "$T/out3" compare)/compare_report.json" <<'PY'
import sys
for f in sys.argv[1:]:
    b = open(f, "rb").read()
    t = b.decode("utf-8")  # raises on invalid UTF-8
    bad = [c for c in t if (ord(c) < 32 and c not in "\n\t") or ord(c) == 127]
    assert not bad, (f, bad[:5])
o = open(sys.argv[1], encoding="utf-8").read()
assert "Testcase command 1/1 failed (exit code 1)" in o and "\\x1B" in o and "\ufffd" in o, o
PY

compare_against_script 4 forger
[ "$(grep -c "Winner:" "$T/o4.txt")" -eq 1 ] && grep -q "^Winner: Kernel 0 (base)$" "$T/o4.txt" \
  || fail "a candidate's output forged a summary line: $(cat "$T/o4.txt")"
grep -q "^  ✗  1 forger .*  not ranked: failed$" "$T/o4.txt" && ! grep -q "^ *✓ *1 forger" "$T/o4.txt" \
  || fail "forged kernel line: $(cat "$T/o4.txt")"
echo "ok: an exit-code-only winner is marked unproven; candidate output is printable"
