"""MCP tool golden tests on the real binary: analyze / compare through the CLI child (host
kernels, exit-code correctness), cancellation with progress, run handles, results tools,
gap analysis and trace report on the real H200 trace, discover/suggest/config tools."""
import glob
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ["MAGPIE_SOURCE_DIR"], "tests", "golden", "mcp_protocol"))
from mcp_client import Server, check, modern_meta, run_tests  # noqa: E402

SRC = os.environ["MAGPIE_SOURCE_DIR"]
TRACES = os.path.join(SRC, "examples", "traces")
WORK = os.getcwd()


def host_kernel(name):
    path = os.path.join(WORK, name + ".cpp")
    with open(path, "w") as f:
        f.write("int main() { return 0; }\n")
    return path


def running(arg):
    """True while a live process has `arg` as an argv word (a /proc scan; no pgrep needed)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if arg.encode() in f.read().split(b"\0"):
                    return True
        except (OSError, IndexError):
            continue
    return False


def has_subcommand(words):
    r = subprocess.run([os.environ["MAGPIE_BIN"], *words, "--help"], capture_output=True, text=True)
    return r.returncode == 0


def test_analyze_runs_the_cli_and_registers_the_workspace():
    s = Server(["--output-dir", os.path.join(WORK, "results")])
    s.initialize()
    k = host_kernel("k_ok")
    r = s.call("analyze", {"kernel_path": k, "kernel_type": "host", "testcase_command": "true",
                           "compile_command": "true", "correctness_method": "exit_code"}, timeout=300)
    check(r["isError"] is False, r["content"][0]["text"])
    sc = r["structuredContent"]
    check(sc["correctness_state"] == "SUCCESS" and os.path.isfile(sc["report_path"]), sc)
    check(os.path.basename(sc["workspace"]).startswith("analyze_k_ok_"), sc["workspace"])
    bad = s.call("analyze", {"kernel_path": k, "kernel_type": "host", "testcase_command": "false",
                             "compile_command": "true", "correctness_method": "exit_code", "kernel_id": "k_bad"},
                 timeout=300)
    check(bad["isError"] is False and bad["structuredContent"]["correctness_state"] == "FAILED",
          "an incorrect kernel is data, not a tool error")
    sug = s.call("suggest_optimizations", {"analysis_result": bad["structuredContent"]})
    check(sug["structuredContent"]["bottlenecks"][0]["type"] == "incorrect", sug)
    lst = s.call("list_benchmark_results", {"output_dir": os.path.join(WORK, "results"), "mode": "all"})
    runs = lst["structuredContent"]["runs"]
    check(len(runs) == 2 and all("run_id" in x for x in runs), "both runs listed and registered: %r" % runs)
    check(os.path.isfile(os.path.join(WORK, "results", "magpie_results.sqlite")), "results store next to the output dir")
    s.close()


def test_compare_two_host_kernels():
    s = Server(["--output-dir", os.path.join(WORK, "results_cmp")])
    a, b = host_kernel("cand_a"), host_kernel("cand_b")
    r = s.call("compare", {"kernel_paths": [a, b], "testcase_commands": ["true"], "kernel_type": "host",
                           "compile_command": "true", "correctness_method": "exit_code"}, meta=modern_meta(),
               timeout=300)
    check(r["isError"] is False, r["content"][0]["text"])
    check(r["resultType"] == "complete", "modern era result")
    sc = r["structuredContent"]
    check(len(sc["kernels"]) == 2 and sc["kernel_configs"][0]["is_baseline"], sc)
    check(os.path.isfile(sc["report_path"]), sc)
    s.close()


def test_cancel_kills_the_child_and_sends_no_response():
    s = Server(["--output-dir", os.path.join(WORK, "results_cancel")])
    s.initialize()
    k = host_kernel("k_slow")
    marker = "41.%d" % os.getpid()  # unique sleep argument to find the child
    s.send({"jsonrpc": "2.0", "id": "slow-1", "method": "tools/call",
            "params": {"name": "analyze", "_meta": {"progressToken": 7},
                       "arguments": {"kernel_path": k, "kernel_type": "host", "testcase_command": "sleep " + marker,
                                     "compile_command": "true", "correctness_method": "exit_code"}}})
    deadline = time.time() + 60
    while time.time() < deadline and not running(marker):
        time.sleep(0.1)
    check(time.time() < deadline, "the testcase child started")
    check(s.request("ping")["result"] == {}, "ping is answered while a tool runs")
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow-1", "reason": "test"}})
    deadline = time.time() + 20
    while time.time() < deadline and running(marker):
        time.sleep(0.1)
    check(time.time() < deadline, "the child was killed")
    check(s.request("ping")["result"] == {}, "alive after cancel")
    rc, rest, _ = s.close()
    check(rest == "", "no response for the cancelled request: %r" % rest[:300])
    prog = [n for n in s.notifications if n["method"] == "notifications/progress"]
    check(prog and all(p["params"]["progressToken"] == 7 for p in prog), "progress streamed from the child's log")


def hanging_server():
    """A TCP server that accepts connections and never answers: the benchmark client waits."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    conns = []

    def accept():
        while True:
            try:
                conns.append(srv.accept()[0])
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    return srv


