"""Every MCP tool, called once or more with Magpie's argument names (research magpie.md §10),
over stdio. Arguments are validated against each tool's inputSchema before the call and every
non-error structuredContent against its outputSchema (Draft 2020-12). Magpie-only arguments are
passed with Magpie's default values, as Magpie's clients do."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import jsonschema

sys.path.insert(0, os.path.join(os.environ["MAGPIE_SOURCE_DIR"], "tests", "golden", "mcp_protocol"))
from mcp_client import Failure, Server, check  # noqa: E402

# MAGPIE_MCP_CLIENT=sdk (tests/golden/mcp_sdk): the official MCP Python SDK is the client.
SDK = os.environ.get("MAGPIE_MCP_CLIENT") == "sdk"
if SDK:
    sys.path.insert(0, os.path.join(os.environ["MAGPIE_SOURCE_DIR"], "tests", "golden", "mcp_sdk"))
    from sdk_client import SdkServer  # noqa: E402
# Tools whose successful result needs a Slurm or Ray cluster (tests/golden/ray_compare runs them).
NEEDS_CLUSTER = {"jobs_status", "jobs_collect", "jobs_cancel"}

SRC = os.environ["MAGPIE_SOURCE_DIR"]
WORK = os.getcwd()
RESULTS = os.path.join(WORK, "results")
ACCORDO = {"accordo_kernel_name": "", "accordo_reference_binary": "", "accordo_optimized_binary": "",
           "accordo_atol": 1e-6, "accordo_rtol": 1e-5, "accordo_equal_nan": False, "accordo_timeout_seconds": 30}
MAGPIE_KERNEL_DEFAULTS = {"environment": "local", "performance_backend": "", "correctness_backend": "", **ACCORDO}


class Client:
    def __init__(self):
        self.s = SdkServer(["--output-dir", RESULTS]) if SDK else Server(["--output-dir", RESULTS])
        self.s.initialize()
        tools = self.s.request("tools/list", {})["result"]["tools"]
        self.tools = {t["name"]: t for t in tools}
        for t in tools:
            jsonschema.Draft202012Validator.check_schema(t["inputSchema"])
            check("outputSchema" in t, "%s: no outputSchema" % t["name"])
            jsonschema.Draft202012Validator.check_schema(t["outputSchema"])
        self.called = set()

    def call(self, name, args, expect_error=False, timeout=300):
        tool = self.tools[name]
        jsonschema.validate(args, tool["inputSchema"], cls=jsonschema.Draft202012Validator)
        r = self.s.call(name, args, timeout=timeout)
        self.called.add(name)
        text = r["content"][0]["text"] if r.get("content") else ""
        if expect_error:
            check(r["isError"] is True, "%s: expected isError, got %s" % (name, text[:300]))
            return r
        check(r["isError"] is False, "%s failed: %s" % (name, text[:800]))
        sc = r["structuredContent"]
        try:
            jsonschema.validate(sc, tool["outputSchema"], cls=jsonschema.Draft202012Validator)
        except jsonschema.ValidationError as e:
            raise Failure("%s: output does not match its outputSchema at %s: %s" % (name, list(e.absolute_path), e.message))
        return sc


def host_kernel(d, name, body="int main() { return 0; }\n"):
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(body)
    return p


def start_sim():
    port_file = os.path.join(WORK, "sim.port")
    proc = subprocess.Popen([os.environ["MAGPIE_SIM_SERVER"], "--port-file", port_file, "--decode-step-ms", "1"],
                            stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.05)
    return proc, "http://127.0.0.1:%s" % open(port_file).read().strip()


def wait_run(c, rid, timeout=240):
    deadline = time.time() + timeout
    while time.time() < deadline:
        st = c.call("benchmark_status", {"run_id": rid, "tail_lines": 5})
        if st["state"] not in ("running", "queued"):
            return st
        time.sleep(0.3)
    raise Failure("run %s did not finish" % rid)


def alive(needle):
    """True while a process's command line contains `needle`."""
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and needle.encode() in open("/proc/%s/cmdline" % pid, "rb").read():
                return True
        except OSError:
            pass
    return False


