"""Hostile MCP clients against `magpie mcp` (docs/mcp.md, Trust model). Every injection below
tries to create a file named PWNED*; a refusal must be an isError result naming the argument,
and nothing may run. The same calls are then allowed by the server options."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.environ["MAGPIE_SOURCE_DIR"], "tests", "golden", "mcp_protocol"))
from mcp_client import Failure, Server, check, run_tests  # noqa: E402

WORK = os.getcwd()
ROOT = os.path.join(WORK, "root")          # the server's workspace root
OUTSIDE = os.path.join(WORK, "outside")    # must never be written or read through the server
INJECT = "bash -c touch${IFS}PWNED"
HOST = {"kernel_type": "host", "correctness_method": "exit_code", "check_performance": False}


def setup():
    os.makedirs(os.path.join(ROOT, "k"), exist_ok=True)
    os.makedirs(OUTSIDE, exist_ok=True)
    for name in ("a.cpp", "b.cpp"):
        with open(os.path.join(ROOT, "k", name), "w") as f:
            f.write("int main() { return 0; }\n")
    with open(os.path.join(OUTSIDE, "secret.cpp"), "w") as f:
        f.write("int main() { return 0; }\n")
    with open(os.path.join(OUTSIDE, "t.json"), "w") as f:
        f.write('{"traceEvents": []}\n')
    if not os.path.lexists(os.path.join(ROOT, "escape")):
        os.symlink(OUTSIDE, os.path.join(ROOT, "escape"))
        os.symlink(os.path.join(OUTSIDE, "new.yaml"), os.path.join(ROOT, "dangling.yaml"))


def server(*flags):
    s = Server(list(flags), cwd=ROOT, permissive=False)
    s.initialize()
    return s


def pwned():
    """Every PWNED* file anywhere under the test's directory (commands run in workspaces too)."""
    found = []
    for d, dirs, files in os.walk(WORK):
        dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(d, x))]
        found += [os.path.join(d, n) for n in files if n.startswith("PWNED")]
    return found


def refused(s, tool, args, *needles):
    r = s.call(tool, args, timeout=120)
    text = r["content"][0]["text"]
    check(r["isError"] is True, "%s %s: expected a refusal, got %s" % (tool, json.dumps(args)[:200], text[:300]))
    check("refused" in text, "%s: the error does not say refused: %s" % (tool, text))
    for n in needles:
        check(n in text, "%s: the error does not name %r: %s" % (tool, n, text))
    check(not pwned(), "%s: an injection ran: %s" % (tool, pwned()))
    return text


def injections():
    """(tool, arguments, the argument the refusal must name) for every tool that takes a command."""
    k = os.path.join("k", "a.cpp")
    bench = {"framework": "vllm", "model": "m", "run_mode": "local", "output_dir": "res_bench", "timeout_seconds": 20}
    server_cmd = {"server": {"command": ["bash", "-c", "touch PWNED_server; sleep 30"], "ready_timeout_s": 10}}
    return [
        ("analyze", dict(HOST, kernel_path=k, testcase_command=INJECT), "testcase_command"),
        ("analyze", dict(HOST, kernel_path=k, compile_command=INJECT), "compile_command"),
        ("compare", dict(HOST, kernel_paths=[k, "k/b.cpp"], testcase_commands=["", INJECT]), "testcase_commands[1]"),
        ("compare", dict(HOST, kernel_paths=[k, "k/b.cpp"], compile_command=INJECT), "compile_command"),
        ("create_kernel_config", {"kernel_id": "x", "kernel_path": k, "testcase_command": INJECT}, "testcase_command"),
        ("benchmark", dict(bench, benchmark_config=server_cmd), "benchmark_config.server.command"),
        ("benchmark", dict(bench, extra_args=["--server-args", "--evil"]), "extra_args[0]"),
        ("benchmark", dict(bench, extra_args=["--benchmark-config", "b.yaml"]), "extra_args[0]"),
        ("benchmark", dict(bench, extra_envs={"LD_PRELOAD": "/tmp/x.so"}), "extra_envs.LD_PRELOAD"),
        ("benchmark", dict(bench, extra_envs={"EXTRA_VLLM_ARGS": "--worker-extension-cls evil"}), "EXTRA_VLLM_ARGS"),
        ("benchmark", dict(bench, docker_image="evil/image"), "docker_image"),
        ("benchmark_batch", {"configs": [dict(bench, benchmark_config=server_cmd)]}, "server.command"),
        ("optimize", {"config": "o.yaml", "python": "bash"}, "python"),
    ]


