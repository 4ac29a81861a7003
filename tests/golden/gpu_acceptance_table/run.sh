#!/usr/bin/env bash
# The GPU acceptance of issue 36 is one call of tests/gpu/aa_h200.sh, closed by one table
# (tests/gpu/aa/acceptance.py). Its logic, without a GPU: the script parses (bash -n), and the
# table printer passes every item on a fake run that meets them (24 A/A pairs over 4 types with a
# ~2 us and a ~60 us kernel, slow3 `slower`, CUPTI within 3% of ncu, a 12 s / 300 MB cost compare
# against 640 MB of tensors, before and after, 470 s of 480) and fails exactly the items a
# second fake run misses (2 of 24 pairs ambiguous, slow3 ambiguous, a 4.1% ncu gap, no BASE_BIN).
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
bash -n "$MAGPIE_SOURCE_DIR/tests/gpu/aa_h200.sh" || fail "aa_h200.sh does not parse"
fake() {  # fake OUT_DIR GOOD(1|0)
  python3 - "$1" "$2" <<'PY'
import json, os, sys
out, good = sys.argv[1], sys.argv[2] == "1"
def write(path, results):
    os.makedirs(path, exist_ok=True)
    json.dump({"mode": "compare", "results": results}, open(os.path.join(path, "compare_report.json"), "w"))
def kres(kid, median_ns, extra=None):
    k = {"extra": {"kernel_id": kid}, "timing": {"stats_ns": {"median": median_ns}}}
    k.update(extra or {})
    return k
med = {"vadd16m": 60e3, "vadd256k": 2.1e3, "gemm_bf16": 900e3, "layernorm": 58e3}
miss = 0
for run in (1, 2):
    for p, m in med.items():
        ks = [kres("baseline", m)] + [kres("copy%d" % c, m) for c in (1, 2, 3)]
        vs = [{"kernel_id": "baseline", "verdict": "baseline", "same_band": None}]
        for c in (1, 2, 3):
            v = "same"
            if not good and p == "vadd256k" and miss < 2:
                v, miss = "ambiguous", miss + 1
            vs.append({"kernel_id": "copy%d" % c, "verdict": v, "same_band": {"band": 0.02}})
        if p == "vadd16m":
            vs.append({"kernel_id": "slow3", "verdict": "slower" if good else "ambiguous", "same_band": {"band": 0.02}})
        write("%s/res/%s-%d/compare_1" % (out, p, run), {"kernel_results": ks, "verdicts": vs})
for p, d in (("vadd16m", 1.4), ("layernorm", -2.2 if good else 4.1)):
    cc = [{"kernel": "k_" + p, "cupti_median_ns": 60e3 * (1 + d / 100), "ncu_median_ns": 60e3, "diff_pct": d},
          {"kernel": "tiny", "cupti_median_ns": 3e3, "ncu_median_ns": 2e3, "diff_pct": 50.0}]  # < 10 us: not an item
    write("%s/ncu/%s/compare_1" % (out, p), {"kernel_results": [kres("baseline", 60e3, {"performance_result": {"ncu": {"cross_check": cc}}})]})
trial = {"outputs": [{"numel": 2048 * 8192, "dtype": "float32"}]}  # 64 MiB per trial; x2 (inputs); 5 trials: 640 MiB
ph = {"compile_s": 0.1, "correctness_s": 4.2, "timing_s": 7.1, "other_s": 0.3, "total_s": 11.7}
log = ["=== cost after rc=0 wall_ms=12000 disk_bytes=300000000"]
write(out + "/cost_after/compare_1", {"kernel_results": [{"extra": {"kernel_id": "baseline"}, "correctness": {"comparison": {"trials": [trial] * 5}}}], "phases": ph})
if good:
    log.append("=== cost before rc=0 wall_ms=41000 disk_bytes=4000000000")
    write(out + "/cost_before/compare_1", {"kernel_results": [{"extra": {"kernel_id": "baseline"}, "compiling_result": {"duration_s": 0.2}, "timing": {"wall_seconds": 9.0}}]})
open(out + "/cost.log", "w").write("\n".join(log) + "\n")
open(out + "/wall.log", "w").write("=== total wall 470 s (AA_WALL 480)\n")
PY
}
TABLE="$MAGPIE_SOURCE_DIR/tests/gpu/aa/acceptance.py"
fake "$GOLDEN_TMP/good" 1
python3 "$TABLE" "$GOLDEN_TMP/good" > "$GOLDEN_TMP/good.txt" || fail "good run: exit $?: $(cat "$GOLDEN_TMP/good.txt")"
cat "$GOLDEN_TMP/good.txt"
[ "$(grep -c '^PASS' "$GOLDEN_TMP/good.txt")" = 8 ] && ! grep -q '^FAIL' "$GOLDEN_TMP/good.txt" || fail "good run: $(cat "$GOLDEN_TMP/good.txt")"
grep -q "24/24 same (100%) over 4 types" "$GOLDEN_TMP/good.txt" || fail "A/A count"
grep -q "~2 us: vadd256k; ~60 us: .*vadd16m" "$GOLDEN_TMP/good.txt" || fail "kernel lengths"
grep -q "^cost after  rc=0 wall 12.0 s, disk 300.0 MB (tensors once 671.1 MB); phases (s): compile 0.1 correctness 4.2 timing 7.1" \
  "$GOLDEN_TMP/good.txt" || fail "cost row"
grep -q "^cost before rc=0 wall 41.0 s.*phases (s): compile 0.2 timing 9.0" "$GOLDEN_TMP/good.txt" || fail "before row (no results.phases)"
fake "$GOLDEN_TMP/bad" 0
python3 "$TABLE" "$GOLDEN_TMP/bad" > "$GOLDEN_TMP/bad.txt" && fail "bad run passed: $(cat "$GOLDEN_TMP/bad.txt")"
cat "$GOLDEN_TMP/bad.txt"
for item in "A/A same >= 95%" "the 3%-slower variant" "CUPTI within 3% of ncu" "before/after recorded"; do
  grep -q "^FAIL  $item" "$GOLDEN_TMP/bad.txt" || fail "bad run: '$item' not failed"
done
[ "$(grep -c '^FAIL' "$GOLDEN_TMP/bad.txt")" = 4 ] || fail "bad run: other items failed too"
grep -q "22/24 same (92%)" "$GOLDEN_TMP/bad.txt" && grep -q "layernorm baseline k_layernorm +4.10%" "$GOLDEN_TMP/bad.txt" || fail "bad details"
echo "ok: GPU acceptance table"
