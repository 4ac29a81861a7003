#!/usr/bin/env bash
# Compare workers bound to GPUs, on the CPU, through the workers stage of the two-GPU script
# itself (tests/gpu/multi_gpu_x2.sh, MULTI_ONLY=workers): a stand-in nvidia-smi shows two idle
# H200s (tests/fixtures/gpu/h200x2_idle), host kernels replace the CUDA ones. The script runs
# compare with CUDA_VISIBLE_DEVICES=0 (one worker) and with 0,1 and -w 2, then its checker. Here:
# with -w 2 both workers are used (every candidate's correctness process and, for every
# implementation, one timing process on each GPU, as the kernels themselves log), the verdicts
# equal those of one worker, and the timing stage takes less wall time (both run to a 3 s
# budget; the two GPUs split it, and each process still gets its samples). The kernels sleep
# (4 / 1.5 / 8 ms per launch) so the shared CPU does not decide.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
# The testcases append their device to a log in the test's directory (what this test checks);
# the candidate sandbox (issue 35) would give them a private /tmp, so it is off here.
export MAGPIE_NO_SANDBOX=1
cd "$GOLDEN_TMP"
bash "$MAGPIE_SOURCE_DIR/tests/golden/compare_workers/make_kernels.sh" k
FX="$MAGPIE_SOURCE_DIR/tests/fixtures/gpu"
LOGGED="$MAGPIE_SOURCE_DIR/tests/golden/compare_workers/magpie_logged.sh"  # one device log per compare
mkdir out
set +e
PATH="$FX:$PATH" MAGPIE_FAKE_SMI_DIR="$FX/h200x2_idle" MAGPIE_REAL_BIN="$MAGPIE_BIN" MAGPIE_BIN="$LOGGED" OUT="$PWD/out" MULTI_ONLY=workers \
  MULTI_COMPARE_YAML="$PWD/k/compare.yaml" MULTI_COMPARE_ARGS="--max-time 3" MULTI_CHECK_ARGS="--max-compare-ratio 100" \
  bash "$MAGPIE_SOURCE_DIR/tests/gpu/multi_gpu_x2.sh" > script.txt 2>&1
rc=$?
set -e
cat script.txt
[ "$rc" -eq 0 ] || fail "multi_gpu_x2.sh (workers stage) exited $rc"
grep -Eq "^compare -w 2 vs one GPU +ok " script.txt || fail "no ok row for the workers stage"
mkdir x && tar -xzf out/multi_gpu_x2_logs.tar.gz -C x
grep -q "^workers check: ok$" x/workers_check.txt || fail "check_workers: $(cat x/workers_check.txt)"
check_json "$(workspace_of x/one_gpu compare)/compare_report.json" "$(workspace_of x/two_gpus compare)/compare_report.json" \
  x/one_gpu.devlog x/two_gpus.devlog x/one_gpu.ms x/two_gpus.ms <<'PY'
import json, sys
one, two = (json.load(open(p))["results"] for p in sys.argv[1:3])
def verdicts(r):
    return {v["kernel_id"]: v["verdict"] for v in r["verdicts"]}
assert verdicts(one) == {"base": "baseline", "fast": "faster", "slow": "slower", "wrong": "not_ranked"}, verdicts(one)
assert verdicts(two) == verdicts(one), (verdicts(two), verdicts(one))
# The plan: one worker stays unbound; two workers are bound to both fake GPUs.
assert one["workers"]["workers"] == 1 and one["workers"]["devices"] == [], one["workers"]
w = two["workers"]
assert w["workers"] == 2 and w["devices"] == ["0", "1"] and w["variable"] == "CUDA_VISIBLE_DEVICES", w
assert w["source"] == "CUDA_VISIBLE_DEVICES of magpie's environment", w
# What the kernels saw. One worker: every process inherits "0". Two: the reference (base) on
# GPU 0, the candidates' correctness on both workers, each implementation timed on both GPUs.
def seen(path):
    rows = [l.split() for l in open(path) if l.strip()]
    return {(k, mode, dev) for k, mode, dev in rows}
