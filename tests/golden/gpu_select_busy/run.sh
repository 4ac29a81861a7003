#!/usr/bin/env bash
# GPU auto-selection with one GPU busy, through the real binary and a stand-in nvidia-smi that
# prints the fixtures of two H200s (tests/fixtures/gpu/): `gpu-info --select` picks the idle
# GPU 1 and names GPU 0 as busy (by its process, or by its utilization when the process is in
# another container); two GPUs cannot be had; compare workers (-w 2, no visible-devices
# variable) run every process on the idle GPU only.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
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

# Compare workers take the idle GPUs only.
export MAGPIE_FAKE_SMI_DIR="$FX/h200x2_one_busy"
bash "$MAGPIE_SOURCE_DIR/tests/golden/compare_workers/make_kernels.sh" k
: > dev.log
MAGPIE_TEST_DEVICE_LOG="$PWD/dev.log" "$MAGPIE_BIN" -w 2 compare -k k/compare.yaml -o res --max-time 1 > c.txt 2> c.err \
  || { cat c.err; fail "compare -w 2"; }
grep -q "compare workers: GPU 0 (1 process(es)) is busy: not used" c.err || fail "busy GPU not said: $(cat c.err)"
check_json "$(workspace_of res compare)/compare_report.json" dev.log <<'PY'
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
echo "ok: gpu_select_busy"
