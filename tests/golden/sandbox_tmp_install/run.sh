#!/usr/bin/env bash
# magpie itself under /tmp (a clone or an unpacked build there): the candidate sandbox covers /tmp
# with a private tmpfs, yet magpie's own harness files (python/magpie_bench, include/) must stay
# readable inside it. Before the fix every python candidate failed with "No module named
# magpie_bench" when the checkout was under /tmp (CI on a clone in /tmp: 3 goldens failed).
set -euo pipefail
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
export MAGPIE_PYTHON="$py" PYTHONDONTWRITEBYTECODE=1
inst="/tmp/magpie_tmp_install.$$"
trap 'rm -rf "$inst"' EXIT
mkdir -p "$inst"
# A build directory's layout: the binary with python/, include/ and data/ beside it (links, as
# the build makes them, into a source tree that is itself under /tmp).
cp "$MAGPIE_BIN" "$inst/magpie"
mkdir -p "$inst/src"
cp -r "$MAGPIE_SOURCE_DIR/python" "$MAGPIE_SOURCE_DIR/include" "$MAGPIE_SOURCE_DIR/data" "$inst/src/"
for d in python include data; do ln -s "$inst/src/$d" "$inst/$d"; done
"$inst/magpie" __sandbox -- /bin/true 2>/dev/null || { echo "SKIP: no sandbox here (user namespaces refused)"; exit 77; }
out="$GOLDEN_TMP/res"
set +e
(cd "$GOLDEN_TMP" && env -u MAGPIE_HOME -u MAGPIE_DATA_DIR "$inst/magpie" compare \
  -k "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_weights/compare.yaml" -o "$out" --max-time 2) \
  > "$GOLDEN_TMP/c.txt" 2> "$GOLDEN_TMP/e.txt"
set -e
ws=$(workspace_of "$out" compare)
[ -f "$ws/compare_report.json" ] || fail "no report: $(tail -20 "$GOLDEN_TMP/e.txt")"
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
for k in res["kernel_results"]:
    checks = {c["name"]: c for c in k["integrity"]["checks"]}
    assert k["correctness_state"] == "SUCCESS", (k["extra"]["kernel_id"], k["errors"])
    assert checks["sandbox"]["status"] == "pass", checks["sandbox"]
PY
echo "ok: sandbox_tmp_install golden"
