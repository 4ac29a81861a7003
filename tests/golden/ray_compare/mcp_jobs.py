"""The MCP job tools on a collected Ray batch (argv: output_dir batch_dir): jobs_list,
jobs_status, jobs_collect, jobs_cancel and Magpie's ray_task_* names, through `magpie mcp`."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.environ["MAGPIE_SOURCE_DIR"], "tests", "golden", "mcp_protocol"))
from mcp_client import Server, check  # noqa: E402

SDK = os.environ.get("MAGPIE_MCP_CLIENT") == "sdk"  # the official MCP SDK validates every result
if SDK:
    sys.path.insert(0, os.path.join(os.environ["MAGPIE_SOURCE_DIR"], "tests", "golden", "mcp_sdk"))
    from sdk_client import SdkServer  # noqa: E402

out, batch = sys.argv[1], sys.argv[2]
name = os.path.basename(batch)
s = SdkServer(["--output-dir", out]) if SDK else Server(["--output-dir", out])
s.initialize()
tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
names = set(tools)
try:
    import jsonschema
except ImportError:
    jsonschema = None
if jsonschema is not None and not SDK:  # our own client: check each structured result here
    _call = s.call

    def checked_call(tool, args, **kw):
        r = _call(tool, args, **kw)
        if not r.get("isError"):
            jsonschema.validate(r["structuredContent"], tools[tool]["outputSchema"], cls=jsonschema.Draft202012Validator)
        return r
    s.call = checked_call
check({"jobs_list", "jobs_status", "jobs_collect", "jobs_cancel", "ray_task_list", "ray_task_status",
       "ray_task_result", "ray_task_cancel"} <= names, names)

r = s.call("jobs_list", {"refresh": True})
check(not r["isError"], r["content"][0]["text"])
sc = r["structuredContent"]
check(sc["total"] == 1 and sc["batches"][0]["engine"] == "ray", sc)
check(sc["tasks"] == [{"task_id": name, "status": "SUCCEEDED", "engine": "ray"}], sc["tasks"])
check(s.call("ray_task_list", {})["structuredContent"]["tasks"] == sc["tasks"], "ray_task_list")

st = s.call("jobs_status", {"batch": name})["structuredContent"]
check(st["engine"] == "ray" and st["status"] == "SUCCEEDED" and len(st["jobs"]) == 5, st)
states = {j["name"]: j["state"] for j in st["jobs"]}
check(states == {"reference": "COMPLETED", "k01_vector_add_unrolled": "COMPLETED", "k02_vector_add_twopass": "COMPLETED",
                 "k03_vector_add_offbyone": "FAILED", "timing": "COMPLETED"}, states)
check(all(j["source"] == "ray" for j in st["jobs"]), st["jobs"])
mst = s.call("ray_task_status", {"task_id": batch, "ray_cluster_address": "ignored"})["structuredContent"]
check(mst["status"] == "SUCCEEDED" and mst["task_id"] == batch, mst)

res = s.call("ray_task_result", {"task_id": name}, timeout=300)
check(not res["isError"], res["content"][0]["text"])
rep = res["structuredContent"]
check(rep["_task_id"] == name and rep["report"]["scheduler"]["environment"] == "ray", rep.keys())
check(os.path.isdir(rep["collected"]["workspace"]) and rep["collected"]["run_id"] is not None, rep["collected"])
col = s.call("jobs_collect", {"batch": batch, "wait": False}, timeout=300)["structuredContent"]
check(col["report"]["results"]["comparison_metrics"]["correctness"] == [True, True, True, False], col["report"]["results"])

c = s.call("jobs_cancel", {"batch": name})["structuredContent"]  # every job has ended: nothing to stop
check(c["cancelled"] is True and [j["state"] for j in c["jobs"]] == [states[j["name"]] for j in c["jobs"]], c)
bad = s.call("jobs_status", {"batch": "no_such_batch"})
check(bad["isError"] and "batch.json" in bad["content"][0]["text"], bad["content"][0]["text"])
if SDK:
    want = {"jobs_list", "jobs_status", "jobs_collect", "jobs_cancel", "ray_task_list", "ray_task_status", "ray_task_result"}
    check(want <= s.validated, "the MCP SDK validated only %s" % sorted(s.validated))
s.close()
print("ok: MCP job tools on a Ray batch%s" % (" (MCP SDK)" if SDK else ""))
