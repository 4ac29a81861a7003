"""A two-rank tensor-parallel MLP with NCCL collectives, profiled on both ranks.

Each rank holds a column shard of W1 and a row shard of W2 (Megatron-style). A step:
  1. all_gather of the sequence-parallel input shard (exposed: the GEMMs need it),
  2. the batch in two micro-batches: micro-batch 0's partial output is all-reduced
     asynchronously while micro-batch 1's GEMMs run (overlapped), then micro-batch 1's
     all-reduce (exposed).
The TP result is checked against the unsharded MLP on every rank before profiling. Each rank
writes OUT_DIR/tp_mlp-rank-<r>.pt.trace.json (torch profiler, CPU + CUDA) and
OUT_DIR/tp_mlp-rank-<r>.summary.json (the profiler's own NCCL kernel total, a second source).

Usage: python3 tp_mlp.py OUT_DIR [--steps N]   (needs 2 CUDA GPUs; spawns 2 processes)
"""
import argparse
import datetime
import json
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HIDDEN, FFN, TOKENS = 4096, 14336, 4096


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nccl_version():
    v = torch.cuda.nccl.version()  # a tuple (2, 21, 5) in torch 2.x, an int in older releases
    return ".".join(map(str, v)) if isinstance(v, (tuple, list)) else str(v)


def step(x_shard, w1, w2, world):
    """One TP MLP step; returns the full output (every rank holds it)."""
    x = torch.empty((x_shard.shape[0] * world, HIDDEN), device=x_shard.device, dtype=x_shard.dtype)
    dist.all_gather_into_tensor(x, x_shard)
    half = x.shape[0] // 2
    y0 = torch.nn.functional.gelu(x[:half] @ w1) @ w2
    work = dist.all_reduce(y0, async_op=True)          # overlaps micro-batch 1's GEMMs
    y1 = torch.nn.functional.gelu(x[half:] @ w1) @ w2
    work.wait()
    dist.all_reduce(y1)                                # nothing left to hide it
    return torch.cat([y0, y1])


def worker(rank, world, out_dir, steps, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    # A collective that hangs (no P2P path, a lost peer) fails after 90 s instead of holding both GPUs.
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev, timeout=datetime.timedelta(seconds=90))
    g = torch.Generator(device="cpu").manual_seed(1234)   # same full weights on every rank
    w1_full = (torch.randn(HIDDEN, FFN, generator=g) / HIDDEN ** 0.5).to(dev, torch.bfloat16)
    w2_full = (torch.randn(FFN, HIDDEN, generator=g) / FFN ** 0.5).to(dev, torch.bfloat16)
    x_full = torch.randn(TOKENS, HIDDEN, generator=g).to(dev, torch.bfloat16)
    cols = FFN // world
    w1 = w1_full[:, rank * cols:(rank + 1) * cols].contiguous()
    w2 = w2_full[rank * cols:(rank + 1) * cols].contiguous()
    rows = TOKENS // world
    x_shard = x_full[rank * rows:(rank + 1) * rows].contiguous()
    with torch.no_grad():
        y = step(x_shard, w1, w2, world)
        ref = torch.nn.functional.gelu(x_full.float() @ w1_full.float()) @ w2_full.float()
        err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
        if not err < 5e-2:  # bf16 GEMMs vs fp32; a missing or doubled reduction is off by O(1)
            raise SystemExit(f"rank {rank}: TP output differs from the unsharded MLP (rel. max err {err:.3g})")
        for _ in range(3):
            step(x_shard, w1, w2, world)
        torch.cuda.synchronize()
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts, record_shapes=True) as prof:
            for i in range(steps):
                with torch.profiler.record_function(f"tp_mlp_step_{i}"):
                    step(x_shard, w1, w2, world)
            torch.cuda.synchronize()
    dist.barrier()
    prof.export_chrome_trace(os.path.join(out_dir, f"tp_mlp-rank-{rank}.pt.trace.json"))
    nccl_us = sum(getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
                  for e in prof.key_averages() if "nccl" in e.key.lower())
    with open(os.path.join(out_dir, f"tp_mlp-rank-{rank}.summary.json"), "w") as f:
        json.dump({"rank": rank, "world_size": world, "steps": steps, "rel_max_err": err,
                   "profiler_nccl_self_device_us": nccl_us, "device": torch.cuda.get_device_name(dev),
                   "torch": torch.__version__, "nccl": nccl_version()}, f, indent=1)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    if torch.cuda.device_count() < 2:
        print(f"need 2 CUDA GPUs, found {torch.cuda.device_count()}", file=sys.stderr)
        return 77
    os.makedirs(args.out_dir, exist_ok=True)
    mp.spawn(worker, args=(2, args.out_dir, args.steps, free_port()), nprocs=2, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