OPTIMIZE_YAML = """optimize:
  name: dropin_mcp
  workload: {dataset_name: random, random_input_len: 16, random_output_len: 4, max_concurrency: 2, num_prompts: 4,
             timeout_s: 60}
  server:
    command: ["python3", "-c", "import time; time.sleep(300)", "{variant}", "{trace_dir}"]
    baseline: baseline
    variant: "{baseline},{op}={impl}"
    ready_timeout_s: 120
  sources: {repos: ["%(loop)s"]}
  ops:
    rms_norm: {compare: "%(loop)s/compare_rms_norm_cpu.yaml", baseline_id: rms_norm_baseline,
               kernels: [_rms_norm_sumsq_kernel], candidates: {rms_norm_onepass: onepass}}
  e2e: {pairs: %(pairs)d, max_pairs: 2}
"""


def wait_optimize(c, rid, until, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        st = c.call("optimize_status", {"run_id": rid, "tail_lines": 5})
        if until(st):
            return st
        time.sleep(0.2)
    raise Failure("optimize run %s: condition not reached; last status %s" % (rid, json.dumps(st)[:800]))


def check_optimize(c):
    """The loop's tools without a GPU or numpy: a missing config is a tool error, a refused config
    fails the run with file:line:field, and a loop whose server never becomes ready is seen in its
    start_server step and cancelled with its server."""
    loop = os.path.join(SRC, "examples", "loop")
    c.call("optimize", {"config": os.path.join(WORK, "no_such_optimize.yaml")}, expect_error=True)
    bad = os.path.join(WORK, "optimize_bad.yaml")
    with open(bad, "w") as f:
        f.write(OPTIMIZE_YAML % {"loop": loop, "pairs": 1})
    r = c.call("optimize", {"config": bad, "output_dir": os.path.join(WORK, "opt")})
    st = wait_optimize(c, r["run_id"], lambda s: s["state"] != "running")
    check(st["state"] == "failed" and "optimize_bad.yaml:14:" in st["error"] and "optimize.e2e.pairs" in st["error"], st)
    good = os.path.join(WORK, "optimize.yaml")
    with open(good, "w") as f:
        f.write(OPTIMIZE_YAML % {"loop": loop, "pairs": 2})
    r = c.call("optimize", {"config": good, "output_dir": os.path.join(WORK, "opt"), "pairs": 2, "num_prompts": 4,
                            "control": "none", "order": "abba", "servers": "restart", "timeout_seconds": 600})
    rid, ws = r["run_id"], r["workspace"]
    st = wait_optimize(c, rid, lambda s: s["state"] != "running" or (s["loop"].get("current") or {}).get("step") == "start_server")
    check(st["state"] == "running" and st["loop"]["current"]["index"] == 1, st)
    wait_optimize(c, rid, lambda s: alive(os.path.join(ws, "server_traces")), timeout=30)  # the loop's server is up
    cancel = c.call("optimize_cancel", {"run_id": rid})
    check(cancel["cancelled"] is True, cancel)
    st = wait_optimize(c, rid, lambda s: s["state"] != "running", timeout=60)
    check(st["state"] == "cancelled", st)
    time.sleep(0.5)
    check(not alive(ws), "a process of the cancelled loop is still running")
    check(c.call("optimize_cancel", {"run_id": rid})["cancelled"] is False, "a cancelled loop cannot be cancelled again")
    c.call("optimize_status", {"run_id": "no_such_run"}, expect_error=True)


def main():
    c = Client()
    kdir = os.path.join(WORK, "kernels")
    script = host_kernel(kdir, "run_test.sh", "#!/bin/sh\npwd > ran_in.txt\nexit 0\n")
    os.chmod(script, 0o755)
    k1 = host_kernel(kdir, "kernel_a.py", "def add(a, b):\n    return a + b\n")
    k2 = host_kernel(kdir, "kernel_b.py", "def add(a, b):\n    return b + a\n")

    # hardware / GPU control
    c.call("hardware_spec", {"device_id": 0, "include_all": False})
    c.call("hardware_spec", {"include_all": True})
    r = c.s.call("configure_gpu", {"device_ids": None, "power_limit_watts": None, "gpu_clock_mhz": None,
                                   "mem_clock_mhz": None, "reset": True}, timeout=120)
    c.called.add("configure_gpu")
    if r["isError"]:
        check("no GPU" in r["content"][0]["text"], r["content"][0]["text"])
        # A stand-in nvidia-smi (tests/fixtures/gpu) shows two H200s; it refuses the clock reset,
        # which the tool lists per command: a structured result all the same.
        fx = os.path.join(SRC, "tests", "fixtures", "gpu")
        env = dict(os.environ, PATH=fx + os.pathsep + os.environ["PATH"],
                   MAGPIE_FAKE_SMI_DIR=os.path.join(fx, "h200x2_idle"))
        g = (SdkServer if SDK else Server)(["--output-dir", RESULTS], env=env)
        g.initialize()
        r = g.call("configure_gpu", {"device_ids": [0], "reset": True}, timeout=120)
        check(r["isError"] is False and len(r["structuredContent"]["errors"]) == 2, r)
        if SDK:
            c.s.validated |= g.validated
        g.close()
    jsonschema.validate(r["structuredContent"], c.tools["configure_gpu"]["outputSchema"])

    # analyze with Magpie's arguments: torch alias, relative ./run_test.sh inside working_dir
    a = c.call("analyze", {"kernel_path": k1, "testcase_command": "./run_test.sh", "kernel_type": "torch",
                           "working_dir": kdir, "compile_command": "", "check_performance": False,
                           **MAGPIE_KERNEL_DEFAULTS})
    check(a["correctness_state"] == "SUCCESS" and a["kernel_type"] == "pytorch", a)
    check(open(os.path.join(kdir, "ran_in.txt")).read().strip() == kdir, "testcase not run in working_dir")
    # Magpie's accordo / metrix / container arguments: accepted, reported
    w = c.call("analyze", {"kernel_path": k1, "testcase_command": "./run_test.sh", "kernel_type": "py",
                           "working_dir": kdir, "check_performance": False, "environment": "container",
                           "performance_backend": "metrix", "correctness_backend": "accordo",
                           "accordo_kernel_name": "add", "accordo_atol": 1e-3, "accordo_rtol": 1e-3})
    joined = " ".join(w["warnings"])
    for word in ("environment 'container'", "metrix", "accordo"):
        check(word in joined, "no warning about %s: %r" % (word, w["warnings"]))
    # a missing kernel file is a tool error, not "correctness SKIPPED"
    c.call("analyze", {"kernel_path": os.path.join(kdir, "missing.hip"), "testcase_command": "./run_test.sh"},
           expect_error=True)
    c.call("compare", {"kernel_paths": [k1, os.path.join(kdir, "nope.py")], "testcase_commands": ["true", "true"]},
           expect_error=True)
    # reference_path with a non-hip type (the CLI child gets the kernel's type)
    ex = os.path.join(SRC, "examples", "host")
    ref = c.call("analyze", {"kernel_path": os.path.join(ex, "vector_add_unrolled.cpp"),
                             "reference_path": os.path.join(ex, "vector_add.cpp"), "kernel_type": "host",
                             "check_performance": False, "testcase_command": ""})
    check(ref["correctness_state"] == "SUCCESS", ref)
    sug = c.call("suggest_optimizations", {"analysis_result": json.dumps(a)})
    check("bottlenecks" in sug, sug)

    cmp_ = c.call("compare", {"kernel_paths": [k1, k2], "testcase_commands": ["./run_test.sh", "./run_test.sh"],
                              "kernel_type": "torch", "baseline_index": 0, "check_performance": False,
                              "working_dir": kdir, **MAGPIE_KERNEL_DEFAULTS})
    check(len(cmp_["kernels"]) == 2 and cmp_["kernel_configs"][0]["is_baseline"] is True, cmp_)

    cfg = c.call("create_kernel_config", {"kernel_id": "k", "kernel_path": k1, "testcase_command": "./run_test.sh",
                                          "kernel_type": "hip", "working_dir": kdir, "compile_command": "",
                                          "output_path": ""})
    check("testcase_command" in cfg["config_content"], cfg)
    c.call("discover_kernels", {"project_path": os.path.join(SRC, "tests", "fixtures", "kernel_sources"),
                                "kernel_type": "hip", "include_tests": True, "include_examples": True})

    # traces
    traces = os.path.join(SRC, "examples", "traces")
    gap = c.call("gap_analysis", {"trace_dir": traces, "start_pct": 0, "end_pct": 100, "top_k": 5, "min_duration_us": 0,
                                  "categories": None, "ignore_categories": None, "output_dir": os.path.join(WORK, "gap"),
                                  "generate_clamped_traces": False}, timeout=600)
    check(gap["top_kernels"], gap)
    names = [gap["top_kernels"][0]["name"]]
    c.call("find_kernel_sources", {"kernel_names": names,
                                   "kernel_source_repos": [os.path.join(SRC, "tests", "fixtures", "kernel_sources")]})
    trace_files = sorted(f for f in os.listdir(traces) if f.endswith((".json", ".json.gz")))
    c.call("trace_report", {"trace_file": os.path.join(traces, trace_files[0]), "top_k": 5}, timeout=600)

    # serving: the benchmark tool with Magpie's arguments against a running server
    sim, url = start_sim()
    try:
        bench_args = {"framework": "vllm", "model": "sim-model", "precision": "fp8", "run_mode": "local", "tp": 1,
                      "concurrency": 2, "input_len": 16, "output_len": 4, "torch_profiler": False,
                      "system_profiler": False, "tracelens": False, "tracelens_export_format": "csv",
                      "gap_analysis_enabled": False, "gap_analysis_top_k": 20, "gap_analysis_start_pct": 0,
                      "gap_analysis_end_pct": 100, "gap_analysis_min_duration_us": 0,
                      "gap_analysis_categories": None, "gap_analysis_ignore_categories": None,
                      "docker_image": None, "gpu_arch": None, "inferencex_path": "", "hf_cache_path": None,
                      "benchmark_script": None, "runner_type": None, "timeout_seconds": 120,
                      "output_dir": RESULTS, "extra_envs": {"num_prompts": 4},
                      "ray_cluster_address": "", "ray_shared_storage_path": "", "ray_num_gpus": 0,
                      "ray_multi_node": False, "ray_total_num_gpus": 8, "ray_num_nodes": 1, "agentx": False,
                      "agentx_mode": "canonical", "torch_profiler_steps": 20, "torch_profiler_count": 1,
                      "torch_profiler_interval_seconds": 200, "torch_profiler_start_seconds": 0,
                      "torch_profiler_detailed_annotations": False,
                      "extra_args": ["--base-url", url, "--served-model-name", "sim-model"]}
        b = c.call("benchmark", bench_args)
        st = wait_run(c, b["run_id"])
        check(st["state"] == "succeeded", st)
        res = c.call("ray_task_result", {"task_id": b["run_id"], "ray_cluster_address": "", "ray_shared_storage_path": ""})
        check(res["status"] == "SUCCEEDED" and res["success"] is True and res["reward_eligible"] is True, res)
        c.call("ray_task_status", {"task_id": b["run_id"], "ray_cluster_address": "", "ray_shared_storage_path": ""})
        cancel = c.call("ray_task_cancel", {"task_id": b["run_id"]})
        check(cancel["cancelled"] is False, "a finished run cannot be cancelled")
        c.call("benchmark", dict(bench_args, agentx=True), expect_error=True)
        # run_mode ray: the ray_* arguments become the YAML's ray_config (the dashboard address is used)
        ray = c.call("benchmark", dict(bench_args, run_mode="ray", ray_cluster_address="http://127.0.0.1:9",
                                       ray_shared_storage_path=os.path.join(WORK, "ray_shared"), ray_num_gpus=0,
                                       extra_args=[]))
        st = wait_run(c, ray["run_id"])
        check(st["state"] == "failed" and "127.0.0.1:9" in json.dumps(st), st)
        one = dict(bench_args)
        batch = c.call("benchmark_batch", {"configs": [one, dict(one, concurrency=1)], "parallel": False,
                                           "ray_cluster_address": "", "ray_shared_storage_path": ""})
        check(batch["submitted"] == 2 and [j["status"] for j in batch["jobs"]] == ["SUBMITTED", "PENDING"], batch)
        for j in batch["jobs"]:
            check(wait_run(c, j["run_id"])["state"] == "succeeded", j)
        bad = c.call("benchmark_batch", {"configs": [{"framework": "vllm"}]})
        check(bad["failed"] == 1 and bad["jobs"][0]["status"] == "FAILED", bad)
        c.call("benchmark_status", {})
        c.call("ray_task_list", {"ray_cluster_address": "", "ray_shared_storage_path": ""})
        queued = c.call("benchmark_batch", {"configs": [dict(one, extra_args=["--base-url", "http://127.0.0.1:9",
                                                                             "--request-timeout", "60"])] * 2})
        c.call("benchmark_cancel", {"run_id": queued["jobs"][1]["run_id"]})
        c.call("benchmark_cancel", {"run_id": queued["jobs"][0]["run_id"]})
    finally:
        sim.terminate()
        sim.wait()

    c.call("list_benchmark_images", {"framework": None})
    lst = c.call("list_benchmark_results", {"output_dir": RESULTS, "limit": 20})
    ws = [r["workspace"] for r in lst["runs"]]
    check(len(ws) >= 2, lst)
    c.call("get_benchmark_result", {"workspace_dir": ws[0], "include_kernel_summary": True, "include_raw_result": False,
                                    "include_tracelens_files": True})
    c.call("compare_benchmark_reports", {"workspace_dirs": ws[:2], "labels": ["a", "b"],
                                         "output_dir": os.path.join(WORK, "cmp"), "export_format": "csv"})

    check_optimize(c)

    # distributed jobs: listing works without a cluster; a missing batch is a clear tool error
    c.call("jobs_list", {"output_dir": RESULTS})
    for tool in ("jobs_status", "jobs_collect", "jobs_cancel"):
        c.call(tool, {"batch": "no_such_batch", "output_dir": RESULTS}, expect_error=True)

    missing = set(c.tools) - c.called
    check(not missing, "tools never called: %s" % sorted(missing))
    if SDK:
        unvalidated = set(c.tools) - c.s.validated - NEEDS_CLUSTER
        check(not unvalidated, "tools without a structured result the MCP SDK validated: %s" % sorted(unvalidated))
    code, rest, _ = c.s.close()
    check(code == 0 and not rest, "server exit %s, unread output %r" % (code, rest[:200]))
    if SDK:
        print("PASS: %d tools called through the MCP SDK %s; it validated the structured results of %d: %s"
              % (len(c.called), __import__("importlib.metadata").metadata.version("mcp"), len(c.s.validated),
                 ", ".join(sorted(c.s.validated))))
    else:
        print("PASS: %d tools called, every output valid against its schema" % len(c.called))


try:
    main()
except (Failure, jsonschema.ValidationError, AssertionError) as e:
    print("FAIL:", e)
    sys.exit(1)
