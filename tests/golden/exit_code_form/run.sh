#!/usr/bin/env bash
# Magpie's exit-code form (no reference:, testcases that write no manifest): a candidate whose own
# testcase always exits 0 cannot be proven correct. Attack: the baseline's testcase fails and the
# cheat's exits 0, so the cheat is the only "correct" kernel and wins. Defence: it still wins (that
# is Magpie's rule and the user's config), but the console, the winner_reason and the integrity
# row all say its correctness rests on its exit code alone; with `correctness.method: outputs`
# the same config fails every kernel instead.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
T="$GOLDEN_TMP"
cat > "$T/k.yaml" <<'YAML'
kernels:
  - {id: base, type: host, testcase_command: [bash, -c, "exit 3"]}
  - {id: cheat, type: host, testcase_command: [bash, -c, "exit 0"]}
YAML
"$MAGPIE_BIN" compare -k "$T/k.yaml" --no-perf -o "$T/out" > "$T/o.txt" 2> "$T/e.txt" || fail "compare exited $?: $(tail -3 "$T/e.txt")"
grep -q "^Correctness: 1/2 passed (1 by exit code only: not proven)$" "$T/o.txt" || fail "console count: $(cat "$T/o.txt")"
grep -q "Kernel 1: cheat \[not ranked: not timed\] (exit code only)$" "$T/o.txt" || fail "console line: $(cat "$T/o.txt")"
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
echo "ok: an exit-code-only winner is marked unproven"
