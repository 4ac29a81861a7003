#!/usr/bin/env python3
"""Thin wrapper kept for earlier command lines: the loop is the native `magpie optimize` now.

    python3 examples/loop/run_loop.py --magpie build/magpie --out /tmp/loop [--backend torch|numpy] [--runs 3]

runs  magpie optimize -c examples/loop/optimize.yaml (torch) | optimize_cpu.yaml (numpy)
      --workspace /tmp/loop --pairs 3 [--num-prompts N] [--concurrency N] [--compare-max-time S]
      [--ready-timeout S] [--python PY]
and exits with its status (0 finished: improved or stopped with a reason; 1 a step failed; 2 usage).
The report is /tmp/loop/loop_report.json and .md (docs/optimization-loop.md).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--magpie", required=True, help="the magpie binary")
    ap.add_argument("--out", required=True, help="the loop's workspace (created)")
    ap.add_argument("--backend", choices=["torch", "numpy"], default="torch")
    ap.add_argument("--runs", type=int, default=3, help="runs per side (>= 2; default 3)")
    ap.add_argument("--python", default=os.environ.get("MAGPIE_PYTHON") or sys.executable, help="python for the server")
    ap.add_argument("--config", default=None, help="optimize.yaml (default: this directory's, by backend)")
    ap.add_argument("--num-prompts", type=int, default=0, help="prompts per run (skips calibration)")
    ap.add_argument("--concurrency", type=int, default=0)
    ap.add_argument("--compare-max-time", type=float, default=0)
    ap.add_argument("--ready-timeout", type=float, default=0)
    a = ap.parse_args(argv)
    if a.runs < 2:
        ap.error("--runs must be >= 2 (the noise test needs repeated runs)")
    cfg = a.config or os.path.join(HERE, "optimize.yaml" if a.backend == "torch" else "optimize_cpu.yaml")
    argv = [a.magpie, "optimize", "-c", cfg, "--workspace", a.out, "--pairs", str(a.runs), "--python", a.python]
    for flag, v in (("--num-prompts", a.num_prompts), ("--concurrency", a.concurrency),
                    ("--compare-max-time", a.compare_max_time), ("--ready-timeout", a.ready_timeout)):
        if v:
            argv += [flag, str(v)]
    os.execv(a.magpie, argv)


if __name__ == "__main__":
    sys.exit(main())
