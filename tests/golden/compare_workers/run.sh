#!/usr/bin/env bash
# Compare workers bound to GPUs, on the CPU: host kernels, two fake GPUs given as magpie's
# CUDA_VISIBLE_DEVICES=0,1. With -w 2 both workers are used (every candidate's correctness
# process and, for every implementation, one timing process on each GPU, as the kernels
# themselves log), the verdicts equal those of one worker, and the timing stage takes less wall
# time (both run to a 3 s budget; the two GPUs split it, and each process still gets its
# samples). The kernels sleep (4 / 1.5 / 8 ms per launch) so the shared CPU does not decide.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
cd "$GOLDEN_TMP"
bash "$MAGPIE_SOURCE_DIR/tests/golden/compare_workers/make_kernels.sh" k
run() {  # run NAME WORKERS: compare with CUDA_VISIBLE_DEVICES=0,1; wall time in NAME.ms
  local t0 t1
  : > "$1.log"
  t0=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=0,1 MAGPIE_TEST_DEVICE_LOG="$PWD/$1.log" "$MAGPIE_BIN" -w "$2" compare -k k/compare.yaml \
    -o "$1" --seed 11 > "$1.txt" 2> "$1.err" || { cat "$1.err"; fail "compare -w $2 exited $?"; }
  t1=$(date +%s.%N)
  python3 -c "print(round(($t1 - $t0) * 1000))" > "$1.ms"
}
run one 1
run two 2
check_json "$(workspace_of one compare)/compare_report.json" "$(workspace_of two compare)/compare_report.json" one.log two.log \
  one.ms two.ms <<'PY'
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
# What the kernels saw. One worker: every process inherits "0,1". Two: the reference (base) on
# GPU 0, the candidates' correctness on both workers, each implementation timed on both GPUs.
def seen(path):
    rows = [l.split() for l in open(path) if l.strip()]
    return {(k, mode, dev) for k, mode, dev in rows}
s1, s2 = seen(sys.argv[3]), seen(sys.argv[4])
assert {d for _, _, d in s1} == {"0,1"}, s1
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
# The GPU run's workers checker (tests/gpu/multi_gpu/check_workers.py) on these reports: it
# passes here, and fails when the verdicts differ, the second run used one GPU, nvidia-smi saw
# one GPU only, or the two-GPU compare was not faster.
CW="$MAGPIE_SOURCE_DIR/tests/gpu/multi_gpu/check_workers.py"
R1="$(workspace_of one compare)/compare_report.json" R2="$(workspace_of two compare)/compare_report.json"
# On this shared CPU compiling dominates the whole compare and is noisy: its ratio is not held
# here (the timing stage's is).
python3 "$CW" "$R1" "$R2" one.ms two.ms --max-compare-ratio 100 > cw.txt 2>&1 || { cat cw.txt; fail "check_workers.py on the real reports"; }
grep -q "^workers check: ok$" cw.txt || fail "check_workers: $(cat cw.txt)"
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
