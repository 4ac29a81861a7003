#!/usr/bin/env python3
"""bench/serve: magpie's serving client against the simulator (tests/sim/magpie_sim_server),
one invocation, stdlib only (the baseline client needs aiohttp).

1. throughput: requests/s and streamed tokens/s of magpie's client pinned to one core, against
   several simulators on the other cores (sharing one port, SO_REUSEPORT), next to a Python
   aiohttp client doing the same work (aiohttp_client.py), at 1 and 8 SSE events per socket
   write; medians of --repeats runs, the ratio per run, client CPU per request. With
   --baseline-magpie OTHER_BINARY a third client (an older build) runs in the same rounds,
   interleaved, and its ratio to aiohttp is reported beside the current one (before/after).
2. accuracy: token arrival timestamps of magpie's client at --streams concurrent streams against
   the simulators' ground truth (each event's send time, same CLOCK_MONOTONIC): with kernel
   receive timestamps (the default) and with read timestamps, plus the client's read lag.
3. open loop: Poisson arrivals at --rate requests/s from the one client core; schedule slip
   (dispatch − intended arrival) p50/p99 and the achieved rate.
Prints tables and writes --json (default: stdout only)."""
import argparse
import json
import os
import platform
import resource
import shutil
import statistics as st
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return int(parts[11]) + int(parts[12])
    except OSError:
        return 0


class Sims:
    """COUNT simulators on one port, pinned to cores (the client keeps core 0)."""

    def __init__(self, sim, count, tmp, args, name):
        self.procs, self.records = [], []
        ncpu = os.cpu_count() or 1
        port_file = os.path.join(tmp, f"{name}.port")
        for k in range(count):
            core = 1 + k % max(1, ncpu - 1) if ncpu > 1 else 0
            rec = os.path.join(tmp, f"{name}.{k}.jsonl")
            cmd = ["taskset", "-c", str(core), sim, "--reuse-port", "--record", rec] + args
            cmd += ["--port-file", port_file] if k == 0 else ["--port", str(self.port)]
            self.procs.append(subprocess.Popen(cmd, stderr=subprocess.DEVNULL))
            self.records.append(rec)
            if k == 0:
                for _ in range(200):
                    if os.path.exists(port_file) and open(port_file).read().strip():
                        break
                    time.sleep(0.02)
                self.port = int(open(port_file).read())
        time.sleep(0.2)
        self.url = f"http://127.0.0.1:{self.port}"

    def ticks(self):
        return sum(cpu_ticks(p.pid) for p in self.procs)

    def truth(self):
        out = {}
        for rec in self.records:
            if os.path.exists(rec):
                for line in open(rec):
                    j = json.loads(line)
                    out[j["id"]] = j
        return out

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait()


def run_measured(cmd, stdout=subprocess.DEVNULL):
    """Runs cmd on core 0; returns (wall s, user+sys CPU s of the process)."""
    t0 = time.monotonic()
    p = subprocess.Popen(["taskset", "-c", "0"] + cmd, stdout=stdout, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd[0]} failed: {err[-2000:]}")
    return wall, ru.ru_utime + ru.ru_stime


def magpie(a, url, out, extra, binary=None):
    cmd = [binary or a.magpie, "-q", "benchmark", "--base-url", url, "--served-model-name", "sim-model", "--num-warmups", "0"] + extra + ["-o", out]
    wall, cpu = run_measured(cmd)
    ws = [os.path.join(out, d) for d in os.listdir(out) if d.startswith("benchmark_")][0]
    return ws, json.load(open(os.path.join(ws, "serving_result.json"))), wall, cpu


