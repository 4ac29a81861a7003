"""MCP protocol golden tests: both eras, malformed input, unknown methods/tools, bad arguments,
huge lines, schemas, progress notifications. Drives the real `magpie mcp` over pipes."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_client import LEGACY, MODERN, Server, check, modern_meta, run_tests  # noqa: E402

SRC = os.environ["MAGPIE_SOURCE_DIR"]
FIXTURES = os.path.join(SRC, "tests", "fixtures", "kernel_sources")
TRACE = os.path.join(SRC, "examples", "traces", "llama_tiny-rank-0.pt.trace.json.gz")
MAGPIE_TOOLS = {"hardware_spec", "analyze", "compare", "benchmark", "gap_analysis", "trace_report", "discover_kernels",
                "suggest_optimizations", "create_kernel_config", "list_benchmark_images", "list_benchmark_results",
                "get_benchmark_result", "compare_benchmark_reports", "find_kernel_sources"}


def conforms(schema, value, path="$"):
    """Tiny JSON-schema check (type / required / properties / items) for outputSchema conformance."""
    t = schema.get("type")
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    allowed = t if isinstance(t, list) else [t] if t else []

    def is_a(name):
        if name in ("number", "integer"):
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return name in types and isinstance(value, types[name])
    if allowed:
        check(any(is_a(x) for x in allowed), "%s: expected %s" % (path, t))
    if isinstance(value, dict):
        for r in schema.get("required", []):
            check(r in value, "%s: missing %s" % (path, r))
        for k, s in schema.get("properties", {}).items():
            if k in value:
                conforms(s, value[k], path + "." + k)
    if isinstance(value, list) and "items" in schema:
        for i, x in enumerate(value):
            conforms(schema["items"], x, "%s[%d]" % (path, i))


def test_legacy_handshake_and_ping():
    s = Server()
    r = s.initialize(LEGACY)["result"]
    check(r["protocolVersion"] == LEGACY, r)
    check(r["serverInfo"]["name"] == "magpie" and r["serverInfo"]["version"], r)
    check(r["capabilities"]["tools"] == {"listChanged": False}, r)
    check(s.request("ping")["result"] == {}, "ping")
    r = s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}})
    check(r["result"]["protocolVersion"] == "2025-06-18", "older legacy version is accepted")
    r = s.request("initialize", {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}})
    check(r["result"]["protocolVersion"] == LEGACY, "unknown version → our latest legacy")
    rc, rest, err = s.close()
    check(rc == 0 and rest == "", "clean exit on stdin EOF (rc=%s, rest=%r)" % (rc, rest))
    check("serving on stdio" in err, "logs go to stderr")


def test_tools_list_schemas():
    s = Server()
    s.initialize()
    tools = s.request("tools/list")["result"]["tools"]
    names = [t["name"] for t in tools]
    check(len(names) == len(set(names)), "unique names")
    check(MAGPIE_TOOLS <= set(names), "missing: %s" % (MAGPIE_TOOLS - set(names)))
    check({"benchmark_status", "benchmark_cancel"} <= set(names), "run-handle tools")
    for t in tools:
        check(re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", t["name"]), t["name"])
        check(t["inputSchema"]["type"] == "object" and t["inputSchema"].get("additionalProperties") is False, t["name"])
        check(t["outputSchema"]["type"] == "object", t["name"])
        check(t["description"], t["name"])
    s.close()


def test_modern_stateless_era():
    s = Server()  # no initialize at all
    r = s.request("server/discover", {"_meta": modern_meta()})["result"]
    check(MODERN in r["supportedVersions"] and LEGACY in r["supportedVersions"], r)
    check(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "magpie", r)
    check(r["resultType"] == "complete" and r["cacheScope"] in ("public", "private") and r["ttlMs"] > 0, r)
    r = s.request("tools/list", {"_meta": modern_meta()})["result"]
    check(r["resultType"] == "complete" and r["ttlMs"] > 0 and r["cacheScope"] == "public", "list cache hints")
    r2 = s.request("tools/list", {"_meta": modern_meta()})["result"]
    check([t["name"] for t in r["tools"]] == [t["name"] for t in r2["tools"]], "deterministic order")
    r = s.call("list_benchmark_images", {"framework": "vllm"}, meta=modern_meta())
    check(r["isError"] is False and "sm_90" in r["structuredContent"]["images"]["vllm"], r)
    e = s.request("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2031-01-01",
                                           "io.modelcontextprotocol/clientCapabilities": {}}})["error"]
    check(e["code"] == -32022 and MODERN in e["data"]["supported"] and e["data"]["requested"] == "2031-01-01", e)
    s.close()


def test_both_eras_in_one_process():
    s = Server()
    s.initialize()
    legacy = s.call("list_benchmark_images", {})
    check("resultType" not in legacy, "legacy results carry no resultType")
    modern = s.call("list_benchmark_images", {}, meta=modern_meta())
    check(modern["resultType"] == "complete", "modern results carry resultType")
    check(legacy["structuredContent"] == modern["structuredContent"], "same answer in both eras")
    s.close()


def test_malformed_and_invalid_requests():
    s = Server()
    cases = [
        (b"this is not json\n", -32700, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"\n', -32700, None),  # truncated
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n', -32600, None),  # batch
        (b'{"jsonrpc":"1.0","id":2,"method":"ping"}\n', -32600, 2),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n', -32600, None),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n', -32600, None),
        (b'{"jsonrpc":"2.0","id":3,"method":7}\n', -32600, 3),
        (b'{"jsonrpc":"2.0","id":4}\n', -32600, 4),
        (b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1,2]}\n', -32602, 5),
        (b'"just a string"\n', -32600, None),
        (b'\xff\xfe\xfd\n', -32700, None),  # invalid UTF-8
    ]
    for raw, code, rid in cases:
        s.send_raw(raw)
        m = s.recv()
        check("error" in m and m["error"]["code"] == code, "%r → %r" % (raw[:40], m))
        check(m["id"] == rid, "%r: id %r" % (raw[:40], m.get("id")))
    s.send_raw(b"\n   \n")  # blank lines are ignored
    check(s.request("ping")["result"] == {}, "server alive after garbage")
    e = s.request("no/such/method")["error"]
    check(e["code"] == -32601, e)
    e = s.request("resources/list")["error"]
    check(e["code"] == -32601, e)
    s.send({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}})  # no reply to notifications
    s.send({"jsonrpc": "2.0", "id": 99, "result": {}})  # a stray response is ignored
    check(s.request("ping")["result"] == {}, "no reply was produced for the notification/response")
    rc, rest, _ = s.close()
    check(rest == "", "nothing unsolicited: %r" % rest)


def test_unknown_tool_and_bad_arguments():
    s = Server()
    s.initialize()
    e = s.request("tools/call", {"name": "no_such_tool", "arguments": {}})["error"]
    check(e["code"] == -32602 and "no_such_tool" in e["message"], e)
    e = s.request("tools/call", {"arguments": {}})["error"]
    check(e["code"] == -32602, e)
    e = s.request("tools/call", {"name": "hardware_spec", "arguments": [1]})["error"]
    check(e["code"] == -32602, e)
    for args, needle in [({"device_id": "zero"}, "expected"), ({"device_id": -1}, ">="), ({"bogus": 1}, "bogus"),
                         ({}, None)]:
        r = s.call("hardware_spec", args)
        if needle is None:
            check(r["isError"] is False, r)
        else:
            check(r["isError"] is True and needle in r["content"][0]["text"], (args, r))
            check("structuredContent" not in r, "no structured content on error")
    r = s.call("analyze", {})
    check(r["isError"] and "kernel_path" in r["content"][0]["text"], r)
    r = s.call("compare", {"kernel_paths": ["only_one.cu"]})
    check(r["isError"] and "at least 2" in r["content"][0]["text"], r)
    r = s.call("get_benchmark_result", {"workspace_dir": "/nonexistent/ws"})
    check(r["isError"] is True, "tool failure is isError, not a protocol error")
    r = s.call("benchmark_status", {"run_id": "run-999"})
    check(r["isError"] is True and "unknown run_id" in r["content"][0]["text"], r)
    s.close()


def test_huge_inputs():
    s = Server()
    pad = "x" * (10 * 1024 * 1024)  # a 10 MB line is a valid message
    r = s.request("ping", {"pad": pad}, timeout=120)
    check(r["result"] == {}, "10 MB ping")
    names = ["void at::native::k%d<int>(int)" % i for i in range(20000)] + ["n" * 2000000]
    r = s.call("find_kernel_sources", {"kernel_names": names}, timeout=300)
    check(r["isError"] is False and r["structuredContent"]["summary"]["total"] == 20001, "20k names + a 2 MB name")
    s.close()
    small = Server(["--max-message-bytes", "1048576"])
    small.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"y" * (3 << 20) + b'"}}\n')
    m = small.recv()
    check(m["error"]["code"] == -32700 and "exceeds" in m["error"]["message"], m)
    check(small.request("ping")["result"] == {}, "alive after an over-long line")
    small.close()


def test_structured_content_conforms_and_text_summary():
    s = Server()
    s.initialize()
    tools = {t["name"]: t for t in s.request("tools/list")["result"]["tools"]}
    calls = [("hardware_spec", {}), ("list_benchmark_images", {}),
             ("find_kernel_sources", {"trace_files": [TRACE], "top_k": 5,
                                      "kernel_source_repos": [os.path.join(FIXTURES, "pytorch")]}),
             ("discover_kernels", {"project_path": FIXTURES}),
             ("create_kernel_config", {"kernel_id": "k", "kernel_path": "k.cu", "kernel_type": "cuda",
                                       "testcase_command": "./k"})]
    for name, args in calls:
        r = s.call(name, args, timeout=300)
        check(r["isError"] is False, (name, r["content"][0]["text"]))
        check(r["content"][0]["type"] == "text" and 0 < len(r["content"][0]["text"]) < 500, "short summary")
        conforms(tools[name]["outputSchema"], r["structuredContent"])
        check(json.loads(r["content"][1]["text"]) == r["structuredContent"], "serialized JSON copy")
    s.close()


def test_progress_notifications():
    s = Server()
    s.initialize()
    r = s.call("find_kernel_sources", {"trace_files": [TRACE], "top_k": 3,
                                       "kernel_source_repos": [os.path.join(FIXTURES, "pytorch")]},
               meta={"progressToken": "tok-1"})
    check(r["isError"] is False, r)
    prog = [n["params"] for n in s.notifications if n["method"] == "notifications/progress"]
    check(len(prog) >= 2, "progress notifications: %r" % s.notifications)
    check(all(p["progressToken"] == "tok-1" for p in prog), prog)
    vals = [p["progress"] for p in prog]
    check(vals == sorted(vals) and len(set(vals)) == len(vals), "monotonic %r" % vals)
    s.notifications.clear()
    s.call("find_kernel_sources", {"kernel_names": ["x"]})
    check(not s.notifications, "no progress without a token")
    s.close()


if __name__ == "__main__":
    run_tests([test_legacy_handshake_and_ping, test_tools_list_schemas, test_modern_stateless_era,
               test_both_eras_in_one_process, test_malformed_and_invalid_requests, test_unknown_tool_and_bad_arguments,
               test_huge_inputs, test_structured_content_conforms_and_text_summary, test_progress_notifications])