s1, s2 = seen(sys.argv[3]), seen(sys.argv[4])
assert {d for _, _, d in s1} == {"0"}, s1
assert {d for k, m, d in s2 if k == "base" and m == "correctness"} == {"0"}, s2
cand = {d for k, m, d in s2 if k != "base" and m == "correctness"}
assert cand == {"0", "1"}, ("both workers ran candidates' correctness", s2)
for k in ("base", "fast", "slow"):
    assert {d for kk, m, d in s2 if kk == k and m == "timing"} == {"0", "1"}, (k, s2)
assert not any(k == "wrong" and m == "timing" for k, m, _ in s2), "an incorrect kernel was timed"
# Per-GPU timing: each GPU holds one process of every timed implementation and its own speedups.
devs = two["timing_order"]["devices"]
assert [d["device"] for d in devs] == ["0", "1"] and [d["processes"] for d in devs] == [[0], [1]], devs
for d in devs:
    sp = {k["kernel_id"]: k["speedup_vs_baseline"] for k in d["kernels"]}
    assert sp["base"] == 1.0 and sp["fast"] > 1.5 and sp["slow"] < 0.75, (d["device"], sp)
kr = {k["extra"]["kernel_id"]: k for k in two["kernel_results"]}
assert [p["process"] for p in kr["fast"]["timing"]["processes"]] == [0, 1], kr["fast"]["timing"]["processes"]
# Wall time of the timing stage (sleep-dominated): the two GPU groups sample in parallel.
t1 = max(k["timing"]["wall_seconds"] for k in one["kernel_results"] if k["timing"])
t2 = max(k["timing"]["wall_seconds"] for k in two["kernel_results"] if k["timing"])
w1, w2 = (float(open(p).read()) / 1e3 for p in sys.argv[5:7])
print(f"timing stage: 1 worker {t1:.2f} s, 2 workers {t2:.2f} s ({t2 / t1:.2f}x); whole compare {w1:.1f} s vs {w2:.1f} s")
assert t2 < 0.8 * t1, (t1, t2)
PY
# The GPU run's workers checker (tests/gpu/multi_gpu/check_workers.py) passed above; it fails
# when the verdicts differ, the second run used one GPU, nvidia-smi saw one GPU only, or the
# two-GPU compare was not faster. (On this shared CPU compiling dominates the whole compare
# and is noisy: the script's run holds only the timing stage's ratio, --max-compare-ratio 100.)
CW="$MAGPIE_SOURCE_DIR/tests/gpu/multi_gpu/check_workers.py"
R1="$(workspace_of x/one_gpu compare)/compare_report.json" R2="$(workspace_of x/two_gpus compare)/compare_report.json"
cp x/one_gpu.ms one.ms && cp x/two_gpus.ms two.ms
python3 - "$R2" flipped.json one_gpu.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
flipped = json.loads(json.dumps(j))
for v in flipped["results"]["verdicts"]:
    if v["kernel_id"] == "slow":
        v["verdict"] = "same"
json.dump(flipped, open(sys.argv[2], "w"))
j["results"]["workers"]["devices"] = ["1"]
json.dump(j, open(sys.argv[3], "w"))
PY
must_fail() {  # must_fail WHAT_IS_SAID ARGS...: check_workers.py exits 1 and says why
  local want="$1" rc
  shift
  set +e; python3 "$CW" "$@" > bad.txt 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] && grep -qF "$want" bad.txt || fail "check_workers accepted ($*): $(cat bad.txt)"
}
L="--max-compare-ratio 100"
must_fail "verdicts differ" "$R1" flipped.json one.ms two.ms $L
must_fail "two workers ran on ['1']" "$R1" one_gpu.json one.ms two.ms $L
must_fail "nvidia-smi saw [0] then [0]" "$R1" "$R2" one.ms two.ms --smi-one 0 --smi-two 0 $L
echo 20000 > a.ms && echo 21000 > b.ms
must_fail "whole compare 1.05x the one-GPU time" "$R1" "$R2" a.ms b.ms
echo "ok: compare_workers"