def throughput(a, tmp, events_per_write):
    sims = Sims(a.sim, a.servers, tmp, ["--decode-step-ms", "0", "--max-batch", "100000", "--burst-steps", str(events_per_write)],
                f"fast{events_per_write}")
    rows = []
    clients = ("magpie", "baseline", "aiohttp") if a.baseline_magpie else ("magpie", "aiohttp")
    try:
        for r in range(a.repeats):
            # the order changes per round so that no client always runs first (machine drift); the
            # two magpie builds stay adjacent (their ratio is the paired before/after), their order
            # alternating, with aiohttp before them on odd rounds and after them on even ones
            pair = ("magpie", "baseline") if r % 4 < 2 else ("baseline", "magpie")
            order = (pair + ("aiohttp",) if r % 2 == 0 else ("aiohttp",) + pair) if a.baseline_magpie else \
                clients[r % len(clients):] + clients[:r % len(clients)]
            for who in order:
                t0 = sims.ticks()
                if who in ("magpie", "baseline"):
                    _, res, wall, cpu = magpie(a, sims.url, os.path.join(tmp, f"{who}{events_per_write}_{r}"),
                                               ["--random-input-len", "16", "--random-output-len", str(a.osl), "--num-prompts", str(a.n),
                                                "--max-concurrency", str(a.conc), "--no-continuous-usage"],
                                               a.baseline_magpie if who == "baseline" else None)
                else:
                    path = os.path.join(tmp, f"p{events_per_write}_{r}.json")
                    with open(path, "w") as f:
                        wall, cpu = run_measured([a.python, os.path.join(ROOT, "bench/serve/aiohttp_client.py"), "--url", sims.url,
                                                  "--num-prompts", str(a.n), "--concurrency", str(a.conc), "--input-len", "16",
                                                  "--output-len", str(a.osl)], stdout=f)
                    res = json.load(open(path))
                if res["completed"] != a.n:
                    print(f"warning: {who} completed {res['completed']} of {a.n}", file=sys.stderr)
                srv = (sims.ticks() - t0) / os.sysconf("SC_CLK_TCK") / wall
                rows.append({"run": r + 1, "client": who, "req_s": res["request_throughput"], "tok_s": res["output_throughput"],
                             "client_cpu_pct": 100 * cpu / wall, "servers_cpu_cores": srv, "cpu_us_per_request": 1e6 * cpu / a.n})
    finally:
        sims.stop()
    by_run = lambda who: sorted((x for x in rows if x["client"] == who), key=lambda x: x["run"])
    m, p = by_run("magpie"), by_run("aiohttp")
    ratio = [x["tok_s"] / y["tok_s"] for x, y in zip(m, p)]
    extra = {}
    if a.baseline_magpie:
        b = by_run("baseline")
        extra["baseline_ratio_tok_s"] = [x["tok_s"] / y["tok_s"] for x, y in zip(b, p)]
        extra["median_baseline_ratio"] = st.median(extra["baseline_ratio_tok_s"])
        extra["after_over_before"] = [x["tok_s"] / y["tok_s"] for x, y in zip(m, b)]
        extra["median_after_over_before"] = st.median(extra["after_over_before"])
        extra["cpu_after_over_before"] = [x["cpu_us_per_request"] / y["cpu_us_per_request"] for x, y in zip(m, b)]
        extra["median_cpu_after_over_before"] = st.median(extra["cpu_after_over_before"])
    return {**extra, "events_per_write": events_per_write, "rows": rows, "ratio_tok_s": ratio, "median_ratio": st.median(ratio),
            "median_magpie_req_s": st.median(x["req_s"] for x in m), "median_magpie_tok_s": st.median(x["tok_s"] for x in m),
            "median_aiohttp_req_s": st.median(x["req_s"] for x in p), "median_aiohttp_tok_s": st.median(x["tok_s"] for x in p),
            "median_cpu_us_per_request": {"magpie": st.median(x["cpu_us_per_request"] for x in m),
                                          "aiohttp": st.median(x["cpu_us_per_request"] for x in p)}}


def report(ws):
    return json.load(open(os.path.join(ws, "benchmark_report.json")))


