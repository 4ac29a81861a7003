#!/usr/bin/env bash
# A model with random weights (drawn in __init__ after the harness seeds every RNG) passes the
# checked timed samples: the timing processes get the correctness runs' MAGPIE_BENCH_INIT_SEED.
# Before the fix every such model (the baseline too) was rejected by timed_outputs.
set -euo pipefail
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
export MAGPIE_PYTHON="$py" PYTHONDONTWRITEBYTECODE=1
out="$GOLDEN_TMP/res"
set +e
"$MAGPIE_BIN" compare -k "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_weights/compare.yaml" -o "$out" \
  > "$GOLDEN_TMP/c.txt" 2> "$GOLDEN_TMP/e.txt"
set -e
ws=$(workspace_of "$out" compare)
[ -f "$ws/compare_report.json" ] || fail "no report: $(tail -20 "$GOLDEN_TMP/e.txt")"
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
for k in res["kernel_results"]:
    name = k["extra"]["kernel_id"]
    checks = {c["name"]: c for c in k["integrity"]["checks"]}
    assert k["correctness_state"] == "SUCCESS", (name, k["errors"])
    assert checks["timed_outputs"]["status"] == "pass", (name, checks["timed_outputs"])
    assert checks["timed_outputs"]["data"]["compared_with_reference"] >= 2, checks["timed_outputs"]
    assert not k["integrity"]["rejected"], (name, k["integrity"]["reason"])
v = {x["kernel_id"]: x["verdict"] for x in res["verdicts"]}
assert v["copy"] != "not_ranked", v
PY
echo "ok: py_harness_weights golden"
