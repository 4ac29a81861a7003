"""Minimal MCP stdio client for magpie's golden tests: drives the real binary over pipes."""
import json
import os
import select
import subprocess
import sys
import threading
import time

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def modern_meta(extra=None):
    m = {"io.modelcontextprotocol/protocolVersion": MODERN,
         "io.modelcontextprotocol/clientCapabilities": {},
         "io.modelcontextprotocol/clientInfo": {"name": "golden", "version": "1"}}
    if extra:
        m.update(extra)
    return m


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


# What the functional tests need from the trust model (docs/mcp.md): files of the source tree and
# their own commands. tests/golden/mcp_trust starts servers with permissive=False.
PERMISSIVE = ["--workspace-root", "/", "--trust-client"]


class Server:
    def __init__(self, args=(), cwd=None, env=None, permissive=True):
        exe = os.environ["MAGPIE_BIN"]
        args = list(args) + (PERMISSIVE if permissive else [])
        self.proc = subprocess.Popen([exe, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd, env=env)
        self.buf = b""
        self.notifications = []
        self.next_id = 1
        self.err = []
        self.err_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self.err_thread.start()

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.err.append(line)

    def send_raw(self, data: bytes):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj):
        self.send_raw((json.dumps(obj) + "\n").encode())

    def recv(self, timeout=60.0):
        """Next message line as a dict (raises on timeout / EOF / non-JSON output)."""
        deadline = time.time() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.time()
            check(left > 0, "timed out waiting for a message")
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if not r:
                continue
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise Failure("server closed stdout; stderr:\n" + self.stderr_tail())
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            raise Failure("non-JSON line on stdout: %r" % line[:200])

    def response(self, rid, timeout=60.0):
        """Waits for the response to `rid`, keeping notifications aside."""
        while True:
            m = self.recv(timeout)
            if "id" in m and m.get("id") == rid and ("result" in m or "error" in m):
                return m
            check("method" in m and "id" not in m, "unexpected message %r" % m)
            self.notifications.append(m)

    def request(self, method, params=None, timeout=60.0):
        rid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.response(rid, timeout)

    def call(self, name, arguments, meta=None, timeout=120.0):
        params = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        r = self.request("tools/call", params, timeout)
        check("result" in r, "tools/call %s: JSON-RPC error %r" % (name, r.get("error")))
        return r["result"]

    def initialize(self, version=LEGACY):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "golden", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def stderr_text(self):
        return b"".join(self.err).decode(errors="replace")

    def stderr_tail(self):
        return self.stderr_text()[-3000:]

    def close(self, timeout=30):
        """Closes stdin; the server must exit promptly and leave nothing unread on stdout."""
        self.proc.stdin.close()
        out = self.proc.stdout.read()
        self.proc.wait(timeout=timeout)
        self.err_thread.join(timeout=10)
        rest = (self.buf + out).decode(errors="replace").strip()
        return self.proc.returncode, rest, self.stderr_text()


def run_tests(tests):
    failed = 0
    for t in tests:
        try:
            t()
            print("PASS", t.__name__)
        except Failure as e:
            failed += 1
            print("FAIL", t.__name__, "-", e)
        except Exception as e:  # noqa: BLE001 - a test error is a failure
            failed += 1
            print("FAIL", t.__name__, "-", type(e).__name__, e)
    print("%d/%d passed" % (len(tests) - failed, len(tests)))
    sys.exit(1 if failed else 0)