def token_errors(ws, truth):
    """Client token timestamp − server send time (µs), per token event."""
    errs = []
    for line in open(os.path.join(ws, "requests.jsonl")):
        q = json.loads(line)
        t = truth.get(q["id"])
        if not q["success"] or not t or q["warmup"]:
            continue
        t0 = q["monotonic_t0_ns"]
        dl = q["deliveries_ms_tokens"]
        if len(dl) != len(t["events"]):
            continue  # coalesced reads: no one-to-one match
        for (ms, _), (sent, _) in zip(dl, t["events"]):
            errs.append((t0 + ms * 1e6 - sent) / 1e3)
    return errs


def accuracy(a, tmp):
    out = {}
    for source in ("kernel", "read"):
        sims = Sims(a.sim, a.servers, tmp, ["--decode-step-ms", "20", "--max-batch", "100000"], f"acc_{source}")
        try:
            ws, res, _, _ = magpie(a, sims.url, os.path.join(tmp, f"acc_{source}"),
                                   ["--random-input-len", "16", "--random-output-len", "64", "--num-prompts", str(a.streams),
                                    "--max-concurrency", str(a.streams), "--timestamps", source])
            truth = sims.truth()
        finally:
            sims.stop()
        e = token_errors(ws, truth)
        lag = report(ws)["latency"]["read_lag"]
        out[source] = {"tokens": len(e), "p50_us": pct(e, 50), "p99_us": pct(e, 99), "max_us": max(e) if e else None,
                       "timestamp_source": res["timestamp_source"], "read_lag_p50_ms": lag["p50_ms"],
                       "read_lag_p99_ms": lag["p99_ms"], "completed": res["completed"]}
    return out


