#!/usr/bin/env bash
# The MCP tools of the optimization loop on the real binary: `optimize` returns a run handle at
# once, `optimize_status` shows the loop's step in progress from its report, `optimize_cancel`
# stops the loop, its benchmark client and every server it started (no process left), and the
# report keeps the steps done so far. The CPU example (numpy backend); needs python3 with numpy.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
"$MAGPIE_BIN" optimize --help > /dev/null 2>&1 || { echo "SKIP: this magpie has no optimize subcommand"; exit 77; }
export MAGPIE_PYTHON="$py"
cd "$GOLDEN_TMP"
python3 - "$MAGPIE_SOURCE_DIR/examples/loop/optimize_cpu.yaml" <<'PY'
import json, os, sys, time
sys.path.insert(0, os.path.join(os.environ["MAGPIE_SOURCE_DIR"], "tests", "golden", "mcp_protocol"))
from mcp_client import Server, check  # noqa: E402

def alive(needle):
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if needle.encode() in open("/proc/%s/cmdline" % pid, "rb").read():
                    return True
            except OSError:
                pass
    return False

s = Server(["--output-dir", os.path.join(os.getcwd(), "results")])
s.initialize()
names = [t["name"] for t in s.request("tools/list")["result"]["tools"]]
check({"optimize", "optimize_status", "optimize_cancel"} <= set(names), names)
bad = s.call("optimize", {"config": "/nonexistent/optimize.yaml"})
check(bad["isError"] is True and "no such file" in bad["content"][0]["text"], bad)
r = s.call("optimize", {"config": sys.argv[1], "pairs": 2})
check(r["isError"] is False, r["content"][0]["text"])
rid, ws = r["structuredContent"]["run_id"], r["structuredContent"]["workspace"]
deadline, st = time.time() + 120, {}
while time.time() < deadline:  # wait until the loop is past its first server start
    st = s.call("optimize_status", {"run_id": rid})["structuredContent"]
    if st["state"] != "running" or st["loop"].get("steps", {}).get("calibrate") == "ok":
        break
    time.sleep(0.3)
check(st["state"] == "running" and st["loop"]["steps"]["start_server"] == "ok", st)
check(st["loop"]["current"]["total"] == 11 and st["loop"]["current"]["index"] >= 2, st["loop"])
check(alive(os.path.join(ws, "server_traces")), "the loop's server should be up")
c = s.call("optimize_cancel", {"run_id": rid})
check(c["structuredContent"]["cancelled"] is True, c)
deadline = time.time() + 30
while time.time() < deadline:
    st = s.call("optimize_status", {"run_id": rid})["structuredContent"]
    if st["state"] != "running":
        break
    time.sleep(0.2)
check(st["state"] == "cancelled", st)
time.sleep(0.5)
check(not alive(os.path.join(ws, "server_traces")), "a server of the cancelled loop is still running")
rep = json.load(open(os.path.join(ws, "loop_report.json")))
check(rep["steps"]["start_server"]["status"] == "ok", rep["steps"])
check(s.call("optimize_cancel", {"run_id": rid})["structuredContent"]["cancelled"] is False, "finished runs stay finished")
s.close()
print("ok: optimize run handle, status from the report, cancel stops the servers")
PY
echo "ok: loop mcp"
