#!/usr/bin/env bash
# Compare and analyze batches through a real single-node Slurm (tests/slurm/cluster.sh): the
# merged report has the local run's verdicts (correctness outcomes, rankings, winner) with the
# same seed (host examples, baseline as reference; an analyze batch with a reference); the gate
# fixtures (separate reference) are rejected as locally; a timed batch gives valid verdicts timed together in one job; the merged
# workspaces are registered in the results store. Skips (77) where the cluster cannot start.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/slurm/golden_lib.sh"
slurm_up
EX="$MAGPIE_SOURCE_DIR/examples/host"
HERE="$MAGPIE_SOURCE_DIR/tests/golden/slurm_compare"
T="$GOLDEN_TMP"

# 1. compare, no timing, fixed seed: local and Slurm give the same verdicts.
"$MAGPIE_BIN" compare -k "$EX/compare.yaml" --no-perf --seed 42 -o "$T/local" > /dev/null || fail "local compare"
"$MAGPIE_BIN" -e slurm compare -k "$EX/compare.yaml" --no-perf --seed 42 -o "$T/slurm" > "$T/slurm.txt" \
  || fail "slurm compare exited $?: $(tail -5 "$T/slurm.txt")"
grep -q "Correctness: 3/4 passed" "$T/slurm.txt" || fail "slurm console: $(cat "$T/slurm.txt")"
python3 "$HERE/same_verdicts.py" "$(workspace_of "$T/local" compare)/compare_report.json" \
  "$(workspace_of "$T/slurm" compare)/compare_report.json"
check_json "$(workspace_of "$T/slurm" compare)/compare_report.json" "$SLURM_ACCOUNTING" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["scheduler"]
jobs = {j["name"]: j for j in s["jobs"]}
assert set(jobs) == {"reference", "k01_vector_add_unrolled", "k02_vector_add_twopass", "k03_vector_add_offbyone"}, jobs
assert jobs["reference"]["state"] == "COMPLETED" and jobs["k03_vector_add_offbyone"]["state"] == "FAILED"
assert jobs["k03_vector_add_offbyone"]["exit_code"] == 1  # analyze semantics: the kernel is not correct
assert all(j["after"] == ["reference"] for n, j in jobs.items() if n != "reference")
if sys.argv[2] == "1":  # the cluster has slurmdbd: every job's final state was confirmed by sacct
    assert all("sacct" in j["source"] for j in jobs.values()), [j["source"] for j in jobs.values()]
assert s["timing_interleaved"] is False and "no-perf" in s["timing"]["note"]
assert r["results"]["kernel_results"][0]["correctness_method"] == "reference"
PY

# 2. gate fixtures with a separate reference entry: each gate rejects what the local gates
#    golden test shows it rejects (tests/golden/gates), now in one job per candidate.
"$MAGPIE_BIN" -e slurm compare -k "$MAGPIE_SOURCE_DIR/tests/golden/gates_fixtures/gates.yaml" --no-perf --seed 11 \
  -o "$T/gslurm" > /dev/null || fail "slurm gates compare"
check_json "$(workspace_of "$T/gslurm" compare)/compare_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
res = r["results"]
ids = [k["extra"]["kernel_id"] for k in res["kernel_results"]]
assert ids == ["honest", "zeros", "constant", "copy_input", "mutates_input", "first_trial_only"], ids
assert res["comparison_metrics"]["correctness"] == [True, False, False, False, False, False], res["comparison_metrics"]
assert all(k["outcome"] == "incorrect" for k in res["kernel_results"][1:]), [k["outcome"] for k in res["kernel_results"]]
assert res["reference"] == "reference" and r["reference"]["correctness_method"] == "reference"
assert res["winner"] == 0
assert [j["name"] for j in r["scheduler"]["jobs"]][0] == "reference" and len(r["scheduler"]["jobs"]) == 7
assert r["scheduler"]["inputs"]["identical"] is True
PY

# 3. analyze batch with a reference and timing per job: same outcomes, exit code 1 as locally.
cat > "$T/analyze.yaml" <<YAML
kernels:
  - {id: vector_add_unrolled, type: host, source_files: [$EX/vector_add_unrolled.cpp]}
  - {id: vector_add_offbyone, type: host, source_files: [$EX/vector_add_offbyone.cpp]}
reference: {id: vector_add, type: host, source_files: [$EX/vector_add.cpp]}
performance:
  timing: {warmup: 2, min_samples: 5, min_time_s: 0.05, max_time_s: 1}
YAML
set +e
"$MAGPIE_BIN" analyze -k "$T/analyze.yaml" --seed 5 -o "$T/alocal" > /dev/null; rc1=$?
"$MAGPIE_BIN" -e slurm analyze -k "$T/analyze.yaml" --seed 5 -o "$T/aslurm" > "$T/a.txt"; rc2=$?
set -e
[ "$rc1" -eq 1 ] && [ "$rc2" -eq 1 ] || fail "analyze exit codes local=$rc1 slurm=$rc2: $(cat "$T/a.txt")"
python3 "$HERE/same_verdicts.py" "$(workspace_of "$T/alocal" analyze)/analyze_report.json" \
  "$(workspace_of "$T/aslurm" analyze)/analyze_report.json"
check_json "$(workspace_of "$T/aslurm" analyze)/analyze_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["results"][0]
assert ok["performance_state"] == "SUCCESS" and ok["timing"]["samples"] >= 5, ok["performance_state"]
assert r["reference"]["extra"]["kernel_id"] == "vector_add"
assert r["scheduler"]["timing"]["interleaved"] is False
PY

# 4. timed compare: the correct kernels are timed together in the timing job; verdicts valid.
"$MAGPIE_BIN" -e slurm compare -k "$EX/compare.yaml" --seed 42 --max-time 2 --min-time 0.05 -o "$T/timed" \
  > /dev/null || fail "timed slurm compare"
ws=$(workspace_of "$T/timed" compare)
check_json "$ws/compare_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
res, s = r["results"], r["scheduler"]
assert res["comparison_metrics"]["correctness"] == [True, True, True, False]
v = {x["kernel_id"]: x for x in res["verdicts"]}
assert v["vector_add"]["verdict"] == "baseline" and v["vector_add_offbyone"]["verdict"] == "not_ranked"
for k in ("vector_add_unrolled", "vector_add_twopass"):
    assert v[k]["verdict"] in ("faster", "slower", "same", "ambiguous"), v[k]
    assert v[k]["ci_low"] <= v[k]["speedup_vs_baseline"] <= v[k]["ci_high"], v[k]
assert sorted(i for i, _ in res["rankings"]) == [0, 1, 2], res["rankings"]
assert res["winner"] in (0, 1, 2)
assert s["timing_interleaved"] is True and s["timing"]["timed_indices"] == [0, 1, 2], s["timing"]
n = [res["kernel_results"][i]["timing"]["samples"] for i in range(3)]
assert len(set(n)) == 1, n  # sampled interleaved in one job
assert all(res["kernel_results"][i]["jobs"]["timing"]["name"] == "timing" for i in range(3))
assert {j["name"]: j["state"] for j in s["jobs"]}["timing"] == "COMPLETED"
PY
"$MAGPIE_BIN" results list -o "$T/timed" --json > "$T/runs.json"
check_json "$T/runs.json" "$ws" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
runs = runs["runs"] if isinstance(runs, dict) else runs
assert any(str(x.get("workspace", "")).rstrip("/") == sys.argv[2] for x in runs), runs
PY
echo "ok: slurm compare/analyze batches"
