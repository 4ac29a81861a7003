#!/usr/bin/env bash
# The two-GPU run's trace analysis on the CPU: a generated two-rank tensor-parallel trace whose
# NCCL kernels overlap computation by construction goes through the exact analysis of
# tests/gpu/multi_gpu_x2.sh (tests/gpu/multi_gpu/analyze.sh: gap analysis with per-rank CSVs,
# trace report per rank, independent check_comm.py). The checker must agree with the
# construction and with magpie, and must fail when magpie's numbers or the construction are off.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
MG="$MAGPIE_SOURCE_DIR/tests/gpu/multi_gpu"
cd "$GOLDEN_TMP"
python3 "$MG/gen_two_rank_trace.py" traces --layers 16 --seed 7
bash "$MG/analyze.sh" traces an --expected traces/expected_comm.json > check.txt 2>&1 || { cat check.txt; fail "check_comm on the generated trace"; }
grep -q "^comm check: ok$" check.txt || fail "no ok line: $(cat check.txt)"
# Both ranks: per-rank gap CSVs, and magpie's exact numbers equal to the construction.
check_json an/comm_check.json traces/expected_comm.json <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))["ranks"]
assert got["problems"] == [], got["problems"]
assert [r["rank"] for r in got["ranks"]] == [0, 1], got["ranks"]
for r in got["ranks"]:
    w, m = want[str(r["rank"])], r["magpie"]
    assert m["exposed_ns"] == w["exposed_ns"] and m["overlapped_ns"] == w["overlapped_ns"], (m, w)
    assert m["total_ns"] == w["nccl_sum_ns"], (m, w)
    assert 0 < w["exposed_ns"] < w["nccl_sum_ns"] and w["overlapped_ns"] > 0, w  # both kinds occur
PY
grep -q "^Communication: .* ms exposed, .* ms overlapped with computation" an/report_rank0.txt || fail "no communication line in trace report"
test -s an/gap/gap_analysis/gap_analysis_rank0.csv && test -s an/gap/gap_analysis/gap_analysis_rank1.csv

# The checker fails when magpie is off by 5 us on rank 1's exposed communication ...
cp -r an bad
python3 - bad/report_rank1/report.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["analysis"]["communication"]["exposed_ns"] += 5000
json.dump(j, open(sys.argv[1], "w"))
PY
set +e; python3 "$MG/check_comm.py" traces bad > bad.txt 2>&1; rc=$?; set -e
[ "$rc" -eq 1 ] || fail "checker accepted a wrong exposed_ns (rc $rc)"
grep -q "MISMATCH: rank 1: magpie exposed_ns" bad.txt || fail "mismatch not named: $(cat bad.txt)"
# ... when a gap CSV lost an NCCL row ...
cp -r an bad2
grep -v "AllGather" an/gap/gap_analysis/gap_analysis_rank0.csv > bad2/gap/gap_analysis/gap_analysis_rank0.csv
set +e; python3 "$MG/check_comm.py" traces bad2 > bad2.txt 2>&1; rc=$?; set -e
[ "$rc" -eq 1 ] && grep -q "MISMATCH: rank 0: gap_analysis_rank CSV NCCL calls" bad2.txt || fail "lost CSV row accepted: $(cat bad2.txt)"
# ... and when its own recomputation disagrees with the construction.
python3 -c "import json; e=json.load(open('traces/expected_comm.json')); e['ranks']['0']['overlapped_ns'] += 1; json.dump(e, open('wrong.json','w'))"
set +e; python3 "$MG/check_comm.py" traces an --expected wrong.json > bad3.txt 2>&1; rc=$?; set -e
[ "$rc" -eq 1 ] && grep -q "rank 0: checker overlapped_ns vs the generator's construction" bad3.txt || fail "construction mismatch accepted"

# Compressed rank traces go the same way.
mkdir gz && for r in 0 1; do gzip -c "traces/tp_mlp-rank-$r.pt.trace.json" > "gz/tp_mlp-rank-$r.pt.trace.json.gz"; done
bash "$MG/analyze.sh" gz an_gz --expected traces/expected_comm.json > gz.txt 2>&1 || { cat gz.txt; fail "gz traces"; }

# The tp stage of the two-GPU script itself (tests/gpu/multi_gpu_x2.sh, MULTI_ONLY=tp) with the
# generator instead of tp_mlp.py and a stand-in nvidia-smi of two idle H200s: its rows pass and
# the per-rank line joins the "profiler" summary with the checker's numbers.
FX="$MAGPIE_SOURCE_DIR/tests/fixtures/gpu"
mkdir out
set +e
PATH="$FX:$PATH" MAGPIE_FAKE_SMI_DIR="$FX/h200x2_idle" OUT="$PWD/out" MULTI_ONLY=tp \
  MULTI_TP_CMD="python3 $MG/gen_two_rank_trace.py --layers 16 --seed 7" \
  bash "$MAGPIE_SOURCE_DIR/tests/gpu/multi_gpu_x2.sh" > script.txt 2>&1
rc=$?
set -e
cat script.txt
[ "$rc" -eq 0 ] || fail "multi_gpu_x2.sh (tp stage) exited $rc"
for r in "tp_mlp two ranks (NCCL)" "comm: magpie vs NCCL event sums"; do
  grep -Fq "$(printf '%-34s %-5s' "$r" ok)" script.txt || fail "no ok row '$r'"
done
for rank in 0 1; do
  grep -Eq "^comm rank $rank +info +torch profiler NCCL self device time [0-9.]+ us, trace NCCL kernel sum [0-9.]+ us" script.txt \
    || fail "no rank $rank comm row"
done
mkdir x && tar -xzf out/multi_gpu_x2_logs.tar.gz -C x
test -s x/analysis/comm_check.json && test -s x/traces/tp_mlp-rank-1.pt.trace.json || fail "logs lack the analysis or traces"
echo "ok: multi_rank_comm"
