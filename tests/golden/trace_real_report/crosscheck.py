#!/usr/bin/env python3
"""Independent cross-check of `magpie trace report` / `magpie trace stages` outputs on a real
trace, using only the standard library (json, gzip, csv). Recomputes from the raw events:
  * per kernel name: calls and Σ dur (kernels.csv);
  * GPU busy time = union of [ts, ts+dur] over kernel / memcpy / memset events, total span and
    idle (gpu_timeline.csv), in exact integer nanoseconds;
  * every aten::mm / aten::addmm / aten::bmm op row: GFLOP = 2·M·N·K(·B)/1e9 from its Input Dims,
    bytes = (MK+KN+MN)·2 for bf16;
  * the SDPA row: FLOPs from the (B, H, N, d) shapes with the causal halving;
  * the roofline columns against the H200 achievable ceilings (4300 GB/s, 790 TFLOP/s bf16).
Usage: crosscheck.py TRACE REPORT_DIR [STAGES_DIR]
"""
import csv
import gzip
import json
import math
import sys
from collections import defaultdict


def ns(v):
    """µs number → ns, exact for the trace's 3-decimal text (Python's repr round-trips)."""
    s = repr(float(v)) if not isinstance(v, int) else str(v)
    if "e" in s or "E" in s:
        return round(float(v) * 1000)
    ip, _, fp = s.partition(".")
    fp = (fp + "000")[:3]
    sign = -1 if ip.startswith("-") else 1
    return sign * (abs(int(ip)) * 1000 + int(fp))


def union(iv):
    iv.sort()
    total, cur = 0, None
    for b, e in iv:
        if cur and b <= cur[1]:
            cur[1] = max(cur[1], e)
        else:
            if cur:
                total += cur[1] - cur[0]
            cur = [b, e]
    if cur:
        total += cur[1] - cur[0]
    return total


def close(a, b, rel=1e-9, abs_=1e-9):
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=abs_)


def main():
    trace, rep = sys.argv[1], sys.argv[2]
    ev = json.load(gzip.open(trace))["traceEvents"]
    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    # 1. kernels.csv
    calls, tot = defaultdict(int), defaultdict(int)
    for e in gpu:
        calls[e["name"]] += 1
        tot[e["name"]] += ns(e["dur"])
    rows = list(csv.DictReader(open(f"{rep}/kernels.csv", newline="")))
    assert len(rows) == len(calls), (len(rows), len(calls))
    for r in rows:
        n = r["kernel_name"]
        assert int(r["calls"]) == calls[n], n
        assert close(r["total_us"], tot[n] / 1000.0), (n, r["total_us"], tot[n])
    # 2. gpu_timeline.csv
    iv = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in gpu]
    busy = union(list(iv))
    span = max(e for _, e in iv) - min(b for b, _ in iv)
    tl = {r["type"]: float(r["time ms"]) for r in csv.DictReader(open(f"{rep}/gpu_timeline.csv"))}
    assert close(tl["busy_time"], busy / 1e6), (tl["busy_time"], busy / 1e6)
    assert close(tl["total_time"], span / 1e6)
    assert close(tl["idle_time"], (span - busy) / 1e6)
    assert close(tl["computation_time"] + tl["exposed_comm_time"] + tl["exposed_memcpy_time"] + tl["idle_time"],
                 tl["total_time"], rel=1e-12)
    # 3. GEMM and SDPA models, 4. roofline against the H200 achievable ceilings.
    ops = list(csv.DictReader(open(f"{rep}/ops.csv", newline="")))
    checked = 0
    for r in ops:
        if r["op_name"] in ("aten::mm", "aten::bmm"):
            dims = json.loads(r["input_dims"])
            a, b = dims[0], dims[1]
            batch = a[0] if r["op_name"] == "aten::bmm" else 1
            m, k, n = a[-2], a[-1], b[-1]
            assert close(r["gflops"], 2 * m * n * k * batch / 1e9), r
            bpe = 2 if "BFloat16" in r["input_type"] else 4
            byts = (m * k + k * n + m * n) * bpe * batch
            assert close(r["bytes"], byts), r
            if r["compute_spec"] == "matrix_bf16":
                roof = max(2 * m * n * k * batch / 790e12, byts / 4300e9) * 1e6
                assert close(r["roofline_time_us"], roof), (r, roof)
                assert r["roofline_bound"] == ("COMPUTE_BOUND" if 2 * m * n * k * batch / 790e12 >= byts / 4300e9
                                               else "MEMORY_BOUND")
            checked += 1
        if r["op_name"] == "aten::_scaled_dot_product_cudnn_attention":
            q, kk, v = json.loads(r["input_dims"])[:3]
            B, H, N, d = q
            flops = B * H * (2 * N * kk[2] * d + 2 * N * kk[2] * v[3])
            if "True" in r["concrete_inputs"].split(",")[6]:
                flops /= 2
            assert close(r["gflops"], flops / 1e9), (r["gflops"], flops / 1e9)
            checked += 1
    assert checked >= 5, checked
    # Σ op kernel time: every kernel belongs to exactly one op row here (serial stream).
    assert close(sum(float(r["kernel_time_us_sum"]) for r in ops), sum(tot.values()) / 1000.0, rel=1e-9)
    # 5. stages: the picked steps' GPU work, from the gpu_user_annotation spans of the raw trace.
    if len(sys.argv) > 3:
        st = sys.argv[3]
        simple_cols = ["source_category", "op_name", "param_signature", "operation_count", "num_kernels",
                       "kernel_time_ms_sum", "time_pct", "kernel_time_us_mean", "gflops", "data_moved_mb",
                       "arithmetic_intensity_flops_per_byte", "achieved_tflops_mean", "achieved_tbps_mean",
                       "compute_spec", "roofline_bound", "pct_roofline_mean", "roofline_time_us", "has_perf_model",
                       "params_json", "input_dims", "input_type"]
        for label in ("prefilldecode", "decode_only", "prefill_only"):
            f = f"{st}/{label}_ISL96_OSL8_CONC2_kernel_roofline_simple.csv"
            rr = list(csv.reader(open(f, newline="")))
            assert rr[0] == simple_cols, rr[0]
            assert len(rr) > 5
        gua = sorted((e for e in ev if e.get("cat") == "gpu_user_annotation"), key=lambda e: e["ts"])
        pre = gua[0]  # the prefill step's GPU span
        lo, hi = ns(pre["ts"]), ns(pre["ts"]) + ns(pre["dur"])
        inside = [e for e in gpu if lo <= ns(e["ts"]) < hi]
        total = sum(ns(e["dur"]) for e in inside)
        simple = list(csv.DictReader(open(f"{st}/prefill_only_ISL96_OSL8_CONC2_kernel_roofline_simple.csv", newline="")))
        got = sum(float(r["kernel_time_ms_sum"]) for r in simple) * 1000.0
        assert close(got, total / 1000.0, rel=1e-4), (got, total / 1000.0)  # %.6g rounding of each row
        for r in simple:
            if r["op_name"] == "aten::mm":
                assert json.loads(r["params_json"])["M"] == "96", r
    print("crosscheck: ok")


if __name__ == "__main__":
    main()
