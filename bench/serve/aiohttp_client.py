#!/usr/bin/env python3
"""The Python reference client for bench/serve: the same work as magpie's client (streamed
/v1/completions requests with token-id prompts, SSE parsed line by line, every event decoded
with json.loads and timestamped), in the style of vLLM's benchmark_serving (one aiohttp
session, a semaphore for the concurrency, a large read buffer). Prints one JSON object:
request/s, streamed tokens/s, and per-request CLOCK_MONOTONIC times for the TTFT check."""
import argparse
import asyncio
import json
import time

import aiohttp


async def one(session, url, i, args, sem, out):
    body = {"model": args.model, "prompt": list(range(100, 100 + args.input_len)), "max_tokens": args.output_len,
            "stream": True, "stream_options": {"include_usage": True}, "temperature": 0.0}
    rid = f"py-{i}"
    async with sem:
        start = time.monotonic_ns()
        first = 0
        chunks = tokens = 0
        ok = False
        try:
            async with session.post(url, json=body, headers={"X-Request-Id": rid}) as resp:
                if resp.status == 200:
                    async for raw in resp.content:
                        line = raw.strip()
                        if not line.startswith(b"data:"):
                            continue
                        data = line[5:].strip()
                        now = time.monotonic_ns()
                        if data == b"[DONE]":
                            ok = True
                            break
                        ev = json.loads(data)
                        choices = ev.get("choices") or []
                        if choices and choices[0].get("text"):
                            chunks += 1
                            if not first:
                                first = now
                        usage = ev.get("usage")
                        if usage:
                            tokens = usage.get("completion_tokens", tokens)
        except aiohttp.ClientError:
            ok = False
        out.append({"id": rid, "start_ns": start, "first_ns": first, "end_ns": time.monotonic_ns(), "ok": ok,
                    "tokens": tokens or chunks})


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--num-prompts", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--input-len", type=int, default=16)
    p.add_argument("--output-len", type=int, default=64)
    p.add_argument("--model", default="sim-model")
    args = p.parse_args()
    sem = asyncio.Semaphore(args.concurrency)
    out = []
    conn = aiohttp.TCPConnector(limit=args.concurrency)
    timeout = aiohttp.ClientTimeout(total=6 * 3600)
    async with aiohttp.ClientSession(connector=conn, timeout=timeout, read_bufsize=10 * 1024 * 1024) as s:
        t0 = time.monotonic_ns()
        await asyncio.gather(*(one(s, args.url + "/v1/completions", i, args, sem, out) for i in range(args.num_prompts)))
        t1 = time.monotonic_ns()
    dur = (t1 - t0) / 1e9
    done = [r for r in out if r["ok"]]
    print(json.dumps({"duration": dur, "completed": len(done), "request_throughput": len(done) / dur,
                      "output_throughput": sum(r["tokens"] for r in done) / dur, "requests": out}))


if __name__ == "__main__":
    asyncio.run(main())
