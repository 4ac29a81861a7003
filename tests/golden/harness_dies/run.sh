#!/usr/bin/env bash
# A timing process that exits mid-run must end that kernel's timing with an error, never the
# supervisor: magpie used to die of SIGPIPE (exit 141, no report) writing its next command to the
# dead harness's control pipe (seen in the H100 loop run of 2026-12-07).
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
HERE="$MAGPIE_SOURCE_DIR/tests/golden/harness_dies"
cp "$MAGPIE_SOURCE_DIR/examples/host/vector_add.cpp" "$HERE/dies.cpp" "$GOLDEN_TMP/"
cat > "$GOLDEN_TMP/c.yaml" <<'YAML'
kernels:
  - {id: vector_add, type: host, source_files: [vector_add.cpp]}
  - {id: dies, type: host, source_files: [dies.cpp]}
correctness: {trials: 5}
performance:
  timing: {warmup: 3, min_samples: 10, max_noise: 0.005, min_time_s: 0.2, max_time_s: 1, cold: false}
YAML
set +e
"$MAGPIE_BIN" compare -k "$GOLDEN_TMP/c.yaml" -o "$GOLDEN_TMP/res" > "$GOLDEN_TMP/out.txt" 2> "$GOLDEN_TMP/err.txt"
rc=$?
set -e
[ "$rc" -ne 141 ] || fail "supervisor killed by SIGPIPE (rc 141)"
[ "$rc" -eq 0 ] || fail "compare exited $rc: $(tail -5 "$GOLDEN_TMP/err.txt")"
ws=$(workspace_of "$GOLDEN_TMP/res" compare)
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
v = {x["kernel_id"]: x for x in res["verdicts"]}
assert v["dies"]["verdict"] == "not_ranked", v["dies"]
dies = [k for k in res["kernel_results"] if k["extra"]["kernel_id"] == "dies"][0]
assert dies["timing"]["stop_reason"] == "error", dies["timing"]
assert res["winner"] == 0, res["winner"]
PY
echo "ok: a harness that exits mid-timing is 'not timed', the supervisor survives"
