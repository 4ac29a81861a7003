#!/usr/bin/env python3
"""The optimization loop of docs/optimization-loop.md, end to end, with one report.

    python3 examples/loop/run_loop.py --magpie build/magpie --out /tmp/loop [--backend torch|numpy] [--runs 3]

Steps: start the example server with the baseline kernels (plus one discarded warm-up pass) -> calibrate the prompt count ->
N unprofiled benchmarks -> one profiled run -> stage split / roofline / gap analysis of the
steady-state window with kernel sources -> choose the kernel by total time and map it to
examples/loop -> magpie compare of its op's candidates (correctness gate) -> restart the server
with the winner -> the same N benchmarks -> kernel-level and end-to-end change with noise.
Writes <out>/loop_report.json and <out>/loop_report.md; prints the summary table.
Exit: 0 the loop finished (improved, or stopped for a reason in the report), 1 a step failed
(infrastructure), 2 usage.
"""
import argparse
import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import loop_lib as L  # noqa: E402
import loop_report  # noqa: E402
import loop_steps as S  # noqa: E402


class Loop:
    def __init__(self, args, cfg):
        self.a, self.cfg = args, cfg
        self.out = os.path.abspath(args.out)
        self.bench = dict(cfg["benchmark"][args.backend])
        if args.concurrency:
            self.bench["concurrency"] = args.concurrency
        self.runner = S.Runner(self.out, {"MAGPIE_PYTHON": os.environ.get("MAGPIE_PYTHON") or args.python})
        self.report = {"schema": "magpie-loop-1", "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                       "backend": args.backend, "magpie": args.magpie, "runs_per_side": args.runs,
                       "benchmark": self.bench, "steps": {}, "stop": None, "outcome": None}
        self.trace_dir = os.path.join(self.out, "server_traces")
        self.server = None
        self.port = S.free_port()

    # ---- bookkeeping
    def step(self, name, fn):
        t0 = time.time()
        S.log("step %s" % name)
        rec = {"status": "running"}
        self.report["steps"][name] = rec
        try:
            value = fn()
            rec["status"] = "ok"
            return value
        except L.Stop as s:
            rec["status"] = "stopped"
            rec["stop"] = s.to_json()
            raise
        except S.StepError as e:
            rec["status"] = "failed"
            rec["error"] = str(e)
            raise
        finally:
            rec["seconds"] = round(time.time() - t0, 2)

    def start_server(self, kernels, tag):
        if self.server:
            self.server.stop()
        self.server = S.Server(self.a.python, self.a.backend, kernels, self.trace_dir,
                               os.path.join(self.out, "logs", "server_%s.log" % tag), ready_timeout=self.a.ready_timeout,
                               port=self.port)
        info = self.server.start()
        self.warm_up(tag)
        return info

    def warm_up(self, tag):
        """One discarded pass of the benchmark workload on a freshly started server: the first
        ~100 requests after a start run several times slower (kernels compiled and allocator
        pools grown for each new batch/length shape), which the server's own warm-up at two shapes
        does not cover. Without it the first measured run of each side is an outlier and the
        calibration sizes the runs from a cold server."""
        n = int(self.bench.get("warmup_prompts", 3 * self.bench["concurrency"]))
        if n <= 0:
            return
        rep, ws = S.benchmark(self.runner, self.a.magpie, "warmup_%s" % tag, self.server.url, self.bench,
                              os.path.join(self.out, "bench", "warmup_%s" % tag), n)
        m = L.benchmark_metrics(rep)
        self.report.setdefault("warmups", {})[tag] = {"workspace": ws, "num_prompts": n, "duration_s": m["duration_s"],
                                                      "output_throughput": m["output_throughput"]}
        S.log("warm-up (%s): %d requests in %.2f s, discarded" % (tag, n, m["duration_s"] or 0))

    def run_benchmarks(self, tag, n, num_prompts):
        runs = []
        for i in range(n):
            rep, ws = S.benchmark(self.runner, self.a.magpie, "bench_%s_%d" % (tag, i), self.server.url, self.bench,
                                  os.path.join(self.out, "bench", "%s_%d" % (tag, i)), num_prompts)
            m = L.benchmark_metrics(rep)
            fp = L.benchmark_fingerprint(rep, S.request_lens(ws), self.server.info)
            runs.append({"workspace": ws, "url": self.server.url, "metrics": m, "fingerprint": fp[0], "fingerprint_parts": fp[1]})
            S.log("%s run %d: %.1f tok/s output, TPOT %.3f ms" % (tag, i, m["output_throughput"] or 0,
                                                                   m["tpot_mean_ms"] or 0))
        return runs

    # ---- the steps
    def calibrate(self):
        c = self.bench["concurrency"]
        if self.a.num_prompts:
            return {"num_prompts": self.a.num_prompts, "how": "--num-prompts"}
        probe = 3 * c
        rep, _ = S.benchmark(self.runner, self.a.magpie, "calibrate", self.server.url, self.bench,
                             os.path.join(self.out, "bench", "calibrate"), probe)
        m = L.benchmark_metrics(rep)
        rate = (m["completed"] or probe) / max(m["duration_s"] or 1e-3, 1e-3)
        n = int(round(rate * self.bench["target_s"] / c)) * c
        n = max(2 * c, min(n, 50 * 1000))
        return {"num_prompts": n, "how": "%d probe requests took %.2f s (%.1f req/s); target %s s"
                % (probe, m["duration_s"] or 0, rate, self.bench["target_s"])}

    def profile(self):
        rep, ws = S.benchmark(self.runner, self.a.magpie, "bench_profiled", self.server.url, self.bench,
                              os.path.join(self.out, "bench", "profiled"), self.bench["profile_prompts"],
                              profile=True, server_trace_dir=self.trace_dir)
        trace = S.find_trace(ws, self.trace_dir)
        if not trace:
            raise S.StepError("the profiled run left no trace in %s/torch_trace or %s" % (ws, self.trace_dir))
        return {"workspace": ws, "trace": trace, "metrics": L.benchmark_metrics(rep),
                "profiling_enabled": rep.get("profiling_enabled")}

    def analyze(self, trace):
        res = S.trace_analysis(self.runner, self.a.magpie, trace, os.path.join(self.out, "analysis"), self.bench,
                               self.cfg["gap"], HERE)
        rows = L.read_gap_csv(res.pop("gap_csv_text"))
        if not rows:
            raise S.StepError("gap analysis found no kernels in %s" % trace)
        res["summary"] = loop_report.analysis_summary(res)
        res["gap_rows"] = rows
        return res

    def choose(self, analysis):
        d = self.cfg["decision"]
        conf = L.sources_confidences(analysis.get("sources"))
        cl = L.classify_rows(analysis["gap_rows"], conf, self.cfg["kernel_symbols"], d["min_confidence"])
        self.report["ranking"] = cl
        row, op = L.choose_kernel(cl, self.cfg["kernel_symbols"])
        op_cfg = self.cfg["ops"].get(op)
        if not op_cfg or not op_cfg.get("candidates"):
            raise L.Stop("no_candidates", "op %s (kernel %s) has no candidates in loop_config.json" % (op, row["name"]))
        share = sum(r["total_us"] for r in cl if r["registry_symbol"] and self.cfg["kernel_symbols"][r["registry_symbol"]] == op)
        total = sum(r["total_us"] for r in cl) or 1
        return {"kernel": row["name"], "rank": row["rank"], "op": op, "source_file": row["source_file"],
                "file": os.path.join("examples/loop", row["file"]), "line": row["line"], "confidence": row["confidence"],
                "total_us": row["total_us"], "pct_total": row["pct_total"], "calls": row["calls"],
                "op_share_of_ranked_pct": share / total * 100.0,
                "skipped_above": [{"rank": r["rank"], "name": r["name"][:100], "why": r["why"]} for r in cl[:row["rank"] - 1]]}

    def compare(self, op):
        op_cfg = self.cfg["ops"][op]
        yaml_path = os.path.join(HERE, op_cfg["compare"][self.a.backend])
        env = {"MAGPIE_LOOP_TIMED_TOKENS": str(self.bench["concurrency"])}
        rep, path = S.compare(self.runner, self.a.magpie, yaml_path, os.path.join(self.out, "compare"), env,
                              self.a.compare_max_time)
        self.report["compare_report"] = path
        return L.choose_winner(rep, op_cfg)

    def switch(self, op, impl, baseline_info):
        spec = "%s,%s=%s" % (self.cfg["baseline_kernels"], op, impl)
        info = self.start_server(spec, "winner")
        if info.get("kernels", {}).get(op) != impl:
            raise S.StepError("the restarted server runs %s for %s, not %s" % (info.get("kernels", {}).get(op), op, impl))
        for k in ("model_config", "weights_sha256"):
            if info.get(k) != baseline_info.get(k):
                raise L.Stop("inputs_changed", "the restarted server's %s differs from the baseline server's" % k,
                             {"baseline": baseline_info.get(k), "winner": info.get(k)})
        return {"kernel_spec": info.get("kernel_spec"), "server": info}

    def run(self):
        r = self.report
        try:
            r["server_baseline"] = self.step("start_server", lambda: self.start_server(self.cfg["baseline_kernels"], "baseline"))
            cal = self.step("calibrate", self.calibrate)
            r["num_prompts"] = cal["num_prompts"]
            r["calibration"] = cal
            r["baseline_runs"] = self.step("baseline_benchmarks", lambda: self.run_benchmarks("baseline", self.a.runs, cal["num_prompts"]))
            r["profile"] = self.step("profiled_run", self.profile)
            self.server.stop()  # the GPU is left to magpie compare; switch_in starts a new server
            analysis = self.step("trace_analysis", lambda: self.analyze(r["profile"]["trace"]))
            r["analysis"] = {k: v for k, v in analysis.items() if k not in ("report", "stages", "sources")}
            r["chosen"] = self.step("choose_kernel", lambda: self.choose(analysis))
            r["kernel"] = self.step("compare", lambda: self.compare(r["chosen"]["op"]))
            r["switch"] = self.step("switch_in", lambda: self.switch(r["chosen"]["op"], r["kernel"]["impl"], r["server_baseline"]))
            r["after_runs"] = self.step("after_benchmarks", lambda: self.run_benchmarks("after", self.a.runs, cal["num_prompts"]))
            self.step("inputs_check", lambda: L.check_inputs_unchanged(
                [(x["fingerprint"], x["fingerprint_parts"]) for x in r["baseline_runs"]],
                [(x["fingerprint"], x["fingerprint_parts"]) for x in r["after_runs"]]))
            r["outcome"] = self.step("e2e", self.e2e)
        except L.Stop as s:
            r["stop"] = s.to_json()
            r["outcome"] = "stopped"
        except S.StepError as e:
            r["outcome"] = "failed"
            r["error"] = str(e)
        finally:
            if self.server:
                self.server.stop()
            r["commands"] = self.runner.commands
            r["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        return r

    def e2e(self):
        r = self.report
        before = [x["metrics"] for x in r["baseline_runs"]]
        after = [x["metrics"] for x in r["after_runs"]]
        ch = L.e2e_change(before, after, self.cfg["decision"]["alpha"])
        rc = S.results_compare(self.runner, self.a.magpie, [x["workspace"] for x in r["baseline_runs"]],
                               [x["workspace"] for x in r["after_runs"]], os.path.join(self.out, "results.sqlite"))
        primary = self.cfg["decision"]["primary_metric"]
        mv = L.results_compare_verdict(rc, primary) if "error" not in rc else None
        r["e2e"] = {"metrics": ch, "primary_metric": primary, "magpie_results_compare": mv,
                    "results_compare_error": rc.get("error")}
        r["e2e"]["store_hash_warning"] = L.check_store_hashes(rc, [x["url"] for x in r["baseline_runs"]],
                                                              [x["url"] for x in r["after_runs"]])
        return L.e2e_decision(ch, primary, mv)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--magpie", required=True, help="the magpie binary")
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--backend", choices=["torch", "numpy"], default="torch")
    ap.add_argument("--runs", type=int, default=3, help="unprofiled benchmarks per side (>= 2; default 3)")
    ap.add_argument("--python", default=sys.executable, help="python for the server (default: this one)")
    ap.add_argument("--config", default=os.path.join(HERE, "loop_config.json"))
    ap.add_argument("--num-prompts", type=int, default=0, help="skip calibration and use this many prompts per run")
    ap.add_argument("--concurrency", type=int, default=0, help="override the config's concurrency")
    ap.add_argument("--compare-max-time", type=float, default=6.0, help="magpie compare --max-time, seconds (default 6)")
    ap.add_argument("--ready-timeout", type=float, default=420.0, help="server start-up limit, seconds (default 420)")
    a = ap.parse_args(argv)
    if a.runs < 2:
        ap.error("--runs must be >= 2 (the noise test needs repeated runs)")
    a.magpie = os.path.abspath(a.magpie)
    with open(a.config) as f:
        cfg = json.load(f)
    os.makedirs(a.out, exist_ok=True)

    def on_term(signum, frame):  # a time limit: end the current step, stop the server, write the report
        raise S.StepError("terminated by signal %d (time limit)" % signum)
    signal.signal(signal.SIGTERM, on_term)
    loop = Loop(a, cfg)
    rep = loop.run()
    paths = loop_report.write(rep, loop.out)
    print(loop_report.table(rep))
    print("report: %s\n        %s" % paths)
    return 1 if rep["outcome"] == "failed" else 0


if __name__ == "__main__":
    sys.exit(main())
