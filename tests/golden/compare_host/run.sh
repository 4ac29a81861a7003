#!/usr/bin/env bash
# compare on the host examples: the off-by-one candidate is rejected and never ranked, correct
# candidates get a verdict with a confidence interval, the baseline is honoured, and Magpie's
# compare_report.json keys are present. Also: positional-kernel compare and a bad baseline.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
EX="$MAGPIE_SOURCE_DIR/examples/host"
out="$GOLDEN_TMP/res"
# Run from another directory than the YAML's (issue 33: no working_dir warnings for the bundled example).
(cd "$GOLDEN_TMP" && "$MAGPIE_BIN" compare -k "$EX/compare.yaml" -o "$out" --max-time 2 --min-time 0.05 --baseline 1) \
  > "$GOLDEN_TMP/c.txt" 2> "$GOLDEN_TMP/c.err" || fail "compare exited $?"
grep -q "COMPARISON RESULTS" "$GOLDEN_TMP/c.txt" || fail "no banner"
grep -q "Correctness: 3/4 passed (1 incorrect on purpose, as its YAML expects)" "$GOLDEN_TMP/c.txt" || fail "wrong correctness count"
! grep -q "WARN" "$GOLDEN_TMP/c.err" || fail "warnings: $(grep WARN "$GOLDEN_TMP/c.err")"
# nvbench-like table: median, noise, samples per implementation; the verdict with its interval.
grep -q "^     # kernel  *median  *noise  *samples  verdict$" "$GOLDEN_TMP/c.txt" || fail "table header: $(cat "$GOLDEN_TMP/c.txt")"
grep -Eq "^  ✓  0 vector_add  +[0-9.]+ (ns|us|ms)  +[0-9.]+%  +[0-9]+  (faster|slower|same|ambiguous) [0-9.]+x \(CI [0-9.]+-[0-9.]+\)$" \
  "$GOLDEN_TMP/c.txt" || fail "kernel row: $(cat "$GOLDEN_TMP/c.txt")"
grep -q "  3 vector_add_offbyone .*not ranked: incorrect (as expected: wrong on purpose)$" "$GOLDEN_TMP/c.txt" \
  || fail "expected-incorrect row: $(cat "$GOLDEN_TMP/c.txt")"
"$MAGPIE_BIN" results list -o "$out" --json > "$GOLDEN_TMP/main_runs.json" || fail "results list"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r[0]["success"] is True, r' "$GOLDEN_TMP/main_runs.json" \
  || fail "the example with its intentional wrong kernel was registered as failed"
ws=$(workspace_of "$out" compare)
check_json "$ws/compare_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "compare"
res = r["results"]
for key in ("kernel_results", "comparison_metrics", "winner", "rankings", "summary", "verdicts", "baseline_index"):
    assert key in res, key
assert res["baseline_index"] == 1 and res["reference"] == "vector_add_unrolled"
cm = res["comparison_metrics"]
assert cm["correctness"] == [True, True, True, False], cm["correctness"]
assert cm["all_correct"] is False and cm["as_expected"] is True
assert cm["perf_scores"][3] is None
v = {x["kernel_id"]: x for x in res["verdicts"]}
assert v["vector_add_unrolled"]["verdict"] == "baseline"
assert v["vector_add_offbyone"]["verdict"] == "not_ranked"
for k in ("vector_add", "vector_add_twopass"):
    assert v[k]["verdict"] in ("faster", "slower", "same", "ambiguous"), v[k]
    assert v[k]["ci_low"] <= v[k]["speedup_vs_baseline"] <= v[k]["ci_high"], v[k]
ranked = [i for i, _ in res["rankings"]]
assert 3 not in ranked and sorted(ranked) == [0, 1, 2], ranked
assert res["winner"] in (0, 1, 2)
bad = res["kernel_results"][3]
assert bad["outcome"] == "incorrect" and bad["performance_state"] == "SKIPPED"
# the three timed kernels were sampled interleaved: equal sample counts
n = [res["kernel_results"][i]["timing"]["samples"] for i in range(3)]
assert len(set(n)) == 1, n
# where the wall time went (issue 36): the phases add up to the total
ph = res["phases"]
assert all(ph[k] >= 0 for k in ("compile_s", "correctness_s", "timing_s", "other_s")), ph
assert abs(ph["compile_s"] + ph["correctness_s"] + ph["timing_s"] + ph["other_s"] - ph["total_s"]) < 0.01, ph
assert ph["compile_s"] > 0 and ph["timing_s"] > 0, ph
PY
# Compiles run in parallel before any correctness run (issue 36): a kernel that does not compile
# fails alone, with its compiler's message; the others compile, pass and are timed; the log names
# every kernel's compile in kernel order, whichever finished first.
printf 'int main( { return 0; }\n' > "$GOLDEN_TMP/broken.cpp"
cat > "$GOLDEN_TMP/broken.yaml" <<Y
kernels:
  - {id: k_a, type: host, source_files: [$EX/vector_add.cpp]}
  - {id: k_broken, type: host, source_files: [$GOLDEN_TMP/broken.cpp]}
  - {id: k_c, type: host, source_files: [$EX/vector_add_unrolled.cpp]}
