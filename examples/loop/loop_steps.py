"""Step helpers of run_loop.py (stdlib only): the example server's life cycle, the magpie
subcommands the loop runs (benchmark client, trace stages/report/gap/sources, compare,
results compare) and where their report files are. Each helper logs its command and output
under <out>/logs and returns parsed data; failures raise StepError with the log path.
"""
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


class StepError(Exception):
    pass


def log(msg):
    print("[loop %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def load_json(path):
    with open(path) as f:
        return json.loads(f.read(), strict=False)


class Runner:
    """Runs commands with their stdout/stderr in <out>/logs/<name>.out|.err; keeps a command list."""

    def __init__(self, out_dir, env=None):
        self.logs = os.path.join(out_dir, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.env = dict(os.environ, **(env or {}))
        self.commands = []

    def run(self, name, argv, cwd=None, timeout=600, env=None, check=True):
        t0 = time.time()
        out_p, err_p = os.path.join(self.logs, name + ".out"), os.path.join(self.logs, name + ".err")
        e = dict(self.env, **(env or {}))
        with open(out_p, "w") as o, open(err_p, "w") as er:
            try:
                rc = subprocess.run(argv, cwd=cwd, stdout=o, stderr=er, env=e, timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                rc = 124
            except OSError as x:
                er.write("cannot run: %s\n" % x)
                rc = 127
        rec = {"name": name, "argv": argv, "cwd": cwd, "rc": rc, "seconds": round(time.time() - t0, 2),
               "stdout": os.path.relpath(out_p, os.path.dirname(self.logs)), "env": env or {}}
        self.commands.append(rec)
        log("%s rc=%d (%.1f s)" % (name, rc, rec["seconds"]))
        if check and rc != 0:
            with open(err_p) as f:
                tail = f.read()[-1500:]
            with open(out_p) as f:
                tail = f.read()[-800:] + tail
            raise StepError("%s exited %d: %s" % (name, rc, tail.strip()[-1500:]))
        with open(out_p) as f:
            return rc, f.read()


# ---------------------------------------------------------------- server
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, python, backend, kernels, trace_dir, log_path, extra_env=None, ready_timeout=420, port=0):
        self.python, self.backend, self.kernels, self.want_port = python, backend, kernels, port
        self.trace_dir, self.log_path, self.ready_timeout = trace_dir, log_path, ready_timeout
        self.extra_env = extra_env or {}
        self.proc, self.port, self.info = None, 0, {}

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        """Starts on the wanted port (the same URL for every server of a loop, so the benchmark
        configs stay identical); a port taken meanwhile falls back to any free port."""
        try:
            return self._start(self.want_port)
        except StepError as e:
            if not self.want_port or "Address already in use" not in str(e):
                raise
            log("port %d is taken; retrying on a free port" % self.want_port)
            return self._start(0)

    def _start(self, port):
        port_file = self.log_path + ".port"
        if os.path.exists(port_file):
            os.remove(port_file)
        argv = [self.python, os.path.join(HERE, "server.py"), "--backend", self.backend, "--port", str(port),
                "--port-file", port_file, "--trace-dir", self.trace_dir, "--kernels", self.kernels]
        env = dict(os.environ, PYTHONUNBUFFERED="1", **self.extra_env)
        log("starting server: %s" % " ".join(argv))
        self.logf = open(self.log_path, "a")
        self.proc = subprocess.Popen(argv, stdout=self.logf, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        t0 = time.time()
        while time.time() - t0 < self.ready_timeout:
            if self.proc.poll() is not None:
                rc, self.proc = self.proc.returncode, None
                self.logf.close()
                raise StepError("server exited %d during start-up; log %s:\n%s" % (rc, self.log_path, self._tail()))
            if os.path.exists(port_file):
                with open(port_file) as f:
                    self.port = int(f.read().strip() or 0)
                if self.port and self._get("/health")[0] == 200:
                    self.info = json.loads(self._get("/loop_info")[1])
                    log("server ready on %s after %.1f s (kernels %s)" % (self.url, time.time() - t0,
                                                                          self.info.get("kernel_spec")))
                    return self.info
            time.sleep(0.5)
        self.stop()
        raise StepError("server not ready after %.0f s; log %s:\n%s" % (self.ready_timeout, self.log_path, self._tail()))

    def _get(self, path, timeout=10):
        try:
            with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
                return r.status, r.read().decode()
        except Exception as e:  # not up yet / refused / 503
            return getattr(e, "code", 0), str(e)

    def post(self, path, timeout=600):
        req = urllib.request.Request(self.url + path, data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read().decode())

    def _tail(self, n=3000):
        try:
            with open(self.log_path) as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def stop(self):
        """Stops the server's whole process group: SIGTERM, then SIGKILL after 10 s."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(10)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        self.logf.close()
        self.proc = None


# ---------------------------------------------------------------- magpie subcommands
def newest(pattern):
    c = sorted(glob.glob(pattern), key=os.path.getmtime)
    return c[-1] if c else ""


def benchmark(runner, magpie, name, url, bench, out_dir, num_prompts, profile=False, server_trace_dir=""):
    """magpie benchmark --base-url (client only); returns (report dict, workspace path)."""
    argv = [magpie, "benchmark", "--base-url", url, "--dataset-name", "random",
            "--random-input-len", str(bench["input_len"]), "--random-output-len", str(bench["output_len"]),
            "--random-range-ratio", str(bench["range_ratio"]), "--num-prompts", str(num_prompts),
            "--max-concurrency", str(bench["concurrency"]), "--request-rate", "inf", "--ignore-eos",
            "--seed", str(bench.get("seed", 0)), "--num-warmups", str(bench.get("warmups", 2)),
            "--output-dir", out_dir]
    if profile:
        argv += ["--torch-profiler", "--server-trace-dir", server_trace_dir]
    os.makedirs(out_dir, exist_ok=True)
    rc, _ = runner.run(name, argv, timeout=bench.get("timeout_s", 400), check=False)
    ws = newest(os.path.join(out_dir, "*", "benchmark_report.json"))
    if not ws:
        raise StepError("%s: no benchmark_report.json under %s (rc %d, see logs/%s.err)" % (name, out_dir, rc, name))
    report = load_json(ws)
    if rc != 0 or not report.get("success"):
        raise StepError("%s failed (rc %d): %s" % (name, rc, "; ".join(report.get("errors") or [])[:800]))
    return report, os.path.dirname(ws)


def request_lens(workspace):
    """[[prompt_len, max_tokens], ...] of the measured (non-warm-up) requests, by index."""
    rows = []
    path = os.path.join(workspace, "requests.jsonl")
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                if not r.get("warmup"):
                    rows.append((r.get("index", 0), r.get("prompt_len"), r.get("max_tokens")))
    return [[p, m] for _, p, m in sorted(rows)]


def find_trace(workspace, server_trace_dir):
    t = newest(os.path.join(workspace, "torch_trace", "**", "*.pt.trace.json*"))
    if not t:
        t = newest(os.path.join(workspace, "torch_trace", "*.json*"))
    if not t and server_trace_dir:
        t = newest(os.path.join(server_trace_dir, "*.pt.trace.json*"))
    return t


def trace_analysis(runner, magpie, trace, out_dir, bench, gap, repo):
    """magpie trace stages / report, gap analysis of the steady-state window with source
    columns, and trace sources (confidence). Returns a dict of parsed outputs."""
    os.makedirs(out_dir, exist_ok=True)
    tdir = os.path.join(out_dir, "torch_trace")
    os.makedirs(tdir, exist_ok=True)
    local = os.path.join(tdir, os.path.basename(trace))
    if not os.path.exists(local):
        os.symlink(os.path.abspath(trace), local)
    res = {"trace": trace}
    rc, out = runner.run("trace_stages", [magpie, "trace", "stages", trace, "--stages", "decode", "prefill",
                                          "--isl", str(bench["input_len"]), "--osl", str(bench["output_len"]),
                                          "--conc", str(bench["concurrency"]), "-o", os.path.join(out_dir, "tracelens"),
                                          "--json"], check=False)
    res["stages"] = _json_or_error(out, rc)
    rc, out = runner.run("trace_report", [magpie, "trace", "report", trace, "-o", os.path.join(out_dir, "report"),
                                          "--json"], check=False)
    res["report"] = _json_or_error(out, rc)
    res["window_pct"] = [gap["start_pct"], gap["end_pct"]]
    for attempt, (lo, hi) in enumerate([(gap["start_pct"], gap["end_pct"]), (0, 100)]):
        rc, out = runner.run("gap_analysis" if attempt == 0 else "gap_analysis_full",
                             [magpie, "benchmark", "--trace-dir", tdir, "--top-k", str(gap["top_k"]),
                              "--start-pct", str(lo), "--end-pct", str(hi),
                              "--find-kernel-sources", "--kernel-source-repos", repo], cwd=out_dir, check=attempt == 1)
        if rc == 0:
            break
        # An idle stretch can leave a %-of-span window without kernels: widen it, and say so.
        log("no kernels in the %s-%s%% window; gap analysis of the whole trace instead" % (lo, hi))
        res["window_pct"] = [0, 100]
        res["window_widened"] = True
    res["gap_csv"] = os.path.join(out_dir, "results", "gap_analysis", "gap_analysis.csv")
    with open(res["gap_csv"]) as f:
        res["gap_csv_text"] = f.read()
    rc, out = runner.run("trace_sources", [magpie, "trace", "sources", "--gap-csv", res["gap_csv"],
                                           "--kernel-source-repos", repo, "--json"], check=False)
    res["sources"] = _json_or_error(out, rc)
    return res


def _json_or_error(text, rc):
    try:
        return json.loads(text, strict=False) if text.strip() else {"error": "no output (rc %d)" % rc}
    except ValueError as e:
        return {"error": "unparsable JSON (rc %d): %s" % (rc, e)}


def compare(runner, magpie, yaml_path, out_dir, env, max_time):
    os.makedirs(out_dir, exist_ok=True)
    argv = [magpie, "compare", "-k", yaml_path, "-o", out_dir, "--max-time", str(max_time)]
    runner.run("compare", argv, env=env, timeout=900)
    rep = newest(os.path.join(out_dir, "*", "compare_report.json"))
    if not rep:
        raise StepError("compare wrote no compare_report.json under %s" % out_dir)
    return load_json(rep), rep


def results_compare(runner, magpie, before_ws, after_ws, db):
    argv = [magpie, "results", "compare", ",".join(before_ws), ",".join(after_ws), "--register", "--db", db, "--json"]
    rc, out = runner.run("results_compare", argv, check=False)
    return _json_or_error(out, rc)
