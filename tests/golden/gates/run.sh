#!/usr/bin/env bash
# The correctness gates: zeros, constant, copy-of-input, input mutation and
# right-only-on-the-first-trial candidates are rejected with the specific reason; an honest
# candidate is accepted. Also: the exit-code-only mode is labelled as such.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
FX="$MAGPIE_SOURCE_DIR/tests/golden/gates_fixtures"
out="$GOLDEN_TMP/res"
"$MAGPIE_BIN" compare -k "$FX/gates.yaml" -o "$out" --no-perf > "$GOLDEN_TMP/c.txt" || fail "compare exited $?"
ws=$(workspace_of "$out" compare)
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
k = {x["extra"]["kernel_id"]: x for x in res["kernel_results"]}
def errs(name): return " | ".join(k[name]["errors"])
assert k["honest"]["correctness_state"] == "SUCCESS", errs("honest")
assert k["honest"]["correctness_method"] == "outputs"
expect = {
    "zeros": "all zeros",
    "constant": "is the constant",
    "copy_input": "equals input",
    "mutates_input": "was modified by the candidate",
    "first_trial_only": "outside atol",
}
for name, needle in expect.items():
    assert k[name]["correctness_state"] == "FAILED" and k[name]["outcome"] == "incorrect", (name, k[name]["outcome"])
    assert needle in errs(name), (name, errs(name))
ft = k["first_trial_only"]["correctness"]["comparison"]["trials"]
assert ft[0]["passed"] and not any(t["passed"] for t in ft[1:]), [t["passed"] for t in ft]
assert res["rankings"] == [], res["rankings"]   # --no-perf: nothing is timed, so nothing is ranked
assert res["winner"] == 0                         # the first correct kernel (Magpie's fallback)
v = {x["kernel_id"]: x["verdict"] for x in res["verdicts"]}
assert all(v[n] == "not_ranked" for n in expect), v
PY
# Exit-code mode is available but labelled: same fixtures, method exit_code, nothing compared.
"$MAGPIE_BIN" compare -k "$FX/gates.yaml" -o "$out/ec" --no-perf --correctness-method exit_code > /dev/null
ws=$(workspace_of "$out/ec" compare)
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
for x in res["kernel_results"]:
    assert x["correctness_method"] == "exit_code", x["correctness_method"]
    assert "not proven" in x["correctness"].get("note", "") or "not compared" in x["correctness"].get("note", ""), x["correctness"]
PY
# A reference that fails fails every candidate, also one that exits 0 without a manifest (a
# legacy reference judged by its exit code must not hand candidates the exit-code method).
cat > "$GOLDEN_TMP/reffail.yaml" <<'Y'
reference: {id: ref, type: host, testcase_command: [sh, -c, "exit 3"]}
kernels:
  - {id: base, type: host, testcase_command: [sh, -c, "exit 0"]}
  - {id: silent, type: host, testcase_command: ["true"]}
Y
"$MAGPIE_BIN" compare -k "$GOLDEN_TMP/reffail.yaml" -o "$out/rf" --no-perf > /dev/null 2>&1
ws=$(workspace_of "$out/rf" compare)
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
for x in res["kernel_results"]:
    assert x["correctness_state"] == "FAILED", (x["extra"]["kernel_id"], x["correctness_state"], x["errors"])
    assert any("reference 'ref' failed" in e for e in x["errors"]), x["errors"]
PY
echo "ok: gates golden"
