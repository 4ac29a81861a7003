#!/usr/bin/env python3
"""Is the first run after a server start slower than the next ones, and why? (tests/gpu/loop_h200.sh)

For each prefill padding in --pads: starts the loop example's baseline server (examples/loop/
server.py, decode steps as CUDA graphs on the GPU), sends NO warm-up pass, runs the loop's
workload --runs times in a row with `magpie benchmark --base-url`, then reads the server's
per-burst step timing (GET /loop_stats, examples/loop/engine.py) and stops the server. Each
measured run is matched to its burst by time, so the table shows where a slow run's time went:
prefill steps that used an attention shape for the first time (a cuDNN plan build each), other
prefill, or decode.

    python3 tests/gpu/loop_first_run.py --magpie build/magpie --out DIR [--pads 0,128] [--runs 3]
        [--backend torch|numpy] [--num-prompts 64] [--limit-s 150]

Writes DIR/first_run.json (every run's metrics and burst) and DIR/server_pad<P>.log; prints one
table row per run. Exit 0 when every run finished, 1 otherwise. --limit-s (seconds, default 150)
bounds the whole script: a padding whose server would start after it is skipped, a running
benchmark is stopped at it.
"""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKLOAD = {  # the client of examples/loop/optimize.yaml and optimize_cpu.yaml
    "torch": {"isl": 1024, "osl": 256, "concurrency": 32},
    "numpy": {"isl": 32, "osl": 16, "concurrency": 8},
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url, timeout=5.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read().decode())


