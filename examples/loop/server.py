#!/usr/bin/env python3
"""OpenAI-compatible streaming server for the optimization-loop example model.

    python3 examples/loop/server.py --backend torch --port 8000 [--kernels baseline,attention=split] [--cuda-graphs]
    python3 examples/loop/server.py --backend numpy --port-file PORT      # CPU, no torch (CI)

Endpoints: GET /health (200 once warmed up), GET /v1/models, GET /loop_info (kernel choice,
model config, weights fingerprint), GET /loop_stats (the engine's step timing per burst of work:
engine.py), POST /v1/completions (token-id or text prompt; stream with
SSE in chunked transfer encoding; stream_options.include_usage / continuous_usage_stats),
POST /start_profile, POST /stop_profile (writes <trace-dir>/loop_model-rank-0.<ms>.pt.trace.json.gz
before answering). The kernel set comes from --kernels, else MAGPIE_LOOP_KERNELS, else
"baseline" (see ops.py); it is fixed for the life of the process.
The backend's start-up warm-up (kernel compiles, CUDA graph capture, prefill attention shapes)
runs on the engine thread, the thread that serves: cuDNN's execution plans and the cuBLAS and
cuDNN handles are per thread.
"""
import argparse
import json
import os
import queue
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import engine as engine_mod  # noqa: E402
import loop_shapes  # noqa: E402
import ops  # noqa: E402


class State:
    engine = None
    backend = None
    info = {}
    ready = False
    trace_dir = ""
    model_name = "loop-model"
    profiling = False


def _json_body(handler):
    n = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(n) if n > 0 else b""
    if not raw.strip():
        return {}
    return json.loads(raw.decode("utf-8"))


