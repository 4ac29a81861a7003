#!/usr/bin/env python3
"""bench/serve peers: magpie, vLLM's own client (`vllm bench serve`) and NVIDIA AIPerf against the
same simulator workload, one invocation. Each client runs pinned to core 0 against simulators on
the other cores, with a local word-level tokenizer (make_tokenizer.py; no hub).

1. metrics: a paced simulator (--decode-step-ms, continuous batching), N requests of ISL -> OSL
   tokens (ignore_eos), max concurrency C; per-metric values side by side. Names map by
   definition: vLLM TTFT = AIPerf time_to_first_token; vLLM TPOT = AIPerf inter_token_latency;
   vLLM ITL (chunk gaps) = AIPerf inter_chunk_latency; vLLM E2EL = AIPerf request_latency.
   "server truth" rows: the same means from the simulators' own records (request received ->
   token sent), so that each client's own overhead shows as its distance from them.
2. client cost: a simulator without delays, --cost-n requests at concurrency 64; requests/s,
   tokens/s, and the client's CPU per request as the difference of this run and one of half as
   many requests (so start-up and imports cancel), with the start-up CPU that leaves.

The peers live in their own virtual environments (not CI's): --vllm-venv with vllm (installed
--no-deps, plus the CUDA torch wheel and the packages `vllm bench serve` imports) and
--aiperf-venv with aiperf; see bench/serve/README.md for the pinned versions and their sizes."""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (Sims, run_measured)

ROWS = [  # (label, magpie/vLLM key, AIPerf metric, AIPerf stat)
    ("completed", "completed", "request_count", "avg"),
    ("duration s", "duration", "benchmark_duration", "avg"),
    ("requests/s", "request_throughput", "request_throughput", "avg"),
    ("output tokens/s", "output_throughput", "output_token_throughput", "avg"),
    ("TTFT mean ms", "mean_ttft_ms", "time_to_first_token", "avg"),
    ("TTFT p50 ms", "median_ttft_ms", "time_to_first_token", "p50"),
    ("TTFT p99 ms", "p99_ttft_ms", "time_to_first_token", "p99"),
    ("TPOT mean ms", "mean_tpot_ms", "inter_token_latency", "avg"),
    ("TPOT p99 ms", "p99_tpot_ms", "inter_token_latency", "p99"),
    ("ITL mean ms", "mean_itl_ms", "inter_chunk_latency", "avg"),
    ("ITL p99 ms", "p99_itl_ms", "inter_chunk_latency", "p99"),
    ("E2EL mean ms", "mean_e2el_ms", "request_latency", "avg"),
    ("E2EL p99 ms", "p99_e2el_ms", "request_latency", "p99"),
]


def run_magpie(a, url, out, n, conc):
    cmd = [a.magpie, "-q", "benchmark", "--base-url", url, "--served-model-name", "sim-model", "--random-input-len", str(a.isl),
           "--random-output-len", str(a.osl), "--num-prompts", str(n), "--max-concurrency", str(conc),
           "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,99", "-o", out]
    wall, cpu = bench.run_measured(cmd)
    ws = glob.glob(os.path.join(out, "benchmark_*"))[0]
    return json.load(open(os.path.join(ws, "serving_result.json"))), wall, cpu


def run_vllm(a, url, tok, out, n, conc):
    os.makedirs(out, exist_ok=True)
    cmd = [os.path.join(a.vllm_venv, "bin/vllm"), "bench", "serve", "--backend", "openai", "--base-url", url, "--model", "sim-model",
           "--tokenizer", tok, "--dataset-name", "random", "--random-input-len", str(a.isl), "--random-output-len", str(a.osl),
           "--num-prompts", str(n), "--max-concurrency", str(conc), "--percentile-metrics", "ttft,tpot,itl,e2el",
           "--metric-percentiles", "50,99", "--save-result", "--result-dir", out, "--result-filename", "vllm.json", "--disable-tqdm"]
    wall, cpu = bench.run_measured(cmd)
    return json.load(open(os.path.join(out, "vllm.json"))), wall, cpu