def open_loop(a, tmp):
    sims = Sims(a.sim, a.servers, tmp, ["--decode-step-ms", "0", "--max-batch", "100000"], "open")
    try:
        n = int(a.rate * a.seconds)
        ws, res, wall, cpu = magpie(a, sims.url, os.path.join(tmp, "open"),
                                   ["--random-input-len", "16", "--random-output-len", "4", "--num-prompts", str(n),
                                    "--request-rate", str(a.rate), "--metric-percentiles", "50,99", "--percentile-metrics", "ttft"])
    finally:
        sims.stop()
    return {"requested_rate": a.rate, "requests": n, "completed": res["completed"], "achieved_rate": res["achieved_request_rate"],
            "scheduled_rate": res["scheduled_request_rate"], "slip_p50_ms": res["p50_schedule_slip_ms"],
            "slip_p99_ms": res["p99_schedule_slip_ms"], "queue_p99_ms": res["p99_queue_time_ms"],
            "slip_max_ms": report(ws)["latency"]["schedule_slip"]["max_ms"],
            "ttft_p50_ms": res["p50_ttft_ms"], "duration_s": res["duration"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    build = os.environ.get("BUILD_DIR", os.path.join(ROOT, "build"))
    ap.add_argument("--magpie", default=os.environ.get("MAGPIE_BIN", os.path.join(build, "magpie")))
    ap.add_argument("--sim", default=os.path.join(build, "tests/sim/magpie_sim_server"))
    ap.add_argument("--python", default=os.environ.get("PYTHON", sys.executable), help="python with aiohttp for the baseline")
    ap.add_argument("--baseline-magpie", help="an older magpie binary run interleaved with --magpie in the throughput rounds")
    ncpu = os.cpu_count() or 1
    ap.add_argument("--servers", type=int, default=max(1, min(12, ncpu - 2)), help="simulators (default min(12, cores - 2))")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n", type=int, default=2000, help="requests per throughput run")
    ap.add_argument("--conc", type=int, default=64)
    ap.add_argument("--osl", type=int, default=64, help="tokens per request in the throughput runs")
    ap.add_argument("--streams", type=int, default=1000, help="concurrent streams in the accuracy run")
    ap.add_argument("--rate", type=float, default=20000, help="offered load of the open-loop run, requests/s")
    ap.add_argument("--seconds", type=float, default=5, help="length of the open-loop run")
    ap.add_argument("--phases", default="throughput,accuracy,open_loop")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    for exe in (a.magpie, a.sim) + ((a.baseline_magpie,) if a.baseline_magpie else ()):
        if not os.access(exe, os.X_OK):
            sys.exit(f"build magpie and magpie_sim_server first ({exe})")
    if not shutil.which("taskset"):
        sys.exit("taskset (util-linux) is needed")
    os.environ["MAGPIE_NO_PROGRESS"] = "1"
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
    res = {"machine": f"{cpu}, {ncpu} cores, {platform.system()} {platform.release()}", "load": os.getloadavg(), "config": vars(a)}
    print(f"machine: {res['machine']}; load {res['load'][0]:.1f}; client on core 0, {a.servers} simulator(s) on cores 1..")
    phases = a.phases.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        if "throughput" in phases:
            res["throughput"] = []
            for epw in (1, 8):
                t = throughput(a, tmp, epw)
                res["throughput"].append(t)
                print(f"\n== throughput, {epw} SSE event(s) per write: {a.n} requests x {a.osl} tokens, concurrency {a.conc} ==")
                print(f"{'run':>3} {'client':8} {'req/s':>9} {'tokens/s':>11} {'client CPU':>10} {'sims (cores)':>12} {'proc CPU us/req':>16}")
                for r in t["rows"]:
                    print(f"{r['run']:>3} {r['client']:8} {r['req_s']:9.0f} {r['tok_s']:11.0f} {r['client_cpu_pct']:9.0f}% "
                          f"{r['servers_cpu_cores']:12.2f} {r['cpu_us_per_request']:16.0f}")
                print(f"median magpie {t['median_magpie_req_s']:.0f} req/s {t['median_magpie_tok_s']:.0f} tok/s | aiohttp "
                      f"{t['median_aiohttp_req_s']:.0f} req/s {t['median_aiohttp_tok_s']:.0f} tok/s | ratio per run "
                      f"{', '.join(f'{x:.1f}' for x in t['ratio_tok_s'])} (median {t['median_ratio']:.1f}x)")
                if a.baseline_magpie:
                    print(f"baseline vs aiohttp per run {', '.join(f'{x:.2f}' for x in t['baseline_ratio_tok_s'])} (median "
                          f"{t['median_baseline_ratio']:.2f}x); magpie / baseline tokens/s per run "
                          f"{', '.join(f'{x:.3f}' for x in t['after_over_before'])} (median {t['median_after_over_before']:.3f}); "
                          f"CPU per request magpie / baseline median {t['median_cpu_after_over_before']:.3f}")
        if "accuracy" in phases:
            res["accuracy"] = accuracy(a, tmp)
            print(f"\n== token timestamps vs the server's send time, {a.streams} concurrent streams x 64 tokens, 20 ms steps ==")
            for k, v in res["accuracy"].items():
                print(f"{k:6} stamps: {v['tokens']} tokens, error p50 {v['p50_us']:.1f} us, p99 {v['p99_us']:.1f} us, max "
                      f"{v['max_us']:.1f} us; client read lag p50 {v['read_lag_p50_ms'] * 1000:.1f} us, p99 {v['read_lag_p99_ms'] * 1000:.1f} us "
                      f"({v['timestamp_source']} timestamps)")
        if "open_loop" in phases:
            res["open_loop"] = o = open_loop(a, tmp)
            print(f"\n== open loop: Poisson arrivals at {a.rate:.0f} req/s for {a.seconds:.0f} s (16 -> 4 tokens), one client core ==")
            print(f"completed {o['completed']} of {o['requests']}; achieved {o['achieved_rate']:.0f} req/s (schedule "
                  f"{o['scheduled_rate']:.0f}); schedule slip p50 {o['slip_p50_ms'] * 1000:.1f} us, p99 {o['slip_p99_ms'] * 1000:.1f} us; "
                  f"queue p99 {o['queue_p99_ms']:.3f} ms; TTFT p50 {o['ttft_p50_ms']:.3f} ms")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
