# Cases shared by the Slurm and Ray batch golden tests (sourced after common.sh and the engine's
# golden_lib.sh): the same analyze/compare batches must give the same reports on either engine.

# batch_analyze_case ENGINE DIR SAME_VERDICTS_ARGS...: an analyze batch with a reference and
# timing per job gives the local run's outcomes and exit code 1 (one kernel is incorrect).
batch_analyze_case() {
  local engine=$1 dir=$2 ex="$MAGPIE_SOURCE_DIR/examples/host" rc1 rc2; shift 2
  cat > "$dir/analyze.yaml" <<YAML
kernels:
  - {id: vector_add_unrolled, type: host, source_files: [$ex/vector_add_unrolled.cpp]}
  - {id: vector_add_offbyone, type: host, source_files: [$ex/vector_add_offbyone.cpp]}
reference: {id: vector_add, type: host, source_files: [$ex/vector_add.cpp]}
performance:
  timing: {warmup: 2, min_samples: 5, min_time_s: 0.05, max_time_s: 1}
YAML
  set +e
  "$MAGPIE_BIN" analyze -k "$dir/analyze.yaml" --seed 5 -o "$dir/alocal" > /dev/null; rc1=$?
  "$MAGPIE_BIN" -e "$engine" analyze -k "$dir/analyze.yaml" --seed 5 -o "$dir/a$engine" > "$dir/a.txt" 2>&1; rc2=$?
  set -e
  [ "$rc1" -eq 1 ] && [ "$rc2" -eq 1 ] || fail "analyze exit codes local=$rc1 $engine=$rc2: $(tail "$dir/a.txt")"
  python3 "$MAGPIE_SOURCE_DIR/tests/golden/slurm_compare/same_verdicts.py" \
    "$(workspace_of "$dir/alocal" analyze)/analyze_report.json" \
    "$(workspace_of "$dir/a$engine" analyze)/analyze_report.json" "$@"
  check_json "$(workspace_of "$dir/a$engine" analyze)/analyze_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["results"][0]
assert ok["performance_state"] == "SUCCESS" and ok["timing"]["samples"] >= 5, ok["performance_state"]
assert r["reference"]["extra"]["kernel_id"] == "vector_add"
assert r["scheduler"]["timing"]["interleaved"] is False
PY
}

# batch_timed_compare_case ENGINE DIR: a timed compare batch times the correct kernels together
# in one job (same sample count), gives valid verdicts and registers the merged workspace.
# Prints the workspace.
batch_timed_compare_case() {
  local engine=$1 dir=$2 ws
  "$MAGPIE_BIN" -e "$engine" compare -k "$MAGPIE_SOURCE_DIR/examples/host/compare.yaml" --seed 42 --max-time 2 \
    --min-time 0.05 -o "$dir/timed" > /dev/null 2>&1 || fail "timed $engine compare"
  ws=$(workspace_of "$dir/timed" compare)
  check_json "$ws/compare_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
res, s = r["results"], r["scheduler"]
assert res["comparison_metrics"]["correctness"] == [True, True, True, False]
v = {x["kernel_id"]: x for x in res["verdicts"]}
assert v["vector_add"]["verdict"] == "baseline" and v["vector_add_offbyone"]["verdict"] == "not_ranked"
# Known weakness (issue 35, docs/harness-protocol.md): on a loaded node clock_gain can reject an
# honest kernel (per-process overheads differ by milliseconds); this test checks the engine's
# plumbing, so such a rejection is reported, not failed. Any other not_ranked still fails.
gain = [k for k in ("vector_add_unrolled", "vector_add_twopass") if v[k]["verdict"] == "not_ranked"
        and "the time of record claims" in (v[k].get("reason") or "")]
if gain:
    print("NOTE: clock_gain rejected honest kernel(s) under load:", gain)
for k in ("vector_add_unrolled", "vector_add_twopass"):
    if k in gain:
        continue
    assert v[k]["verdict"] in ("faster", "slower", "same", "ambiguous"), v[k]
    assert v[k]["ci_low"] <= v[k]["speedup_vs_baseline"] <= v[k]["ci_high"], v[k]
assert sorted(i for i, _ in res["rankings"]) == sorted({0, 1, 2} - {v[k]["index"] for k in gain}), res["rankings"]
assert res["winner"] in (0, 1, 2)
assert s["timing_interleaved"] is True and s["timing"]["timed_indices"] == [0, 1, 2], s["timing"]
n = [res["kernel_results"][i]["timing"]["samples"] for i in range(3)]
assert len(set(n)) == 1, n  # sampled interleaved in one job
assert all(res["kernel_results"][i]["jobs"]["timing"]["name"] == "timing" for i in range(3))
assert {j["name"]: j["state"] for j in s["jobs"]}["timing"] == "COMPLETED"
PY
  "$MAGPIE_BIN" results list -o "$dir/timed" --json > "$dir/runs.json"
  check_json "$dir/runs.json" "$ws" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
runs = runs["runs"] if isinstance(runs, dict) else runs
assert any(str(x.get("workspace", "")).rstrip("/") == sys.argv[2] for x in runs), runs
PY
  echo "$ws"
}

# batch_failures_check REPORT STATUS_JSON: the collected failure batch (reference, a kernel that
# does not compile, one past its time limit, one cancelled) is merged with each job's final state.
batch_failures_check() {
  check_json "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
st = {j["name"]: j["state"] for j in json.load(open(sys.argv[2]))["jobs"]}
jobs = {j["name"]: j for j in r["scheduler"]["jobs"]}
want = {"reference": "COMPLETED", "k01_broken": "FAILED", "k02_sleeper": "TIMEOUT", "k03_cancelled": "CANCELLED"}
assert {n: j["state"] for n, j in jobs.items()} == want == st, (jobs, st)
assert jobs["k01_broken"]["exit_code"] == 1 and jobs["k02_sleeper"]["reason"] == "TimeLimit", jobs
assert r["scheduler"]["job_states"] == {"CANCELLED": 1, "COMPLETED": 1, "FAILED": 1, "TIMEOUT": 1}
rows = {k["extra"]["kernel_id"]: k for k in r["results"]["kernel_results"]}
assert rows["vector_add"]["outcome"] == "passed"
b = rows["broken"]
assert b["compiling_state"] == "FAILED" and b["outcome"] == "failed" and "this_is_not_declared" in b["errors"][0], b["errors"]
s = rows["sleeper"]
assert s["outcome"] == "timeout" and s["job_state"] == "TIMEOUT" and "ended TIMEOUT" in s["errors"][0], s
assert rows["cancelled"]["job_state"] == "CANCELLED"
assert r["results"]["comparison_metrics"]["correctness"] == [True, False, False, False]
assert all(v["verdict"] == "not_ranked" for v in r["results"]["verdicts"][1:])
assert r["results"]["winner"] == 0
PY
}
