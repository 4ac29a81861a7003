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
# A build directory's layout: the binary with python/, include/ and data/ beside it as links into
# a source tree that is itself under /tmp (as `cmake --build` makes them).
mkdir -p "$inst/src" "$inst/build"
cp "$MAGPIE_BIN" "$inst/build/magpie"
cp -r "$MAGPIE_SOURCE_DIR/python" "$MAGPIE_SOURCE_DIR/include" "$MAGPIE_SOURCE_DIR/data" "$inst/src/"
for d in python include data; do ln -s "$inst/src/$d" "$inst/build/$d"; done
"$inst/build/magpie" __sandbox -- /bin/true 2>/dev/null || { echo "SKIP: no sandbox here (user namespaces refused)"; exit 77; }
run() {  # run NAME YAML: a compare with the copied magpie, no MAGPIE_HOME/DATA_DIR to lean on
  set +e
  (cd "$GOLDEN_TMP" && env -u MAGPIE_HOME -u MAGPIE_DATA_DIR "$inst/build/magpie" compare -k "$2" -o "$GOLDEN_TMP/$1" \
    --max-time 2) > "$GOLDEN_TMP/$1.txt" 2> "$GOLDEN_TMP/$1.err"
  set -e
  ws=$(workspace_of "$GOLDEN_TMP/$1" compare)
  [ -f "$ws/compare_report.json" ] || fail "$1: no report: $(tail -20 "$GOLDEN_TMP/$1.err")"
  check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
for k in res["kernel_results"]:
    if k["extra"]["kernel_id"] == "vector_add_offbyone":
        assert k["correctness_state"] == "FAILED" and "NaN/inf pattern" in str(k["errors"]), k["errors"]
        continue
    checks = {c["name"]: c for c in k["integrity"]["checks"]}
    assert k["correctness_state"] == "SUCCESS", (k["extra"]["kernel_id"], k["errors"])
    assert checks["sandbox"]["status"] == "pass", checks["sandbox"]
PY
}
# Python candidates import magpie_bench from the build's python/ link.
run py "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_weights/compare.yaml"
# Host candidates whose working directory is the build directory itself: the sandbox binds it
# (with its include/ link, whose target lies outside it) and must still show the link's target.
cp "$MAGPIE_SOURCE_DIR"/examples/host/*.cpp "$MAGPIE_SOURCE_DIR/examples/host/compare.yaml" "$inst/build/"
run host "$inst/build/compare.yaml"
echo "ok: sandbox_tmp_install golden"
