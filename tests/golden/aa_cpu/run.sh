#!/usr/bin/env bash
# A/A on the CPU (issue 36): identical code compared with itself must come out `same`, every time,
# on the host example (C++ vector add) and the numpy example (RMSNorm through python/magpie_bench),
# AA_CPU_RUNS compares each (default 5: 10 A/A pairs). The CI machine is shared and loaded:
# process medians of identical code differ by several percent there, and the verdict must
# measure that (a wider, reported 'same' band; more processes) rather than report a difference.
# Each verdict also carries its band's basis, a power statement and the sampling plan.
# No pair may report a difference (faster / slower). Every pair must be `same`, except one that
# started while the machine was busy (1-minute load average > the cores): measured 2026-12-07 on
# the shared 2-core machine with other builds running (load 2.8-8.4), the numpy RMSNorm's samples
# had a rel. stdev of up to 130% and its process medians an sd of up to 31% (identical code), and
# the host pair's interval reached ±18%: such a pair need only not report a difference; its
# `decide` line is printed.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
# ~6 minutes of 10 compares: opt-in (MAGPIE_SLOW_TESTS=1), so that the README's ctest stays short.
if [ "${MAGPIE_SLOW_TESTS:-0}" != 1 ]; then
  echo "skip: A/A on the CPU takes ~6 min (10 compares); set MAGPIE_SLOW_TESTS=1 to run it"
  exit 77
fi
source "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_protocol/find_python.sh"
RUNS=${AA_CPU_RUNS:-5}
EX="$MAGPIE_SOURCE_DIR/examples"
timing="performance:
  timing: {warmup: 3, min_samples: 10, max_noise: 0.005, min_time_s: 0.5, max_time_s: ${AA_CPU_TIME:-12}, cold: true}"
cat > "$GOLDEN_TMP/host.yaml" <<Y
kernels:
  - {id: base, type: host, source_files: [$EX/host/vector_add.cpp]}
  - {id: copy, type: host, source_files: [$EX/host/vector_add.cpp]}
correctness: {trials: 5}
$timing
Y
types="host"
if py="$(magpie_find_numpy_python)"; then
  export MAGPIE_PYTHON="$py"
  types="host numpy"
  cat > "$GOLDEN_TMP/numpy.yaml" <<Y
reference: {id: ref, type: pytorch, source_files: [$EX/pytorch/numpy_cpu/rmsnorm_ref.py], entry: rmsnorm}
kernels:
  - {id: base, type: pytorch, source_files: [$EX/pytorch/numpy_cpu/rmsnorm_ref.py], entry: rmsnorm}
  - {id: copy, type: pytorch, source_files: [$EX/pytorch/numpy_cpu/rmsnorm_ref.py], entry: rmsnorm}
correctness: {method: outputs, trials: 5}
$timing
Y
else
  echo "note: no python3 with numpy: the numpy A/A pairs are skipped"
fi
mkdir -p "$GOLDEN_TMP/res"
for run in $(seq 1 "$RUNS"); do
  for t in $types; do
    echo "$t-$run $(cut -d' ' -f1 /proc/loadavg) $(nproc)" >> "$GOLDEN_TMP/res/load.txt"
    "$MAGPIE_BIN" compare -k "$GOLDEN_TMP/$t.yaml" -o "$GOLDEN_TMP/res/$t-$run" > "$GOLDEN_TMP/$t-$run.txt" 2> "$GOLDEN_TMP/$t-$run.err" \
      || { tail -20 "$GOLDEN_TMP/$t-$run.err"; fail "$t run $run: compare exited $?"; }
  done
done
check_json "$GOLDEN_TMP/res" <<'PY'
import glob, json, sys
bad, n = [], 0
load = {l.split()[0]: (float(l.split()[1]), int(l.split()[2])) for l in open(sys.argv[1] + "/load.txt")}
for rep in sorted(glob.glob(sys.argv[1] + "/*/compare_*/compare_report.json")):
    name = rep.split("/")[-3]
    res = json.load(open(rep))["results"]
    v = {x["kernel_id"]: x for x in res["verdicts"]}["copy"]
    k = {x["extra"]["kernel_id"]: x for x in res["kernel_results"]}["copy"]
    s = k["timing"]["sampling"]
    n += 1
    if v["same_band"] is None:  # not ranked: an honest copy rejected or failed is a failure, said with its reason
        bad.append((name, v["verdict"], v["reason"], k.get("errors"), (k.get("integrity") or {}).get("reason")))
        continue
    print("%-9s %-9s %.4f [%.4f, %.4f] band ±%.1f%% (A/A sd %.2f%%), %d processes; %s" % (
        name, v["verdict"], v["speedup_vs_baseline"], v["ci_low"], v["ci_high"], v["same_band"]["band"] * 100,
        v["same_band"]["aa_sd"] * 100, s["used_processes"], v["power"]["statement"]))
    assert v["same_band"]["floor"] <= v["same_band"]["band"] <= v["same_band"]["ceiling"], v["same_band"]
    assert 0 <= v["power"]["probability"] <= 1 and "3% difference" in v["power"]["statement"], v["power"]
    assert s["pilot_processes"] == 2 and s["used_processes"] >= 2 and s["why"], s
    assert s["batch"] == 1 and "cold" in s["batch_why"], s  # cold runs keep one launch per sample
    if v["verdict"] in ("faster", "slower"):
        bad.append((name, v["verdict"], v["reason"], v["decide"]))
    elif v["verdict"] != "same":
        la, cores = load[name]
        if la > cores:
            print("  note: %s started at load %.1f on %d cores (busy): %s, not required to be same; decide: %s"
                  % (name, la, cores, v["verdict"], v["decide"]))
        else:
            bad.append((name, v["verdict"], v["reason"], v["decide"]))
assert n >= int(__import__("os").environ.get("AA_CPU_RUNS", "5")), "too few compares: %d" % n
assert not bad, "A/A pairs not 'same': %r" % bad
print("A/A on the CPU: %d pairs, none reported a difference; every one required to be same was" % n)
PY