correctness: {trials: 5}
Y
"$MAGPIE_BIN" compare -k "$GOLDEN_TMP/broken.yaml" -o "$out/broken" --no-perf > "$GOLDEN_TMP/b.txt" 2> "$GOLDEN_TMP/b.err" \
  || fail "compare with a kernel that does not compile: exited $? (the failure belongs in the report)"
grep -q "k_broken.*FAILED\|k_broken.*failed" "$GOLDEN_TMP/b.txt" || fail "the failed compile is not in the summary: $(cat "$GOLDEN_TMP/b.txt")"
[ "$(grep -oE '\[k_[a-z]+\] compile: (SUCCESS|FAILED)' "$GOLDEN_TMP/b.err" | tr '\n' ' ')" = \
  "[k_a] compile: SUCCESS [k_broken] compile: FAILED [k_c] compile: SUCCESS " ] || fail "compile log order: $(cat "$GOLDEN_TMP/b.err")"
ws=$(workspace_of "$out/broken" compare)
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
k = {x["extra"]["kernel_id"]: x for x in res["kernel_results"]}
assert k["k_broken"]["compiling_state"] == "FAILED" and k["k_broken"]["outcome"] == "failed", k["k_broken"]
assert any("Compile command 1/1 failed" in e for e in k["k_broken"]["errors"]), k["k_broken"]["errors"]
for i in ("k_a", "k_c"):
    assert k[i]["compiling_state"] == "SUCCESS" and k[i]["correctness_state"] == "SUCCESS", k[i]
assert res["phases"]["compile_s"] > 0, res["phases"]
PY
# Positional kernels: ids kernel_<i>_<stem>, compare needs >= 2 kernels, bad baseline is an error.
set +e
"$MAGPIE_BIN" compare "$EX/vector_add.cpp" --type host -o "$out" --no-perf 2> "$GOLDEN_TMP/e1.txt"; rc1=$?
"$MAGPIE_BIN" compare "$EX/vector_add.cpp" "$EX/vector_add_unrolled.cpp" --type host --baseline 5 -o "$out" 2> "$GOLDEN_TMP/e2.txt"; rc2=$?
set -e
[ "$rc1" -eq 1 ] && grep -q "at least 2 kernels" "$GOLDEN_TMP/e1.txt" || fail "single-kernel compare: rc=$rc1 $(cat "$GOLDEN_TMP/e1.txt")"
[ "$rc2" -eq 1 ] && grep -q "out of range" "$GOLDEN_TMP/e2.txt" || fail "bad baseline: rc=$rc2 $(cat "$GOLDEN_TMP/e2.txt")"
"$MAGPIE_BIN" compare "$EX/vector_add.cpp" "$EX/vector_add_offbyone.cpp" --type host --no-perf -o "$out/pos" > /dev/null
ws=$(workspace_of "$out/pos" compare)
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
ids = [k["extra"]["kernel_id"] for k in res["kernel_results"]]
assert ids == ["kernel_0_vector_add", "kernel_1_vector_add_offbyone"], ids
assert res["comparison_metrics"]["correctness"] == [True, False]
assert res["winner"] == 0
PY
# Every run is registered in the results store next to its workspaces.
"$MAGPIE_BIN" results list -o "$out/pos" --json > "$GOLDEN_TMP/runs.json" || fail "results list"
check_json "$GOLDEN_TMP/runs.json" "$ws" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
runs = runs["runs"] if isinstance(runs, dict) else runs
assert [r["workspace"] for r in runs] == [sys.argv[2]], runs
assert runs[0]["mode"] == "compare", runs[0]
PY
echo "ok: compare host golden"
