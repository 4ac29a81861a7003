#!/usr/bin/env python3
"""Streamable-HTTP ↔ stdio bridge for testing `magpie mcp` with HTTP-only MCP clients (the
@modelcontextprotocol/conformance suite). Standard library only.

POST /mcp  JSON-RPC message. initialize starts a `magpie mcp` process for a new session
           (Mcp-Session-Id header); other messages go to the session's process (a request
           without a session id uses a shared stateless process, for the 2026-07-28 era).
           Requests are answered as an SSE stream: the notifications the server sends while the
           request is pending (progress), then the response. Notifications/responses → 202.
GET /mcp   405 (this server sends no server-initiated messages).
DELETE /mcp ends the session (the process gets EOF).
Host/Origin must be localhost (DNS-rebinding protection, as the spec asks of local servers).

usage: mcp-http-bridge.py --port 3001 -- /path/to/magpie mcp [args…]
"""
import argparse
import json
import queue
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

LOCAL = {"localhost", "127.0.0.1", "[::1]", "::1"}


class Session:
    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr)
        self.lock = threading.Lock()
        self.pending = {}  # json id → queue of messages (notifications, then the response)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                print("bridge: non-JSON line from server: %r" % line[:200], file=sys.stderr)
                continue
            with self.lock:
                if "id" in msg and ("result" in msg or "error" in msg):
                    q = self.pending.pop(json.dumps(msg["id"]), None)
                    if q:
                        q.put(msg)
                        q.put(None)
                elif "params" in msg and "progressToken" in msg["params"]:
                    for q in self.pending.values():
                        q.put(msg)  # the handler keeps only its own token
        with self.lock:
            for q in self.pending.values():
                q.put(None)
            self.pending.clear()

    def send(self, msg, want_reply):
        q = queue.Queue() if want_reply else None
        with self.lock:
            if q:
                self.pending[json.dumps(msg["id"])] = q
            self.proc.stdin.write((json.dumps(msg) + "\n").encode())
            self.proc.stdin.flush()
        return q

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001
            self.proc.kill()


class Bridge(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, cmd):
        super().__init__(addr, Handler)
        self.cmd = cmd
        self.sessions = {}
        self.stateless = None
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # to stderr, briefly
        sys.stderr.write("bridge: " + fmt % args + "\n")

    def _local_only(self):
        host = urlparse("//" + (self.headers.get("Host") or "")).hostname
        origin = self.headers.get("Origin")
        ok = host in LOCAL and (origin is None or urlparse(origin).hostname in LOCAL)
        if not ok:
            self._plain(403, "Forbidden: non-local Host or Origin")
        return ok

    def _plain(self, code, text, headers=None):
        body = text.encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, code, obj, headers=None):
        body = json.dumps(obj).encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self._local_only():
            self._plain(405, "Method Not Allowed", {"Allow": "POST, DELETE"})

    def do_DELETE(self):
        if not self._local_only():
            return
        sid = self.headers.get("Mcp-Session-Id")
        with self.server.lock:
            s = self.server.sessions.pop(sid, None)
        if not s:
            return self._plain(404, "unknown session")
        s.close()
        self._plain(200, "")

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))  # even when refused: keep-alive
        if not self._local_only():
            return
        try:
            msg = json.loads(raw)
        except ValueError:
            return self._json(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        sid = self.headers.get("Mcp-Session-Id")
        extra = {}
        with self.server.lock:
            if isinstance(msg, dict) and msg.get("method") == "initialize":
                sid = uuid.uuid4().hex
                self.server.sessions[sid] = Session(self.server.cmd)
                extra["Mcp-Session-Id"] = sid
            if sid:
                s = self.server.sessions.get(sid)
                if s is None:
                    return self._plain(404, "unknown session")
            else:
                if self.server.stateless is None:
                    self.server.stateless = Session(self.server.cmd)
                s = self.server.stateless
        is_request = isinstance(msg, dict) and "method" in msg and "id" in msg
        q = s.send(msg, is_request)
        if not is_request:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        token = ((msg.get("params") or {}).get("_meta") or {}).get("progressToken")
        self.send_response(200)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        while True:
            m = q.get()
            if m is None:
                break
            if "id" not in m and (token is None or m["params"].get("progressToken") != token):
                continue
            self.wfile.write(("event: message\ndata: %s\n\n" % json.dumps(m)).encode())
            self.wfile.flush()
        self.close_connection = True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=3001)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- magpie mcp [args]")
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("give the server command after --")
    srv = Bridge((a.host, a.port), cmd)
    print("bridge: http://%s:%d/mcp -> %s" % (a.host, a.port, " ".join(cmd)), file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        for s in list(srv.sessions.values()) + ([srv.stateless] if srv.stateless else []):
            s.close()


if __name__ == "__main__":
    main()
