#!/usr/bin/env python3
"""A hostile OpenAI-compatible server on loopback for tests/golden/serve_hostile (stdlib only).

Every POST /v1/completions gets a well-formed stream of --tokens content events and [DONE]
(chunked transfer encoding, Connection: close), except what --mode makes hostile:

  huge_line      request number --victim sends one `data:` line of --huge-bytes bytes
                 (default 1 GiB) that never ends, then closes
  endless_fast   every request: content events as fast as the socket takes them, never [DONE]
  endless_slow   every request: one content event per second and a keep-alive comment every
                 0.1 s, never [DONE] (memory-cheap for the client, only a timeout ends it)
  models_hang    GET /v1/models accepts and never answers (completions are normal)
  deep_json      every request: one event nested 1,000,000 arrays deep, then [DONE]

The request number is the trailing integer of X-Request-Id (magpie-<pid>-<n>). The port is
written to --port-file once listening. Bytes sent per request are appended to --log as
`<request id> <bytes> <how it ended>`.
"""
import argparse
import json
import os
import socket
import socketserver
import sys
import threading
import time

ARGS = None
LOG_LOCK = threading.Lock()


def log(line):
    if ARGS.log:
        with LOG_LOCK, open(ARGS.log, "a") as f:
            f.write(line + "\n")


def chunk(data):
    return b"%x\r\n%s\r\n" % (len(data), data)


def event(obj):
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def token_event(i):
    return event({"id": "cmpl-h", "object": "text_completion", "model": "hostile",
                  "choices": [{"index": 0, "text": " t%d" % i, "finish_reason": None}]})


class Handler(socketserver.BaseRequestHandler):
    def read_request(self):
        buf = b""
        while b"\r\n\r\n" not in buf:
            got = self.request.recv(65536)
            if not got:
                return None, {}, b""
            buf += got
        head, body = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        need = int(headers.get("content-length", "0"))
        while len(body) < need:
            got = self.request.recv(65536)
            if not got:
                break
            body += got
        return lines[0], headers, body

    def send_head(self, content_type="text/event-stream"):
        self.request.sendall(("HTTP/1.1 200 OK\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n"
                              "Connection: close\r\n\r\n" % content_type).encode())

    def handle(self):
        start, headers, _ = self.read_request()
        if start is None:
            return
        rid = headers.get("x-request-id", "")
        if start.startswith("GET /v1/models"):
            if ARGS.mode == "models_hang":
                time.sleep(3600)
                return
            body = json.dumps({"object": "list", "data": [{"id": "hostile", "object": "model"}]}).encode()
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                                 b"Connection: close\r\n\r\n%s" % (len(body), body))
            return
        try:
            n = int(rid.rsplit("-", 1)[-1])
        except ValueError:
            n = -1
        sent = 0
        how = "done"
        try:
            self.send_head()
            if ARGS.mode == "huge_line" and n == ARGS.victim:
                sent = self.huge_line()
                how = "huge line sent"
            elif ARGS.mode == "endless_fast":
                sent = self.endless(0.0, 0.0)
            elif ARGS.mode == "endless_slow":
                sent = self.endless(1.0, 0.1)
            elif ARGS.mode == "deep_json":
                out = b"data: " + b"[" * 1000000 + b"\n\n" + b"data: [DONE]\n\n"
                self.request.sendall(chunk(out) + b"0\r\n\r\n")
                sent = len(out)
            else:
                sent = self.normal()
        except OSError as e:
            how = "client closed (%s)" % type(e).__name__
        log("%s %d %s" % (rid, sent, how))

    def normal(self):
        out = b"".join(token_event(i) for i in range(ARGS.tokens))
        out += event({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": ARGS.tokens}})
        out += b"data: [DONE]\n\n"
        self.request.sendall(chunk(out) + b"0\r\n\r\n")
        return len(out)

    def huge_line(self):
        sent = 0
        head = b'data: {"choices":[{"text":"'
        self.request.sendall(chunk(head))
        block = chunk(b"x" * (1 << 20))
        while sent < ARGS.huge_bytes:
            self.request.sendall(block)
            sent += 1 << 20
        self.request.sendall(b"0\r\n\r\n")
        return sent

    def endless(self, event_every_s, ping_every_s):
        sent, i = 0, 0
        next_event = time.monotonic()
        burst = chunk(b"".join(token_event(k) for k in range(64)))
        while True:
            if event_every_s == 0:
                self.request.sendall(burst)
                sent += len(burst)
                continue
            now = time.monotonic()
            if now >= next_event:
                data = chunk(token_event(i))
                i += 1
                next_event += event_every_s
            else:
                data = chunk(b": keep-alive\n\n")
            self.request.sendall(data)
            sent += len(data)
            time.sleep(ping_every_s)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", default="normal", choices=["normal", "huge_line", "endless_fast", "endless_slow", "models_hang", "deep_json"])
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--victim", type=int, default=2, help="huge_line: the request number that gets the line")
    ap.add_argument("--huge-bytes", type=int, default=1 << 30)
    ap.add_argument("--tokens", type=int, default=4)
    ap.add_argument("--log")
    ARGS = ap.parse_args()
    srv = Server(("127.0.0.1", 0), Handler)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, ARGS.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