def _prompt_ids(prompt, vocab):
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], list):
        prompt = prompt[0]
    if isinstance(prompt, list):
        return [int(t) % vocab for t in prompt]
    if isinstance(prompt, str):
        return [b % vocab for b in prompt.encode("utf-8")] or [0]
    raise ValueError("prompt must be a string or a list of token ids")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: one line per request would swamp the log
        pass

    def _send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, code, msg):
        self._send_json(code, {"error": {"message": msg, "type": "invalid_request_error", "code": code}})

    def do_GET(self):
        if self.path == "/health":
            return self._send_json(200 if State.ready else 503, {"status": "ok" if State.ready else "starting"})
        if self.path == "/v1/models":
            return self._send_json(200, {"object": "list", "data": [
                {"id": State.model_name, "object": "model", "owned_by": "magpie-loop",
                 "max_model_len": State.backend.max_len if State.backend else 0}]})
        if self.path == "/loop_info":
            return self._send_json(200, dict(State.info, ready=State.ready, steps=State.engine.steps if State.engine else 0))
        if self.path == "/loop_stats":
            return self._send_json(200, {"steps": State.engine.steps if State.engine else 0,
                                         "bursts": list(State.engine.bursts) if State.engine else []})
        self._error(404, "no route %s" % self.path)

    def do_POST(self):
        try:
            body = _json_body(self)
        except (ValueError, UnicodeDecodeError) as e:
            return self._error(400, "bad JSON body: %s" % e)
        if self.path == "/start_profile":
            started = State.engine.call(State.backend.start_profile)
            return self._send_json(200, {"status": "started" if started else "already profiling"})
        if self.path == "/stop_profile":
            out_dir = body.get("output_dir") or State.trace_dir
            path = State.engine.call(lambda: State.backend.stop_profile(out_dir))
            return self._send_json(200, {"status": "stopped" if path else "not profiling", "trace": path})
        if self.path == "/v1/completions":
            return self._completions(body)
        self._error(404, "no route %s" % self.path)

    def _completions(self, body):
        if not State.ready:
            return self._error(503, "server is starting")
        try:
            prompt = _prompt_ids(body.get("prompt"), State.info["model_config"]["vocab"])
            max_tokens = int(body.get("max_tokens") or 16)
            req = State.engine.submit(prompt, max_tokens)
        except (ValueError, TypeError) as e:
            return self._error(400, str(e))
        rid = "cmpl-" + uuid.uuid4().hex[:16]
        created = int(time.time())
        opts = body.get("stream_options") or {}
        include_usage = bool(opts.get("include_usage"))
        continuous = bool(opts.get("continuous_usage_stats"))
        if not body.get("stream"):
            return self._non_stream(req, rid, created, len(prompt))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        # Per-token events are formatted from a precomputed template (json.dumps per token on 32+
        # handler threads would compete with the engine thread for the GIL); events already
        # queued are written together, one event per token.
        head = ('data: {"id": "%s", "object": "text_completion", "created": %d, "model": %s, "choices": '
                % (rid, created, json.dumps(State.model_name)))
        n, np_ = 0, len(prompt)
        try:
            done = False
            while not done:
                items = [req.out.get()]
                while True:
                    try:
                        items.append(req.out.get_nowait())
                    except queue.Empty:
                        break
                buf = []
                for kind, val in items:
                    if kind == "token":
                        n += 1
                        ev = head + '[{"index": 0, "text": " t%d", "logprobs": null, "finish_reason": null}]' % val
                        if continuous:
                            ev += ', "usage": {"prompt_tokens": %d, "completion_tokens": %d, "total_tokens": %d}' % (
                                np_, n, np_ + n)
                        buf.append(ev + "}\n\n")
                        continue
                    if kind == "error":
                        buf.append("data: " + json.dumps({"error": {"message": val}}) + "\n\n")
                    else:
                        buf.append(head + '[{"index": 0, "text": "", "logprobs": null, "finish_reason": %s}]}\n\n'
                                   % json.dumps(val))
                        if include_usage:
                            buf.append(head + '[], "usage": {"prompt_tokens": %d, "completion_tokens": %d, '
                                       '"total_tokens": %d}}\n\n' % (np_, n, np_ + n))
                    buf.append("data: [DONE]\n\n")
                    done = True
                    break
                self._raw("".join(buf).encode())
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _raw(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _non_stream(self, req, rid, created, n_prompt):
        toks, reason = [], "length"
        while True:
            kind, val = req.out.get()
            if kind == "token":
                toks.append(val)
            elif kind == "error":
                return self._error(500, val)
            else:
                reason = val
                break
        self._send_json(200, {"id": rid, "object": "text_completion", "created": created, "model": State.model_name,
                              "choices": [{"index": 0, "text": "".join(" t%d" % t for t in toks), "logprobs": None,
                                           "finish_reason": reason}],
                              "usage": {"prompt_tokens": n_prompt, "completion_tokens": len(toks),
                                        "total_tokens": n_prompt + len(toks)}})


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # listen backlog: the default 5 drops SYNs of a 32-request burst (1 s retransmit)


def make_backend(args, chosen):
    cfg = loop_shapes.model_config(args.backend)
    kernels = ops.load(chosen, args.backend)
    if args.backend == "torch":
        import model
        return cfg, model.TorchBackend(cfg, kernels, device=args.device, max_slots=args.max_slots, max_len=args.max_len,
                                       graphs=args.cuda_graphs, prefill_pad=args.prefill_pad)
    import model_numpy
    return cfg, model_numpy.NumpyBackend(cfg, kernels, max_slots=args.max_slots, max_len=min(args.max_len, 1024))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["torch", "numpy"], default="torch")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = any free port (see --port-file)")
    ap.add_argument("--port-file", default="", help="write the bound port here once ready")
    ap.add_argument("--kernels", default=None, help="kernel spec (default: $MAGPIE_LOOP_KERNELS or baseline)")
    ap.add_argument("--trace-dir", default=os.environ.get("VLLM_TORCH_PROFILER_DIR", "loop_traces"))
    ap.add_argument("--model-name", default="loop-model")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--max-slots", type=int, default=64, help="sequences decoded together at most")
    ap.add_argument("--max-len", type=int, default=2048, help="prompt + output tokens per sequence at most")
    ap.add_argument("--max-prefill-tokens", type=int, default=4096, help="prompt tokens per prefill step")
    ap.add_argument("--profile-max-steps", type=int, default=0,
                    help="torch backend: a profile records at most this many engine steps (0 = until /stop_profile)")
    ap.add_argument("--cuda-graphs", action="store_true",
                    help="torch backend: replay decode steps as CUDA graphs captured per batch bucket (numpy: ignored)")
    ap.add_argument("--prefill-pad", type=int, default=0,
                    help="torch backend: pad each prompt's prefill attention to a multiple of this many positions "
                         "and build every such shape at start-up (0 = exact lengths: a new length costs a cuDNN "
                         "plan build on first use; numpy: ignored)")
    args = ap.parse_args(argv)
    spec = args.kernels if args.kernels is not None else os.environ.get("MAGPIE_LOOP_KERNELS", "baseline")
    try:
        chosen = ops.parse_spec(spec, args.backend)
    except ops.SpecError as e:
        print("server.py: %s" % e, file=sys.stderr)
        return 2
    State.trace_dir, State.model_name = os.path.abspath(args.trace_dir), args.model_name
    httpd = Server((args.host, args.port), Handler)
    threading.Thread(target=httpd.serve_forever, name="http", daemon=True).start()
    port = httpd.server_address[1]
    print("server.py: listening on %s:%d (backend %s, kernels %s)" % (args.host, port, args.backend,
                                                                       ops.spec_string(chosen)), file=sys.stderr, flush=True)
    t0 = time.time()
    cfg, State.backend = make_backend(args, chosen)
    if args.backend == "torch":
        State.backend.profile_max_steps = max(0, args.profile_max_steps)
    State.engine = engine_mod.Engine(State.backend, max_prefill_tokens=args.max_prefill_tokens)
    State.engine.start()
    State.engine.call(State.backend.warmup, timeout=3600)
    State.info = {"backend": args.backend, "kernels": chosen, "kernel_spec": ops.spec_string(chosen),
                  "model_config": cfg, "weights_sha256": State.backend.weights_sha256, "pid": os.getpid(),
                  "max_slots": args.max_slots, "max_len": State.backend.max_len, "trace_dir": State.trace_dir,
                  "runtime": State.backend.describe(), "startup_s": round(time.time() - t0, 3)}
    State.ready = True
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(args.port_file + ".tmp", args.port_file)
    print("server.py: ready after %.1f s" % (time.time() - t0), file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (socket.error, OSError) as e:
        print("server.py: %s" % e, file=sys.stderr)
        sys.exit(1)
