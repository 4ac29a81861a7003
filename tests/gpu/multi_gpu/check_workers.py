"""The check of tests/gpu/multi_gpu_x2.sh's workers stage: one compare on one GPU against the same
compare with workers bound to two GPUs (also run by tests/golden/compare_workers on fake GPUs, so
the GPU run's checker is itself tested).

Passes when: the verdicts are identical; the two-worker run used both GPUs (results.workers);
nvidia-smi's sampler, when it saw any process, saw the first GPU for one worker and both for two;
the timing stage took < 0.75 x the one-GPU time while every timed process still got >= 0.7 x the
samples it got on one GPU (the budget is split over the GPUs, so a budget-bound stage halves by
design; the sample count shows the GPUs did not slow each other); the whole compare took less than
--max-compare-ratio (default 1.0) x the one-GPU time.

Usage: check_workers.py ONE_REPORT TWO_REPORT ONE_MS TWO_MS [--smi-one GPUS --smi-two GPUS]
                        [--max-compare-ratio R]
  *_REPORT: compare_report.json; *_MS: files holding the whole compare's wall time in ms;
  --smi-*: GPU indices nvidia-smi saw running our processes ("0", "0,1"; "" when none were listed).
Prints a few lines and "workers check: ok" or "workers check: FAIL (...)"; exit 1 on FAIL.
"""
import argparse
import json
import sys


def timing(results):
    """The timing stage's wall time (s) and the fewest samples any timed process got."""
    ts = [k["timing"] for k in results["kernel_results"] if k.get("timing")]
    if not ts:
        return float("nan"), 0
    return max(t["wall_seconds"] for t in ts), min(p["samples"] for t in ts for p in t["processes"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("one_report")
    ap.add_argument("two_report")
    ap.add_argument("one_ms")
    ap.add_argument("two_ms")
    ap.add_argument("--smi-one", default="")
    ap.add_argument("--smi-two", default="")
    ap.add_argument("--max-compare-ratio", type=float, default=1.0)
    a = ap.parse_args()
    one, two = (json.load(open(p))["results"] for p in (a.one_report, a.two_report))
    ms1, ms2 = (float(open(p).read()) for p in (a.one_ms, a.two_ms))
    v1 = {v["kernel_id"]: v["verdict"] for v in one["verdicts"]}
    v2 = {v["kernel_id"]: v["verdict"] for v in two["verdicts"]}
    (t1, n1), (t2, n2) = timing(one), timing(two)
    devices = two["workers"]["devices"]
    print(f"verdicts: 1 GPU {v1} | 2 GPUs {v2}")
    print(f"wall: compare 1 GPU {ms1:.0f} ms, 2 GPUs {ms2:.0f} ms ({ms2 / ms1:.2f}x); timing stage {t1:.2f} s vs "
          f"{t2:.2f} s ({t2 / t1:.2f}x); fewest samples per process {n1} vs {n2}")
    print(f"workers: {two['workers']['workers']} on {devices}; nvidia-smi saw GPU(s) [{a.smi_one}] then [{a.smi_two}]")
    for d in two["timing_order"].get("devices", []):
        print(f"GPU {d['device']}: processes {d['processes']}, speedups " +
              ", ".join(f"{k['kernel_id']} {k['speedup_vs_baseline']:.3f}" for k in d["kernels"] if k["speedup_vs_baseline"]))
    fails = []
    if v1 != v2:
        fails.append("verdicts differ")
    if len(devices) != 2:
        fails.append(f"two workers ran on {devices}")
    # nvidia-smi lists no process of ours inside some containers: its evidence counts only when it saw any.
    if (a.smi_one, a.smi_two) != ("", "") and (a.smi_one, a.smi_two) != (devices[0] if devices else "", ",".join(sorted(devices))):
        fails.append(f"nvidia-smi saw [{a.smi_one}] then [{a.smi_two}]")
    if not t2 < 0.75 * t1:
        fails.append(f"timing stage {t2:.2f} s vs {t1:.2f} s")
    if not n2 >= 0.7 * n1:
        fails.append(f"samples per process {n2} vs {n1}")
    if not ms2 < a.max_compare_ratio * ms1:
        fails.append(f"whole compare {ms2 / ms1:.2f}x the one-GPU time")
    print("workers check: " + ("ok" if not fails else "FAIL (" + "; ".join(fails) + ")"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
