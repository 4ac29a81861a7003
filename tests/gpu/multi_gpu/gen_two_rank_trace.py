"""Write a synthetic two-rank PyTorch-profiler trace of a tensor-parallel MLP step whose NCCL
kernels overlap compute by construction, plus the expected communication numbers.

Each rank runs L layers. Layer i: a GEMM A_i on the compute stream, then an NCCL kernel N_i on
the communication stream that starts o_i ns before A_i ends (o_i of it hidden under A_i), then
the next GEMM starts g_i ns after A_i ends (hiding the part of N_i still running then). So
  hidden by A_i          = o_i
  hidden by A_{i+1}      = max(0, d_i - o_i - g_i)
  exposed                = min(g_i, d_i - o_i)
in exact integer nanoseconds (timestamps are written in microseconds with 3 decimals, as the
PyTorch profiler does). A device-to-host copy ends each step (not communication). Rank 1 uses
other durations than rank 0.

Usage: python3 gen_two_rank_trace.py OUT_DIR [--layers N] [--seed S]
Writes OUT_DIR/tp_mlp-rank-{0,1}.pt.trace.json, OUT_DIR/expected_comm.json:
  {"ranks": {"0": {"nccl_kernels", "nccl_sum_ns", "exposed_ns", "overlapped_ns"}, ...}}
and OUT_DIR/tp_mlp-rank-{0,1}.summary.json with the keys tp_mlp.py writes there (so the tp stage
of tests/gpu/multi_gpu_x2.sh can run on these traces on the CPU; "profiler" time = the sum).
"""
import argparse
import json
import os
import random

BASE_US = 1733200000000  # an epoch-scale start, as real traces have
COMPUTE_STREAM, COMM_STREAM = 7, 20


def us(ns):
    """Integer ns -> the profiler's microsecond number with 3 decimals (exact)."""
    return float(f"{BASE_US + ns // 1000}.{ns % 1000:03d}")


class rank_trace:
    def __init__(self, rank):
        self.rank = rank
        self.events = []
        self.corr = 0

    def launch(self, name, cat, ts_ns, dur_ns, stream, cpu_ns):
        """A cudaLaunchKernel on the CPU thread plus the GPU event it correlates with."""
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100 + self.rank,
                            "tid": 100 + self.rank, "ts": us(cpu_ns), "dur": 4.0,
                            "args": {"correlation": self.corr, "External id": self.corr}})
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": self.rank, "tid": stream, "ts": us(ts_ns),
                            "dur": dur_ns / 1000.0,
                            "args": {"correlation": self.corr, "External id": self.corr, "stream": stream,
                                     "device": self.rank}})

    def write(self, path):
        doc = {"schemaVersion": 1,
               "distributedInfo": {"backend": "nccl", "rank": self.rank, "world_size": 2},
               "deviceProperties": [{"id": self.rank, "name": "NVIDIA H200", "totalGlobalMem": 150754820096}],
               "traceEvents": self.events}
        with open(path, "w") as f:
            json.dump(doc, f)


def build_rank(rank, layers, rng):
    tr = rank_trace(rank)
    t = 50_000  # ns after BASE
    exp = {"nccl_kernels": 0, "nccl_sum_ns": 0, "exposed_ns": 0, "overlapped_ns": 0}
    comm_free = 0  # the communication stream runs one kernel at a time
    for i in range(layers):
        a = rng.randrange(40_000, 90_000)          # GEMM, ns
        d = rng.randrange(10_000, 30_000)          # NCCL kernel, ns
        o_max = min(d - 1, t + a - comm_free)      # N_i may start only after N_{i-1} ended
        o = rng.choice([0, rng.randrange(1, o_max + 1)]) if o_max >= 1 else 0  # part of N_i under A_i
        g = rng.choice([rng.randrange(0, d - o + 1), d - o + rng.randrange(1_000, 20_000)])
        tr.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                  "kernel", t, a, COMPUTE_STREAM, t - 8_000)
        s = t + a - o
        op = "AllReduce_Sum_bf16_RING_LL" if i % 2 == 0 else "AllGather_RING_LL"
        tr.launch(f"ncclDevKernel_{op}(ncclDevKernelArgsStorage<4096ul>)", "kernel", s, d, COMM_STREAM, s - 6_000)
        comm_free = s + d
        hidden_next = max(0, d - o - g)
        exp["nccl_kernels"] += 1
        exp["nccl_sum_ns"] += d
        exp["exposed_ns"] += min(g, d - o)
        exp["overlapped_ns"] += o + hidden_next
        t = t + a + g
        # The next GEMM must outlast what it hides: it is at least 40 us long (> d).
    tail = rng.randrange(40_000, 90_000)  # last GEMM closes the last layer's window
    tr.launch("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
              "kernel", t, tail, COMPUTE_STREAM, t - 8_000)
    t += tail + 5_000
    tr.launch("Memcpy DtoH (Device -> Pageable)", "gpu_memcpy", t, 3_000, COMPUTE_STREAM, t - 2_000)
    return tr, exp


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    expected = {"ranks": {}}
    for rank in (0, 1):
        tr, exp = build_rank(rank, args.layers, random.Random(args.seed * 10 + rank))
        tr.write(os.path.join(args.out_dir, f"tp_mlp-rank-{rank}.pt.trace.json"))
        expected["ranks"][str(rank)] = exp
        with open(os.path.join(args.out_dir, f"tp_mlp-rank-{rank}.summary.json"), "w") as f:
            json.dump({"rank": rank, "world_size": 2, "steps": 1, "rel_max_err": 0.0,
                       "profiler_nccl_self_device_us": exp["nccl_sum_ns"] / 1000.0,
                       "device": "synthetic (gen_two_rank_trace.py)", "torch": None, "nccl": "synthetic"}, f, indent=1)
    with open(os.path.join(args.out_dir, "expected_comm.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
