#!/usr/bin/env python3
"""Example OpenAI-compatible model server for magpie's serving benchmark on a GPU.

A small Llama-style model with random weights (tiny_llama.py, plain PyTorch) behind a
continuous-batching engine (engine.py), served with aiohttp:
  GET  /health, /v1/models
  POST /v1/completions        prompt: text, or a list of token ids (magpie's random dataset)
  POST /v1/chat/completions   messages (role-only first chunk, then content, like vLLM)
  POST /start_profile, /stop_profile   torch.profiler (record_shapes) → Chrome trace .json.gz in
       the profiler directory (--profiler-dir, VLLM_TORCH_PROFILER_DIR or SGLANG_TORCH_PROFILER_DIR)
Streaming follows vLLM: SSE `data: {...}` chunks, stream_options.include_usage (final usage
chunk) and continuous_usage_stats (usage in every chunk), `data: [DONE]`.
Text prompts are "tokenized" as bytes (id = byte + 3); output tokens are rendered as " <id>".
--backend fake needs no torch (sleep-based timing) for tests of the HTTP layer.
"""
import argparse
import asyncio
import gzip
import json
import os
import shutil
import socket
import sys
import time
import uuid

from aiohttp import web

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import Engine, FakeBackend, GenRequest  # noqa: E402