def run_aiperf(a, url, tok, out, n, conc):
    cmd = [os.path.join(a.aiperf_venv, "bin/aiperf"), "profile", "-m", "sim-model", "--tokenizer", tok, "--endpoint-type", "completions",
           "--streaming", "--url", url, "--prompt-input-tokens-mean", str(a.isl), "--prompt-input-tokens-stddev", "0",
           "--prompt-output-tokens-mean", str(a.osl), "--prompt-output-tokens-stddev", "0", "--extra-inputs", "ignore_eos:true",
           "--use-server-token-count", "--concurrency", str(conc), "--request-count", str(n), "--output-artifact-dir", out,
           "--ui-type", "none", "--no-server-metrics", "--no-gpu-telemetry"]
    wall, cpu = bench.run_measured(cmd)
    path = glob.glob(os.path.join(out, "**", "profile_export_aiperf.json"), recursive=True)[0]
    return json.load(open(path)), wall, cpu


def aiperf_value(res, metric, stat):
    m = res.get(metric)
    if m is None and "records" in res:
        m = res["records"].get(metric)
    if isinstance(m, dict):
        v = m.get(stat)
        if metric == "benchmark_duration" and m.get("unit") == "sec":
            return v
        return v
    return m


def truth_stats(truth):
    """Server-side means from the simulators' records (their own clock): TTFT = first token sent −
    request received, TPOT = (last − first token sent) / (tokens − 1), E2EL = last token sent − received."""
    ttft, tpot, e2el = [], [], []
    for t in truth.values():
        ev = t["events"]
        if t["status"] != 200 or not ev:
            continue
        ttft.append((ev[0][0] - t["received_ns"]) / 1e6)
        e2el.append((ev[-1][0] - t["received_ns"]) / 1e6)
        if len(ev) > 1:
            tpot.append((ev[-1][0] - ev[0][0]) / 1e6 / (len(ev) - 1))
    mean = lambda v: sum(v) / len(v) if v else None  # noqa: E731
    return {"TTFT mean ms": mean(ttft), "TPOT mean ms": mean(tpot), "E2EL mean ms": mean(e2el)}