def test_benchmark_run_handle_lifecycle():
    srv = hanging_server()
    url = "http://127.0.0.1:%d" % srv.getsockname()[1]
    s = Server(["--output-dir", os.path.join(WORK, "results_bench")])
    s.initialize()
    r = s.call("benchmark", {"framework": "vllm", "model": "facebook/opt-125m", "run_mode": "local",
                             "timeout_seconds": 120,
                             "extra_args": ["--base-url", url, "--served-model-name", "m", "--num-prompts", "2"]})
    check(r["isError"] is False, r["content"][0]["text"])
    rid = r["structuredContent"]["run_id"]
    check(r["structuredContent"]["state"] == "running" and os.path.isfile(r["structuredContent"]["config_file"]), r)
    cfg = open(r["structuredContent"]["config_file"]).read()
    check("facebook/opt-125m" in cfg and "benchmark:" in cfg, cfg)
    time.sleep(1.0)
    st = s.call("benchmark_status", {"run_id": rid})["structuredContent"]
    check(st["run_id"] == rid and st["state"] == "running", "still running against a silent server: %r" % st)
    c = s.call("benchmark_cancel", {"run_id": rid})
    check(c["isError"] is False and c["structuredContent"]["cancelled"] is True, c)
    deadline = time.time() + 30
    while time.time() < deadline:
        st = s.call("benchmark_status", {"run_id": rid})["structuredContent"]
        if st["state"] != "running":
            break
        time.sleep(0.2)
    check(st["state"] == "cancelled", "cancelled run: %r" % st)
    again = s.call("benchmark_cancel", {"run_id": rid})
    check(again["structuredContent"]["cancelled"] is False, "a finished run cannot be cancelled")
    allruns = s.call("benchmark_status", {})["structuredContent"]["runs"]
    check(any(x["run_id"] == rid for x in allruns), allruns)
    s.close()
    srv.close()


def test_gap_analysis_and_sources_on_the_real_trace():
    s = Server(["--output-dir", os.path.join(WORK, "results_gap")])
    s.initialize()
    r = s.call("gap_analysis", {"trace_dir": TRACES, "top_k": 10,
                                "output_dir": os.path.join(WORK, "results_gap")}, timeout=300)
    check(r["isError"] is False, r["content"][0]["text"])
    top = r["structuredContent"]["top_kernels"]
    check(len(top) == 10 and top[0]["self_cuda_total_us"] >= top[-1]["self_cuda_total_us"], top[:2])
    check(top[0]["name"].startswith("void at::native::elementwise_kernel<128, 4"), top[0]["name"][:80])
    src = s.call("find_kernel_sources", {"kernel_names": [t["name"] for t in top],
                                         "kernel_source_repos": [os.path.join(SRC, "tests", "fixtures",
                                                                              "kernel_sources", "pytorch")]})
    kinds = {k["kind"] for k in src["structuredContent"]["kernels"]}
    check("aten_native" in kinds and "nvjet" in kinds, kinds)
    s.close()


def test_trace_report_or_clear_error():
    s = Server(["--output-dir", os.path.join(WORK, "results_tr")])
    s.initialize()
    trace = os.path.join(TRACES, "llama_tiny-rank-0.pt.trace.json.gz")
    r = s.call("trace_report", {"trace_file": trace}, timeout=300)
    if has_subcommand(["trace", "report"]):
        check(r["isError"] is False, r["content"][0]["text"])
        check(os.path.isfile(os.path.join(r["structuredContent"]["output_dir"], "report.json")), r)
    else:
        check(r["isError"] is True and "no 'trace" in r["content"][0]["text"], r["content"][0]["text"])
    s.close()


def test_results_compare_tool_and_misc():
    s = Server(["--output-dir", os.path.join(WORK, "results_misc")])
    s.initialize()
    base = os.path.join(WORK, "bench_ws")
    for name, tps in [("benchmark_vllm_20260101_000001", 1000.0), ("benchmark_vllm_20260101_000002", 1050.0)]:
        d = os.path.join(base, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "benchmark_report.json"), "w") as f:
            json.dump({"success": True, "framework": "vllm", "model": "m" + name[-1],
                       "throughput": {"output_throughput": tps}, "latency": {"ttft": {"median_ms": 40.0}}}, f)
    ws = sorted(glob.glob(os.path.join(base, "benchmark_*")))
    r = s.call("compare_benchmark_reports", {"workspace_dirs": ws, "labels": ["base", "cand"]})
    check(r["isError"] is False, r["content"][0]["text"])
    m = {x["metric"]: x for x in r["structuredContent"]["comparisons"][0]["metrics"]}
    tp = m["throughput.output_throughput"]
    check(abs(tp["ratio"] - 1.05) < 1e-9 and tp["beyond_noise"] is None and tp["verdict"] == "insufficient_data", tp)
    g = s.call("get_benchmark_result", {"workspace_dir": ws[0]})
    check(g["structuredContent"]["framework"] == "vllm" and g["structuredContent"]["success"] is True, g)
    hw = s.call("hardware_spec", {"include_all": True})
    check(hw["isError"] is False and "gpu_count" in hw["structuredContent"], hw)
    d = s.call("discover_kernels", {"project_path": os.path.join(SRC, "tests", "fixtures", "kernel_sources"),
                                    "kernel_type": "triton"})
    names = {k["name"] for k in d["structuredContent"]["kernels"]}
    check({"_rms_norm_fwd_kernel", "triton_poi_fused_add_0"} <= names and "reduce_kernel" not in names, names)
    cfg = s.call("create_kernel_config", {"kernel_id": "k", "kernel_path": "k.cu", "kernel_type": "cuda",
                                          "testcase_command": "./k", "output_path": os.path.join(WORK, "k.yaml")})
    check("testcase_command" in open(os.path.join(WORK, "k.yaml")).read(), cfg)
    s.close()


if __name__ == "__main__":
    run_tests([test_analyze_runs_the_cli_and_registers_the_workspace, test_compare_two_host_kernels,
               test_cancel_kills_the_child_and_sends_no_response, test_benchmark_run_handle_lifecycle,
               test_gap_analysis_and_sources_on_the_real_trace, test_trace_report_or_clear_error,
               test_results_compare_tool_and_misc])
