#!/usr/bin/env bash
# Magpie drop-in, kernel side: Magpie-shaped kernel configs (every field of research magpie.md
# §3.1/§3.2) run the way Magpie's docs run them: from the repository root, relative working_dir,
# "./run_test.sh" testcases, positional kernels with -t, `-c config.yaml`; host kernels stand in
# for GPU ones. Also: type inference (no --type, --reference takes the kernel's type).
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
command -v g++ >/dev/null || { echo "skip: g++ not found"; exit 77; }
root="$GOLDEN_TMP/repo"
cp -r "$MAGPIE_SOURCE_DIR/tests/golden/dropin_kernel_yaml/corpus" "$root"
cd "$root"
export DROPIN_FLAG=expanded-flag
ex=examples/simple_host_test
run() {  # run NAME EXPECTED_RC ARGS... : stdout/stderr kept in $GOLDEN_TMP/NAME.{out,err}
  local name=$1 want=$2; shift 2
  set +e
  "$MAGPIE_BIN" "$@" > "$GOLDEN_TMP/$name.out" 2> "$GOLDEN_TMP/$name.err"
  local rc=$?
  set -e
  [ "$rc" -eq "$want" ] || fail "$name: exit $rc, expected $want; stderr: $(tail -20 "$GOLDEN_TMP/$name.err")"
}
report() { ls -d "$1"/"$2"_* 2>/dev/null | sort | tail -n 1; }

# 1. analyze -k with a relative working_dir and ./run_test.sh (Magpie's standard form)
run analyze 0 analyze -k $ex/analyze.yaml --no-perf
grep -q "Correctness: SUCCESS" "$GOLDEN_TMP/analyze.out" || fail "analyze: $(cat "$GOLDEN_TMP/analyze.out")"
[ "$(cat $ex/ran_in.txt)" = "$root/$ex" ] || fail "testcase ran in $(cat $ex/ran_in.txt), not in working_dir"
ws=$(report results analyze_vector_add)
[ -f "$ws/analyze_report.json" ] || fail "no report under ./results (Magpie's default output dir)"
check_json "$ws/analyze_report.json" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
k = r["results"][0]
assert k["correctness_state"] == "SUCCESS" and k["compiling_state"] == "SUCCESS", k
assert k["extra"]["kernel_type"] == "HOST"
PY
grep -q "vector_add.cpp" "$ws/config.yaml" || fail "config snapshot lacks the source file"

# 2. every field + framework config; warnings for the parts magpie does not act on
run full 0 -c config.yaml analyze -k $ex/analyze_full.yaml
grep -q "latency section is accepted" "$GOLDEN_TMP/full.err" || fail "no latency warning: $(cat "$GOLDEN_TMP/full.err")"
[ -f $ex/profiled.txt ] && grep -q "profiled vector_add_full" $ex/profiled.txt || fail "prof_command did not run in working_dir"
ws=$(report results_from_config analyze_vector_add_full)
[ -n "$ws" ] || fail "output.directory of the framework config not used"
check_json "$ws/analyze_report.json" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["results"][0]
assert k["correctness_state"] == "SUCCESS", k["errors"]
assert k["performance_result"]["backend"] == "prof_command", k["performance_result"]
PY

# 3. compare: kernel + kernels concatenated, list-of-lists commands, a wrong candidate
run compare 0 compare -k $ex/compare.yaml --no-perf
ws=$(report results compare)
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
states = {k["extra"]["kernel_id"]: k["correctness_state"] for k in res["kernel_results"]}
assert states == {"vector_add_wrong": "FAILED", "vector_add": "SUCCESS", "vector_add_fast": "SUCCESS"}, states
PY