class Profiler:
    """torch.profiler driven from the engine thread (so CPU ops of that thread are recorded)."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.prof = None

    def annotate(self, name):
        if self.prof is None:
            return _Null()
        import torch
        return torch.profiler.record_function(name)

    def start(self):
        import torch
        if self.prof is not None:
            raise RuntimeError("the profiler is already running")
        acts = [torch.profiler.ProfilerActivity.CPU]
        if torch.cuda.is_available():
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        self.prof = torch.profiler.profile(activities=acts, record_shapes=True, with_flops=True, profile_memory=False)
        self.prof.__enter__()

    def stop(self):
        if self.prof is None:
            raise RuntimeError("the profiler is not running")
        import torch
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        prof, self.prof = self.prof, None
        prof.__exit__(None, None, None)
        os.makedirs(self.out_dir, exist_ok=True)
        stem = f"{socket.gethostname()}_{os.getpid()}-rank-0.{int(time.time() * 1000)}.pt.trace.json"
        raw = os.path.join(self.out_dir, "." + stem)
        prof.export_chrome_trace(raw)
        final = os.path.join(self.out_dir, stem + ".gz")
        with open(raw, "rb") as src, gzip.open(final + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.rename(final + ".tmp", final)
        os.remove(raw)
        return final


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def encode_text(text):
    return [b + 3 for b in text.encode("utf-8")] or [3]


def error(status, message):
    return web.json_response({"object": "error", "message": message, "type": "BadRequestError", "code": status},
                             status=status)


class Server:
    def __init__(self, args, engine, profiler):
        self.args, self.engine, self.profiler = args, engine, profiler

    def routes(self, app):
        app.router.add_get("/health", lambda r: web.Response(text=""))
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/v1/completions", lambda r: self.generate(r, chat=False))
        app.router.add_post("/v1/chat/completions", lambda r: self.generate(r, chat=True))
        if self.profiler:
            app.router.add_post("/start_profile", self.start_profile)
            app.router.add_post("/stop_profile", self.stop_profile)

    async def models(self, request):
        return web.json_response({"object": "list", "data": [
            {"id": self.args.model, "object": "model", "owned_by": "magpie-example", "max_model_len": self.args.max_model_len}]})

    async def start_profile(self, request):
        await asyncio.wrap_future(self.engine.command(self.profiler.start))
        print("INFO profiler started", flush=True)
        return web.Response(text="")

    async def stop_profile(self, request):
        try:
            path = await asyncio.wrap_future(self.engine.command(self.profiler.stop))
        except RuntimeError as e:
            return error(400, str(e))
        print(f"INFO profiler stopped, trace written to {path}", flush=True)
        return web.Response(text="")

    def prompt_ids(self, body, chat):
        if chat:
            msgs = body.get("messages")
            if not isinstance(msgs, list) or not msgs:
                raise ValueError("messages must be a non-empty list")
            return encode_text("\n".join(str(m.get("content", "")) for m in msgs if isinstance(m, dict)))
        p = body.get("prompt")
        if isinstance(p, list) and p and all(isinstance(t, int) for t in p):
            return p
        if isinstance(p, list) and len(p) == 1 and isinstance(p[0], str):
            p = p[0]
        if isinstance(p, str):
            return encode_text(p)
        raise ValueError("prompt must be a string or a list of token ids")

    async def generate(self, request, chat):
        try:
            body = await request.json()
            ids = self.prompt_ids(body, chat)
            max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        except (ValueError, TypeError, json.JSONDecodeError) as e:
            return error(400, str(e))
        loop = asyncio.get_running_loop()
        q = asyncio.Queue()
        req = GenRequest(ids, max_tokens, lambda tok, fin: loop.call_soon_threadsafe(q.put_nowait, (tok, fin)))
        try:
            self.engine.submit(req)
        except ValueError as e:
            return error(400, str(e))
        rid = request.headers.get("X-Request-Id") or uuid.uuid4().hex
        opts = body.get("stream_options") or {}
        meta = Meta(rid, self.args.model, chat, len(ids))
        if not body.get("stream"):
            toks = []
            while True:
                tok, fin = await q.get()
                toks.append(tok)
                if fin:
                    break
            return web.json_response(meta.full(toks))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        try:
            if chat:
                await resp.write(meta.sse(meta.chunk("", None, None, role=True)))
            n = 0
            while True:
                tok, fin = await q.get()
                n += 1
                usage = meta.usage(n) if opts.get("continuous_usage_stats") else None
                await resp.write(meta.sse(meta.chunk(f" {tok}", "length" if fin else None, usage)))
                if fin:
                    break
            if opts.get("include_usage"):
                await resp.write(meta.sse(meta.usage_chunk(n)))
            await resp.write(b"data: [DONE]\n\n")
        except (ConnectionResetError, asyncio.CancelledError):
            req.cancelled = True
            raise
        return resp


class Meta:
    """vLLM-shaped response objects for one request."""

    def __init__(self, rid, model, chat, prompt_tokens):
        self.id = ("chatcmpl-" if chat else "cmpl-") + rid
        self.model, self.chat, self.prompt_tokens = model, chat, prompt_tokens
        self.object = "chat.completion.chunk" if chat else "text_completion"
        self.created = int(time.time())

    def usage(self, n):
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": n, "total_tokens": self.prompt_tokens + n}

    def chunk(self, text, finish, usage, role=False):
        if self.chat:
            delta = {"role": "assistant", "content": ""} if role else {"content": text}
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        c = {"id": self.id, "object": self.object, "created": self.created, "model": self.model, "choices": [choice]}
        if usage:
            c["usage"] = usage
        return c

    def usage_chunk(self, n):
        return {"id": self.id, "object": self.object, "created": self.created, "model": self.model, "choices": [],
                "usage": self.usage(n)}

    def full(self, toks):
        text = "".join(f" {t}" for t in toks)
        choice = ({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"} if self.chat
                  else {"index": 0, "text": text, "finish_reason": "length"})
        return {"id": self.id, "object": "chat.completion" if self.chat else "text_completion", "created": self.created,
                "model": self.model, "choices": [choice], "usage": self.usage(len(toks))}

    @staticmethod
    def sse(obj):
        return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="magpie-tiny-llama", help="served model name")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--backend", choices=["torch", "fake"], default="torch")
    p.add_argument("--device", default=None, help="torch device (default cuda when available, else cpu)")
    p.add_argument("--num-layers", type=int, default=4)
    p.add_argument("--hidden-size", type=int, default=1024)
    p.add_argument("--num-heads", type=int, default=16)
    p.add_argument("--num-kv-heads", type=int, default=4)
    p.add_argument("--intermediate-size", type=int, default=2816)
    p.add_argument("--vocab-size", type=int, default=32000)
    p.add_argument("--max-model-len", type=int, default=4096)
    p.add_argument("--max-num-seqs", type=int, default=64, help="continuous-batching slots")
    p.add_argument("--profiler-dir", default=None,
                   help="enables /start_profile and /stop_profile (default $VLLM_TORCH_PROFILER_DIR, $SGLANG_TORCH_PROFILER_DIR)")
    p.add_argument("--fake-decode-step-ms", type=float, default=4.0)
    args, unknown = p.parse_known_args(argv)
    if unknown:
        print(f"INFO ignoring arguments: {' '.join(unknown)}", flush=True)
    args.profiler_dir = args.profiler_dir or os.environ.get("VLLM_TORCH_PROFILER_DIR") or os.environ.get("SGLANG_TORCH_PROFILER_DIR")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.backend == "torch":
        from tiny_llama import Config, TorchBackend
        cfg = Config(vocab=args.vocab_size, hidden=args.hidden_size, layers=args.num_layers, heads=args.num_heads,
                     kv_heads=args.num_kv_heads, intermediate=args.intermediate_size, max_len=args.max_model_len,
                     max_batch=args.max_num_seqs)
        backend = TorchBackend(cfg, device=args.device)
        params = sum(p.numel() for p in backend.model.parameters())
        print(f"INFO model: {args.num_layers} layers, hidden {args.hidden_size}, {params / 1e6:.1f}M parameters, "
              f"{backend.dtype} on {backend.device}", flush=True)
    else:
        backend = FakeBackend(vocab=args.vocab_size, decode_step_s=args.fake_decode_step_ms / 1000)
    profiler = Profiler(args.profiler_dir) if args.profiler_dir else None
    if profiler and args.backend == "fake":
        print("WARNING profiling needs --backend torch; /start_profile is disabled", flush=True)
        profiler = None
    engine = Engine(backend, args.max_num_seqs, args.max_model_len, profiler)
    engine.start()
    app = web.Application(client_max_size=64 * 1024 * 1024)
    Server(args, engine, profiler).routes(app)
    print(f"INFO serving {args.model} on http://{args.host}:{args.port} (backend {args.backend}, "
          f"profiler dir {args.profiler_dir or 'off'})", flush=True)
    web.run_app(app, host=args.host, port=args.port, print=None, access_log=None, handle_signals=True)
    engine.stop()


if __name__ == "__main__":
    main()