def find_key(obj, key):
    """The first value of `key` in a JSON tree (depth first), else None."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            x = find_key(v, key)
            if x is not None:
                return x
    return None


def run_metrics(out_dir):
    """(output tok/s, mean TPOT ms, completed) from the benchmark_report.json under out_dir."""
    for d, _, files in os.walk(out_dir):
        if "benchmark_report.json" in files:
            rep = json.load(open(os.path.join(d, "benchmark_report.json")))
            tpot = find_key(rep, "tpot")
            return (find_key(rep, "output_throughput"), tpot.get("mean_ms") if isinstance(tpot, dict) else None,
                    find_key(rep, "completed"))
    return None, None, None


def start_server(a, pad, port, log):
    argv = [a.python, os.path.join(ROOT, "examples/loop/server.py"), "--backend", a.backend, "--port", str(port),
            "--kernels", "baseline", "--trace-dir", os.path.join(a.out, "traces")]
    if a.backend == "torch":
        argv += ["--cuda-graphs", "--prefill-pad", str(pad)]
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))


def stop_server(p):
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def wait_ready(p, port, deadline):
    while time.time() < deadline and p.poll() is None:
        try:
            if get_json("http://127.0.0.1:%d/health" % port, 2.0).get("status") == "ok":
                return get_json("http://127.0.0.1:%d/loop_info" % port)
        except OSError:
            pass
        time.sleep(0.5)
    return None


def one_padding(a, pad, t_end):
    """Start, --runs benchmark runs, stats, stop. Returns (rows, ok)."""
    port = free_port()
    log_path = os.path.join(a.out, "server_pad%d.log" % pad)
    w = WORKLOAD[a.backend]
    rows, ok = [], True
    with open(log_path, "w") as log:
        p = start_server(a, pad, port, log)
        try:
            t0 = time.time()
            info = wait_ready(p, port, min(t_end, t0 + 240))
            if info is None:
                print("pad %d: the server did not become ready (log %s)" % (pad, log_path), file=sys.stderr)
                return [], False
            prep = (info.get("runtime") or {}).get("prefill_attention")
            print("pad %d: server ready after %.1f s; prefill attention at start-up: %s" % (pad, time.time() - t0, prep),
                  flush=True)
            for i in range(a.runs):
                out = os.path.join(a.out, "pad%d_run%d" % (pad, i + 1))
                cmd = [a.magpie, "benchmark", "--base-url", "http://127.0.0.1:%d" % port, "--dataset-name", "random",
                       "--random-input-len", str(w["isl"]), "--random-output-len", str(w["osl"]),
                       "--random-range-ratio", "0.5", "--max-concurrency", str(w["concurrency"]),
                       "--num-prompts", str(a.num_prompts), "--seed", "0", "--ignore-eos", "--request-rate", "inf",
                       "--num-warmups", "0", "--output-dir", out]
                left = t_end - time.time()
                if left < 5:
                    print("pad %d: run %d skipped: the script's time limit" % (pad, i + 1), file=sys.stderr)
                    return rows, False
                r0 = time.time()
                try:
                    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=left).returncode
                except subprocess.TimeoutExpired:
                    rc = 124
                r1 = time.time()
                tput, tpot, done = run_metrics(out)
                rows.append({"pad": pad, "run": i + 1, "rc": rc, "start_unix": r0, "end_unix": r1,
                             "output_throughput": tput, "tpot_mean_ms": tpot, "completed": done})
                ok = ok and rc == 0 and tput is not None
            bursts = get_json("http://127.0.0.1:%d/loop_stats" % port).get("bursts", [])
        finally:
            stop_server(p)
    for r in rows:  # a run's bursts: those that started inside its interval
        mine = [b for b in bursts if r["start_unix"] - 0.5 <= b["start_unix"] <= r["end_unix"]]
        r["bursts"] = mine
        r["new_shapes"] = sum(b["new_shapes"] for b in mine)
        r["new_shape_s"] = sum(b["new_shape_s"] for b in mine)
        r["prefill_s"] = sum(b["prefill_s"] for b in mine)
        r["decode_s"] = sum(b["decode_s"] for b in mine)
        big = max(mine, key=lambda b: b["decode_steps"], default=None)
        r["decode_ms_median"] = big["decode_ms_median"] if big else None
    return rows, ok


def fmt(x, f):
    return "-" if x is None else f % x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--magpie", required=True, help="the magpie binary")
    ap.add_argument("--out", required=True, help="output folder (created)")
    ap.add_argument("--pads", default="0,128", help="server.py --prefill-pad values, comma-separated (default 0,128)")
    ap.add_argument("--runs", type=int, default=3, help="measured runs per server start (default 3)")
    ap.add_argument("--num-prompts", type=int, default=64, help="prompts per run (default 64)")
    ap.add_argument("--backend", choices=["torch", "numpy"], default="torch")
    ap.add_argument("--python", default=os.environ.get("MAGPIE_PYTHON", "python3"), help="python for server.py")
    ap.add_argument("--limit-s", type=float, default=150.0, help="seconds for the whole script (default 150)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    t_end = time.time() + a.limit_s
    rows, ok = [], True
    for pad in [int(x) for x in a.pads.split(",") if x.strip()]:
        if time.time() + 30 > t_end:
            print("pad %d skipped: the script's time limit" % pad, file=sys.stderr)
            ok = False
            continue
        r, good = one_padding(a, pad, t_end)
        rows += r
        ok = ok and good
    with open(os.path.join(a.out, "first_run.json.tmp"), "w") as f:
        json.dump({"backend": a.backend, "runs_per_start": a.runs, "num_prompts": a.num_prompts, "runs": rows}, f, indent=1)
    os.replace(os.path.join(a.out, "first_run.json.tmp"), os.path.join(a.out, "first_run.json"))
    print("pad run  out tok/s  TPOT ms  prefill s  new shapes (s)  decode s  decode ms median  rc")
    for r in rows:
        print("%3d %3d %10s %8s %10s %6d (%6.3f) %9s %17s  %d" % (
            r["pad"], r["run"], fmt(r["output_throughput"], "%.1f"), fmt(r["tpot_mean_ms"], "%.2f"),
            fmt(r["prefill_s"], "%.3f"), r["new_shapes"], r["new_shape_s"], fmt(r["decode_s"], "%.3f"),
            fmt(r["decode_ms_median"], "%.2f"), r["rc"]))
    return 0 if ok and rows else 1


if __name__ == "__main__":
    sys.exit(main())
