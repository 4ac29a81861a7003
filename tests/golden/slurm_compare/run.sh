#!/usr/bin/env bash
# Compare and analyze batches through a real single-node Slurm (tests/slurm/cluster.sh): the
# merged report has the local run's verdicts (correctness outcomes, rankings, winner) with the
# same seed (host examples, baseline as reference; an analyze batch with a reference); the gate
# fixtures (separate reference) are rejected as locally; a timed batch gives valid verdicts timed together in one job; the merged
# workspaces are registered in the results store. Skips (77) where the cluster cannot start.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/slurm/golden_lib.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/batch_cases.sh"
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
batch_analyze_case slurm "$T"

# 4. timed compare: the correct kernels are timed together in the timing job; verdicts valid.
batch_timed_compare_case slurm "$T" > /dev/null
echo "ok: slurm compare/analyze batches"