# 4. positional kernels with -t ./run_test.sh: working_dir is the file's directory; the type
#    comes from the file (host C++), not --type's old hip default
export PATH="$root/$ex/tools:$PATH"
run positional 0 analyze $ex/vector_add.cpp -t ./run_test.sh --compile-cmd "g++ -O2 -o vector_add vector_add.cpp" --no-perf
grep -q "Type: HOST" "$GOLDEN_TMP/positional.out" || fail "type not inferred: $(cat "$GOLDEN_TMP/positional.out")"
run positional_cmp 0 compare $ex/vector_add.cpp $ex/vector_add_fast.cpp -t ./run_test.sh \
  --compile-cmd "g++ -O2 -o vector_add vector_add.cpp" --no-perf

# 5. a failing kernel: exit 1 (Magpie: any kernel not correct)
run wrong 1 analyze $ex/vector_add_wrong.cpp -t ./run_test.sh --compile-cmd "g++ -O2 -o vector_add vector_add_wrong.cpp" --no-perf

# 6. ray_config with scheduler.environment: local (Magpie's precedence) and the accordo backend
run ray 0 analyze -k $ex/analyze_ray.yaml --no-perf
grep -q "accordo (IntelliKit, AMD) is not provided" "$GOLDEN_TMP/ray.err" || fail "no accordo warning"

# 7. PyTorch alias `py`, testcase by exit code
run py 0 analyze -k examples/simple_py_test/analyze.yaml --no-perf
grep -q "Type: PYTORCH" "$GOLDEN_TMP/py.out" || fail "py alias: $(cat "$GOLDEN_TMP/py.out")"

# 8. a working_dir that only exists relative to the YAML file: used, with a warning naming both
mkdir -p nested && sed 's#working_dir: "examples/simple_host_test"#working_dir: "../examples/simple_host_test"#' \
  $ex/analyze.yaml > nested/analyze.yaml
run other_rule 0 analyze -k nested/analyze.yaml --no-perf
grep -q "does not exist relative to the current directory" "$GOLDEN_TMP/other_rule.err" || fail "no rule warning"
[ "$(cat $ex/ran_in.txt)" = "$root/$ex" ] || fail "fallback working_dir wrong: $(cat $ex/ran_in.txt)"

# 9. a testcase that needs a missing Python module: the rejection line ends with the exception
# (the reason a held-out config fails here), however long the output before it
printf 'import sys\nsys.stderr.write("noise " * 80 + "\\n")\nimport magpie_dropin_missing_module\n' \
  > examples/simple_py_test/needs_module.py
run missing_module 0 compare examples/simple_py_test/kernel.py examples/simple_py_test/check.py --type py \
  -t "python3 needs_module.py" --no-perf
grep -q "rejected: .*ModuleNotFoundError: No module named 'magpie_dropin_missing_module'" "$GOLDEN_TMP/missing_module.out" \
  || fail "reason not shown: $(cat "$GOLDEN_TMP/missing_module.out")"

# 9b. a GPU kernel type on a machine without a GPU: the failure says so first
if ! "$MAGPIE_BIN" --gpu-info | grep -q "No GPU detected"; then
  echo "note: a GPU is present; the no-GPU reason is not checked"
else
  printf 'kernel:\n  id: needs_gpu\n  type: cuda\n  testcase_command: "false"\n' > needs_gpu.yaml
  run no_gpu 1 analyze -k needs_gpu.yaml --no-perf
  grep -q -- "- no GPU detected (nvidia-smi / rocminfo found none): a CUDA testcase cannot run" "$GOLDEN_TMP/no_gpu.out" \
    || fail "no GPU reason: $(cat "$GOLDEN_TMP/no_gpu.out")"
fi

# 10. no --type, --reference takes the kernel's type (was: "hipcc not found")
cd "$MAGPIE_SOURCE_DIR"
run reference 0 analyze examples/host/vector_add_unrolled.cpp --reference examples/host/vector_add.cpp \
  --max-time 0.5 --min-time 0.05 -o "$GOLDEN_TMP/refres"
grep -q "Correctness: SUCCESS (outputs)" "$GOLDEN_TMP/reference.out" || fail "reference run: $(cat "$GOLDEN_TMP/reference.out")"
echo "ok: dropin kernel yaml corpus"