def test_injection_refused_by_default():
    s = server()
    for tool, args, field in injections():
        refused(s, tool, args, field)
    rc, rest, err = s.close()
    check(rc == 0, "server exit %d" % rc)
    check("refused" in err, "refusals are not logged on stderr")


def test_allowed_with_the_option():
    k = os.path.join("k", "a.cpp")
    s = server("--allow-command", "bash,true")
    r = s.call("analyze", dict(HOST, kernel_path=k, testcase_command=INJECT, compile_command="true",
                               output_dir="res_allow"), timeout=300)
    check(r["isError"] is False, "analyze with --allow-command bash: %s" % r["content"][0]["text"][:500])
    check(pwned(), "the allowed testcase did not run")
    for f in pwned():
        os.remove(f)
    r = s.call("compare", dict(HOST, kernel_paths=[k, "k/b.cpp"], testcase_commands=["true", INJECT],
                               compile_command="true", output_dir="res_allow"), timeout=300)
    check(r["isError"] is False, "compare with --allow-command: %s" % r["content"][0]["text"][:500])
    check(pwned(), "the allowed compare testcase did not run")
    for f in pwned():
        os.remove(f)
    # An allowlist does not cover what only --trust-client allows.
    refused(s, "benchmark", {"framework": "vllm", "model": "m", "docker_image": "x/y"}, "--trust-client")
    s.close()
    t = server("--trust-client")
    r = t.call("create_kernel_config", {"kernel_id": "x", "kernel_path": k, "testcase_command": INJECT})
    check(r["isError"] is False, "create_kernel_config with --trust-client: %s" % r["content"][0]["text"])
    cfg = {"server": {"command": ["bash", "-c", "touch PWNED_server; sleep 30"], "ready_timeout_s": 30}}
    r = t.call("benchmark", {"framework": "vllm", "model": "m", "run_mode": "local", "output_dir": "res_bench",
                             "timeout_seconds": 60, "benchmark_config": cfg})
    check(r["isError"] is False, "benchmark with --trust-client: %s" % r["content"][0]["text"])
    rid = r["structuredContent"]["run_id"]
    deadline = time.time() + 60
    while time.time() < deadline and not pwned():
        time.sleep(0.2)
    check(pwned(), "the trusted server command did not run")
    t.call("benchmark_cancel", {"run_id": rid})
    for f in pwned():
        os.remove(f)
    # The rest of the injections of test_injection_refused_by_default pass the policy too.
    for tool, args, field in injections():
        if tool in ("create_kernel_config", "benchmark"):
            continue  # run above
        r = t.call(tool, dict(args, output_dir="res_trusted") if tool != "benchmark_batch" else args, timeout=300)
        text = r["content"][0]["text"]
        check("refused" not in text, "%s (%s) still refused with --trust-client: %s" % (tool, field, text[:300]))
        if tool == "benchmark_batch":
            for j in r["structuredContent"]["jobs"]:
                t.call("benchmark_cancel", {"run_id": j["run_id"]})
    bench = {"framework": "vllm", "model": "m", "run_mode": "local", "output_dir": "res_trusted", "timeout_seconds": 20}
    for extra in ({"extra_args": ["--server-args", "--evil"]}, {"extra_envs": {"LD_PRELOAD": "/nonexistent.so"}},
                  {"docker_image": "some/image"}):
        r = t.call("benchmark", dict(bench, **extra))
        check(r["isError"] is False, "benchmark %s with --trust-client: %s" % (extra, r["content"][0]["text"][:300]))
        t.call("benchmark_cancel", {"run_id": r["structuredContent"]["run_id"]})
    for f in pwned():
        os.remove(f)
    t.close()


