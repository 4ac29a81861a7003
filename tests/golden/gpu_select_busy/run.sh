#!/usr/bin/env bash
# GPU auto-selection with one GPU busy, through the real binary and a stand-in nvidia-smi that
# prints the fixtures of two H200s (tests/fixtures/gpu/): `gpu-info --select` picks the idle
# GPU 1 and names GPU 0 as busy (by its process, or by its utilization when the process is in
# another container); two GPUs cannot be had; then the select stage of tests/gpu/multi_gpu_x2.sh
# (compare workers, -w 2 with no visible-devices variable, run every process on the idle GPU).
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
# The testcases append their device to a log in the test's directory (what this test checks);
# the candidate sandbox (issue 35) would give them a private /tmp, so it is off here.
export MAGPIE_NO_SANDBOX=1
cd "$GOLDEN_TMP"
FX="$MAGPIE_SOURCE_DIR/tests/fixtures/gpu"
export PATH="$FX:$PATH"
unset CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES
for case in h200x2_one_busy h200x2_busy_in_container; do
  export MAGPIE_FAKE_SMI_DIR="$FX/$case"
  "$MAGPIE_BIN" gpu-info --select 1 > "$case.txt" || fail "$case: gpu-info --select 1"
  grep -q "^Selected GPU(s): 1$" "$case.txt" || fail "$case: $(cat "$case.txt")"
  grep -q "^Environment: CUDA_VISIBLE_DEVICES=1 CUDA_DEVICE_ORDER=PCI_BUS_ID$" "$case.txt" || fail "$case env"
  "$MAGPIE_BIN" gpu-info --select 1 --json > "$case.json"
  check_json "$case.json" "$case" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["indices"] == [1] and j["vendor"] == "NVIDIA", j
want = "0 (1 process(es))" if sys.argv[2] == "h200x2_one_busy" else "0 (100% utilized)"
assert j["busy"] == [want], j["busy"]
assert [g["index"] for g in j["observed"]] == [0, 1], j["observed"]
PY
  set +e; "$MAGPIE_BIN" gpu-info --select 2 > /dev/null 2> "$case.err"; rc=$?; set -e
  [ "$rc" -eq 1 ] || fail "$case: --select 2 exited $rc"
  grep -q "needed 2 idle GPU(s) but only found 1" "$case.err" || fail "$case: $(cat "$case.err")"
done
grep -q "Busy: 0 (1 process(es))" h200x2_one_busy.txt || fail "busy GPU not named"
set +e; "$MAGPIE_BIN" gpu-info --min-free-gb 4 > /dev/null 2>&1; rc=$?; set -e
[ "$rc" -eq 2 ] || fail "--min-free-gb without --select exited $rc"

# The select stage of the two-GPU script itself (tests/gpu/multi_gpu_x2.sh, MULTI_ONLY=select),
# with the recorded busy GPU 0 and a stand-in load: gpu-info --select 1 / 2, and compare -w 2
# (no visible-devices variable) runs every process on the idle GPU 1 only.
export MAGPIE_FAKE_SMI_DIR="$FX/h200x2_one_busy"
bash "$MAGPIE_SOURCE_DIR/tests/golden/compare_workers/make_kernels.sh" k
LOGGED="$MAGPIE_SOURCE_DIR/tests/golden/compare_workers/magpie_logged.sh"  # one device log per compare
mkdir out
set +e
MAGPIE_REAL_BIN="$MAGPIE_BIN" MAGPIE_BIN="$LOGGED" OUT="$PWD/out" MULTI_ONLY=select MULTI_COMPARE_YAML="$PWD/k/compare.yaml" \
  MULTI_COMPARE_ARGS="--max-time 1" MULTI_LOAD_CMD="echo load ready; exec sleep 300" \
  bash "$MAGPIE_SOURCE_DIR/tests/gpu/multi_gpu_x2.sh" > script.txt 2>&1
rc=$?
set -e
cat script.txt
[ "$rc" -eq 0 ] || fail "multi_gpu_x2.sh (select stage) exited $rc"
for r in "load process on GPU 0" "gpu-info --select 1 (GPU 0 busy)" "gpu-info --select 2 refused" "compare -w 2 with GPU 0 busy"; do
  grep -Fq "$(printf '%-34s %-5s' "$r" ok)" script.txt || fail "no ok row '$r'"
done
mkdir x && tar -xzf out/multi_gpu_x2_logs.tar.gz -C x
grep -q "compare workers: GPU 0 (1 process(es)) is busy: not used" x/busy.err || fail "busy GPU not said: $(cat x/busy.err)"
check_json "$(workspace_of x/busy compare)/compare_report.json" x/busy.devlog <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
w = r["workers"]
assert w["requested"] == 2 and w["workers"] == 1 and w["devices"] == ["1"], w
assert w["source"] == "idle GPUs reported by nvidia-smi", w
assert "2 worker(s) asked for, 1 GPU(s)" in w["reason"], w
devs = {l.split()[2] for l in open(sys.argv[2]) if l.strip()}
assert devs == {"1"}, devs  # every correctness and timing process on the idle GPU
assert {v["kernel_id"]: v["verdict"] for v in r["verdicts"]}["fast"] == "faster", r["verdicts"]
PY
# The script saved nvidia-smi's outputs while the load ran (fixtures for tests/fixtures/gpu).
cmp x/smi_query_gpu_busy.txt "$FX/h200x2_one_busy/query_gpu.csv" || fail "smi_query_gpu_busy.txt"
cmp x/smi_compute_apps_busy.txt "$FX/h200x2_one_busy/compute_apps.csv" || fail "smi_compute_apps_busy.txt"
echo "ok: gpu_select_busy"