def fmt(v):
    return "-" if v is None else (f"{v:.0f}" if abs(v) >= 1000 else f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    build = os.environ.get("BUILD_DIR", os.path.join(bench.ROOT, "build"))
    cache = os.path.expanduser("~/.cache/magpie-peers")
    ap.add_argument("--magpie", default=os.environ.get("MAGPIE_BIN", os.path.join(build, "magpie")))
    ap.add_argument("--sim", default=os.path.join(build, "tests/sim/magpie_sim_server"))
    ap.add_argument("--vllm-venv", default=os.path.join(cache, "vllm"))
    ap.add_argument("--aiperf-venv", default=os.path.join(cache, "aiperf"))
    ncpu = os.cpu_count() or 1
    ap.add_argument("--servers", type=int, default=max(1, min(8, ncpu - 1)))
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--conc", type=int, default=32)
    ap.add_argument("--isl", type=int, default=128)
    ap.add_argument("--osl", type=int, default=64)
    ap.add_argument("--step-ms", type=float, default=5, help="decode step of the paced simulator")
    ap.add_argument("--cost-n", type=int, default=2000, help="requests of the client-cost run")
    ap.add_argument("--json")
    a = ap.parse_args()
    clients = [("magpie", None), ("vllm", os.path.join(a.vllm_venv, "bin/vllm")), ("aiperf", os.path.join(a.aiperf_venv, "bin/aiperf"))]
    clients = [(c, p) for c, p in clients if p is None or os.access(p, os.X_OK)]
    if len(clients) < 3:
        print(f"note: running only {[c for c, _ in clients]} (missing venvs; see --help)", file=sys.stderr)
    os.environ["MAGPIE_NO_PROGRESS"] = "1"
    runners = {"magpie": lambda url, tok, out, n, c: run_magpie(a, url, out, n, c),
               "vllm": lambda url, tok, out, n, c: run_vllm(a, url, tok, out, n, c),
               "aiperf": lambda url, tok, out, n, c: run_aiperf(a, url, tok, out, n, c)}
    res = {"machine": f"{ncpu} cores, load {os.getloadavg()[0]:.1f}", "config": vars(a), "metrics": {}, "cost": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tok = os.path.join(tmp, "tokenizer")  # built by a peer's python (it has `tokenizers`)
        py = next(os.path.join(v, "bin/python") for v in (a.vllm_venv, a.aiperf_venv, sys.prefix)
                  if os.access(os.path.join(v, "bin/python"), os.X_OK))
        subprocess.run([py, os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_tokenizer.py"), tok], check=True)
        phases = (("metrics", ["--decode-step-ms", str(a.step_ms), "--max-batch", "1024"], a.n, a.conc),
                  ("cost_small", ["--decode-step-ms", "0", "--max-batch", "100000"], a.cost_n // 2, 64),
                  ("cost", ["--decode-step-ms", "0", "--max-batch", "100000"], a.cost_n, 64))
        res["cost_small"] = {}
        for phase, sim_args, n, conc in phases:
            for name, _ in clients:
                sims = bench.Sims(a.sim, a.servers, tmp, sim_args, f"{phase}_{name}")
                try:
                    r, wall, cpu = runners[name](sims.url, tok, os.path.join(tmp, f"{phase}_{name}"), n, conc)
                finally:
                    sims.stop()
                res[phase][name] = {"result": {k: v for k, v in r.items() if not isinstance(v, list)}, "wall_s": wall, "cpu_s": cpu,
                                    "requests": n, "server_truth": truth_stats(sims.truth())}
                print(f"{phase}: {name} done in {wall:.1f} s (client CPU {cpu:.1f} s)", file=sys.stderr)
        # marginal CPU per request: the difference of the two cost runs (start-up and imports cancel)
        for name, _ in clients:
            big, small = res["cost"][name], res["cost_small"][name]
            res["cost"][name]["cpu_ms_per_request"] = 1000 * (big["cpu_s"] - small["cpu_s"]) / (big["requests"] - small["requests"])
            res["cost"][name]["startup_cpu_s"] = small["cpu_s"] - (big["cpu_s"] - small["cpu_s"]) * small["requests"] / (
                big["requests"] - small["requests"])
    names = [c for c, _ in clients]

    def value(phase, name, key, ai_metric, stat):
        r = res[phase][name]["result"]
        return aiperf_value(r, ai_metric, stat) if name == "aiperf" else r.get(key)

    for phase, title in (("metrics", f"paced simulator ({a.step_ms:g} ms decode steps), {a.n} requests {a.isl} -> {a.osl} tokens, "
                                     f"max concurrency {a.conc}"),
                         ("cost", f"simulator without delays, {a.cost_n} requests x {a.osl} tokens, concurrency 64")):
        print(f"\n== {title} ==")
        print(f"{'metric':18}" + "".join(f"{n:>16}" for n in names))
        rows = ROWS if phase == "metrics" else ROWS[:4]
        for label, key, am, stat in rows:
            print(f"{label:18}" + "".join(f"{fmt(value(phase, n, key, am, stat)):>16}" for n in names))
            if phase == "metrics" and label in res[phase][names[0]]["server_truth"]:
                print(f"{'  server truth':18}" + "".join(f"{fmt(res[phase][n]['server_truth'][label]):>16}" for n in names))
        if phase == "cost":
            print(f"{'client CPU ms/req':18}" + "".join(f"{res[phase][n]['cpu_ms_per_request']:>16.3f}" for n in names))
            print(f"{'start-up CPU s':18}" + "".join(f"{res[phase][n]['startup_cpu_s']:>16.1f}" for n in names))
        print(f"{'client CPU s':18}" + "".join(f"{res[phase][n]['cpu_s']:>16.1f}" for n in names))
        print(f"{'client wall s':18}" + "".join(f"{res[phase][n]['wall_s']:>16.1f}" for n in names))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