def test_path_escapes_refused():
    s = server()
    k = os.path.join("k", "a.cpp")
    cases = [
        ("create_kernel_config", {"kernel_id": "x", "kernel_path": k, "output_path": "sub/../../x/../escaped.yaml"},
         "sub/../../x/../escaped.yaml"),
        ("create_kernel_config", {"kernel_id": "x", "kernel_path": k, "output_path": "../../file.yaml"}, "../../file.yaml"),
        ("create_kernel_config", {"kernel_id": "x", "kernel_path": k, "output_path": os.path.join(OUTSIDE, "abs.yaml")},
         os.path.join(OUTSIDE, "abs.yaml")),
        ("create_kernel_config", {"kernel_id": "x", "kernel_path": k, "output_path": "escape/link.yaml"}, "escape/link.yaml"),
        ("create_kernel_config", {"kernel_id": "x", "kernel_path": k, "output_path": "dangling.yaml"}, "dangling.yaml"),
        ("analyze", dict(HOST, kernel_path="escape/secret.cpp"), "escape/secret.cpp"),
        ("analyze", dict(HOST, kernel_path=os.path.join(OUTSIDE, "secret.cpp")), "kernel_path"),
        ("analyze", dict(HOST, kernel_path=k, working_dir=".."), "working_dir"),
        ("analyze", dict(HOST, kernel_path=k, output_dir="/tmp"), "output_dir"),
        ("compare", dict(HOST, kernel_paths=[k, "../outside/secret.cpp"]), "kernel_paths[1]"),
        ("trace_report", {"trace_file": "escape/t.json"}, "trace_file"),
        ("gap_analysis", {"trace_dir": "../outside"}, "trace_dir"),
        ("find_kernel_sources", {"kernel_names": ["k"], "kernel_source_repos": ["/"]}, "kernel_source_repos[0]"),
        ("discover_kernels", {"project_path": "/etc"}, "project_path"),
        ("list_benchmark_results", {"output_dir": ".."}, "output_dir"),
        ("get_benchmark_result", {"workspace_dir": "escape"}, "workspace_dir"),
        ("compare_benchmark_reports", {"workspace_dirs": ["k", "../outside"]}, "workspace_dirs[1]"),
        ("jobs_status", {"batch": "../outside/batch_x"}, "batch"),
        ("optimize", {"config": "/etc/hostname"}, "config"),
        ("benchmark", {"framework": "vllm", "model": "m", "extra_args": ["--dataset-path", "../outside/d.json"]},
         "--dataset-path"),
    ]
    for tool, args, needle in cases:
        refused(s, tool, args, needle)
    check(not os.path.exists(os.path.join(WORK, "escaped.yaml")), "escaped.yaml was written")
    check(not os.path.exists(os.path.join(OUTSIDE, "new.yaml")), "the dangling link was followed")
    check(sorted(os.listdir(OUTSIDE)) == ["secret.cpp", "t.json"], "outside/ changed: %s" % os.listdir(OUTSIDE))
    r = s.call("create_kernel_config", {"kernel_id": "x", "kernel_path": k, "output_path": "k/../k/ok.yaml"})
    check(r["isError"] is False, "an inside path was refused: %s" % r["content"][0]["text"])
    check(r["structuredContent"]["written_to"] == os.path.join(os.path.realpath(ROOT), "k", "ok.yaml"),
          r["structuredContent"])
    s.close()


def test_cancel_ends_a_setsid_grandchild():
    marker = "1033.0625"
    with open(os.path.join(ROOT, "tc.sh"), "w") as f:
        f.write("#!/usr/bin/env bash\nsetsid sleep %s &\nsleep 120\n" % marker)
    os.chmod(os.path.join(ROOT, "tc.sh"), 0o755)
    s = server("--allow-command", "bash")
    s.send({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
            "params": {"name": "analyze", "arguments": dict(HOST, kernel_path="k/a.cpp", compile_command="",
                                                           testcase_command="bash %s" % os.path.join(ROOT, "tc.sh"),
                                                           output_dir="res_cancel")}})

    def alive():
        for pid in os.listdir("/proc"):
            try:
                if not pid.isdigit() or open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
                if marker.encode() in open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0"):
                    return True
            except (OSError, IndexError):
                pass
        return False

    deadline = time.time() + 60
    while time.time() < deadline and not alive():
        time.sleep(0.1)
    check(alive(), "the grandchild never started: " + s.stderr_tail())
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77}})
    deadline = time.time() + 10
    while time.time() < deadline and alive():
        time.sleep(0.1)
    check(not alive(), "the setsid grandchild survived the cancel")
    ws = [d for d in os.listdir(os.path.join(ROOT, "res_cancel")) if d.startswith("analyze_")]
    check(len(ws) == 1, ws)
    deadline = time.time() + 10
    marker_file = os.path.join(ROOT, "res_cancel", ws[0], "INCOMPLETE")
    while time.time() < deadline and not os.path.exists(marker_file):
        time.sleep(0.1)
    check(os.path.exists(marker_file), "the cancelled run's workspace is not marked INCOMPLETE")
    check(json.load(open(marker_file))["reason"] == "interrupted by SIGTERM", open(marker_file).read())
    s.close()


if __name__ == "__main__":
    setup()
    run_tests([test_injection_refused_by_default, test_path_escapes_refused, test_allowed_with_the_option,
               test_cancel_ends_a_setsid_grandchild])
