#!/usr/bin/env bash
# Compare workers bound to GPUs, on the CPU: host kernels, two fake GPUs given as magpie's
# CUDA_VISIBLE_DEVICES=0,1. With -w 2 both workers are used (every candidate's correctness
# process and, for every implementation, one timing process on each GPU, as the kernels
# themselves log), the verdicts equal those of one worker, and the timing stage takes less wall
# time. The kernels sleep (4 / 1.5 / 8 ms per launch) so the shared CPU does not decide.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
cd "$GOLDEN_TMP"
bash "$MAGPIE_SOURCE_DIR/tests/golden/compare_workers/make_kernels.sh" k
run() {  # run NAME WORKERS: compare with CUDA_VISIBLE_DEVICES=0,1; times in NAME.wall
  local t0 t1
  : > "$1.log"
  t0=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=0,1 MAGPIE_TEST_DEVICE_LOG="$PWD/$1.log" "$MAGPIE_BIN" -w "$2" compare -k k/compare.yaml \
    -o "$1" --seed 11 > "$1.txt" 2> "$1.err" || { cat "$1.err"; fail "compare -w $2 exited $?"; }
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)" > "$1.wall"
}
run one 1
run two 2
check_json "$(workspace_of one compare)/compare_report.json" "$(workspace_of two compare)/compare_report.json" one.log two.log \
  one.wall two.wall <<'PY'
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
w1, w2 = (float(open(p).read()) for p in sys.argv[5:7])
print(f"timing stage: 1 worker {t1:.2f} s, 2 workers {t2:.2f} s ({t2 / t1:.2f}x); whole compare {w1:.1f} s vs {w2:.1f} s")
assert t2 < 0.8 * t1, (t1, t2)
PY
echo "ok: compare_workers"
