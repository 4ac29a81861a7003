#!/usr/bin/env python3
"""Quick self-check of every kernel implementation against the eager reference (no timing):
    python3 examples/loop/check_kernels.py [--backend torch|numpy] [--device cuda]
One line per (op, implementation, tokens): max |error| and whether it is within
atol + rtol*|ref| (bf16: 1e-2, 1e-2; fp32: 1e-4, 1e-4). Wrong-on-purpose candidates are
expected to mismatch. Exit 1 when a baseline or a correct candidate mismatches or raises.
Used by tests/gpu/loop_h200.sh before the loop, so a broken kernel is named precisely.
"""
import argparse
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import loop_shapes  # noqa: E402
import ops  # noqa: E402

EXPECTED_WRONG = {("silu_mul", "swapped"), ("rotary", "interleaved"), ("attention", "offbyone")}


def inputs(op, t, cfg, backend, dev):
    if backend == "numpy":
        import numpy as np
        import kernels_numpy as kn
        r = np.random.default_rng(t)
        f = lambda *s: r.standard_normal(s).astype(np.float32)  # noqa: E731
        if op == "rms_norm":
            return [f(t, cfg["hidden"]), (1 + 0.1 * f(cfg["hidden"])).astype(np.float32)]
        if op == "silu_mul":
            return [f(t, 2 * cfg["intermediate"])]
        if op == "attention":
            length = 2 * t + 70
            return [f(t, cfg["heads"], cfg["head_dim"]), f(t + 1, length, cfg["kv_heads"], cfg["head_dim"]),
                    f(t + 1, length, cfg["kv_heads"], cfg["head_dim"]), r.permutation(t + 1)[:t].astype(np.int64),
                    r.integers(1, length - 1, t).astype(np.int64)]
        return [f(t, cfg["heads"], cfg["head_dim"]), f(t, cfg["kv_heads"], cfg["head_dim"]),
                kn.rope_cache(cfg["max_pos"], cfg["head_dim"], cfg["rope_theta"]), r.integers(0, cfg["max_pos"], t)]
    import torch
    import kernels_eager as ke
    g = torch.Generator().manual_seed(t)
    f = lambda *s: torch.randn(*s, generator=g).to(torch.bfloat16).to(dev)  # noqa: E731
    if op == "rms_norm":
        return [f(t, cfg["hidden"]), (1 + 0.1 * torch.randn(cfg["hidden"], generator=g)).to(torch.bfloat16).to(dev)]
    if op == "silu_mul":
        return [f(t, 2 * cfg["intermediate"])]
    if op == "attention":  # t sequences with contexts up to 2t + 70 (333 -> 736 positions)
        length = 2 * t + 70
        lens = torch.randint(1, length - 1, (t,), generator=g).to(dev)
        slots = torch.randperm(t + 1, generator=g)[:t].to(dev)
        return [f(t, cfg["heads"], cfg["head_dim"]), f(t + 1, length, cfg["kv_heads"], cfg["head_dim"]),
                f(t + 1, length, cfg["kv_heads"], cfg["head_dim"]), slots, lens]
    pos = torch.randint(0, cfg["max_pos"], (t,), generator=g).to(dev)
    return [f(t, cfg["heads"], cfg["head_dim"]), f(t, cfg["kv_heads"], cfg["head_dim"]),
            ke.rope_cache(cfg["max_pos"], cfg["head_dim"], cfg["rope_theta"], dev), pos]


def max_err(out, ref, backend):
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    worst, ok = 0.0, True
    tol = 1e-2 if backend == "torch" else 1e-4
    for o, r in zip(outs, refs):
        if backend == "torch":
            o, r = o.float().cpu().numpy(), r.float().cpu().numpy()
        import numpy as np
        if o.shape != r.shape:
            return float("inf"), False
        d = np.abs(o - r)
        worst = max(worst, float(d.max()))
        ok = ok and bool(np.all(d <= tol + tol * np.abs(r)))
    return worst, ok


def check_graphs(device):
    """The decode step replayed as a CUDA graph must give the eager step's tokens (a small copy of
    the GPU model: 2 layers, 8 slots). Returns 1 on a mismatch or an error."""
    import torch
    import model
    cfg = dict(loop_shapes.model_config("torch"), layers=2)
    try:
        outs = []
        for graphs in (False, True):
            be = model.TorchBackend(cfg, ops.load(ops.parse_spec("baseline"), "torch"), device=device, max_slots=8,
                                    max_len=512, graphs=graphs)
            be.warmup()
            # 4 rows: a bucket size, so both runs use the same GEMM shapes (no padding row)
            toks = be.prefill([0, 1, 2, 3], [[5] * 40, [7] * 100, [9] * 3, [11] * 64])
            seq = [toks]
            pos = [40, 100, 3, 64]
            for _ in range(6):
                toks = be.decode([0, 1, 2, 3], toks, pos)
                pos = [p + 1 for p in pos]
                seq.append(toks)
            outs.append(seq)
            del be
            torch.cuda.empty_cache()
        ok = outs[0] == outs[1]
        print("graphs    baseline     decode tokens eager vs CUDA graph %s" % ("ok" if ok else "FAIL %s vs %s" % outs), flush=True)
        return 0 if ok else 1
    except Exception as e:  # report, do not hide: the loop's GPU config needs graphs
        traceback.print_exc(file=sys.stderr)
        print("graphs    baseline     FAIL %s: %s" % (type(e).__name__, str(e).splitlines()[0][:200]), flush=True)
        return 1


def check_prefill_pad(device):
    """Prefill attention with each prompt padded to a multiple of 128 positions (server.py
    --prefill-pad 128, the GPU config) must give the unpadded result at the prompt's own positions
    (causal masking: the padding comes after them). Returns 1 on a mismatch or an error."""
    import torch
    import model
    cfg = dict(loop_shapes.model_config("torch"), layers=1)
    try:
        kernels = ops.load(ops.parse_spec("eager"), "torch")
        exact = model.TorchBackend(cfg, kernels, device=device, max_slots=2, max_len=512, prefill_pad=0)
        padded = model.TorchBackend(cfg, kernels, device=device, max_slots=2, max_len=512, prefill_pad=128)
        g = torch.Generator().manual_seed(5)
        worst, ok = 0.0, True
        for n in (1, 37, 128, 300):
            q = torch.randn(n, cfg["heads"], cfg["head_dim"], generator=g).to(torch.bfloat16).to(device)
            k = torch.randn(n, cfg["kv_heads"], cfg["head_dim"], generator=g).to(torch.bfloat16).to(device)
            v = torch.randn(n, cfg["kv_heads"], cfg["head_dim"], generator=g).to(torch.bfloat16).to(device)
            err, good = max_err(padded._attend_one(q, k, v), exact._attend_one(q, k, v), "torch")
            worst, ok = max(worst, err), ok and good
        print("prefill   pad=128      attention vs exact lengths max_abs_err=%-10.3g %s (sdpa backend %s)"
              % (worst, "ok" if ok else "FAIL", model.sdpa_backend(*padded._attention_inputs(q, k, v))), flush=True)
        return 0 if ok else 1
    except Exception as e:  # report, do not hide: the GPU config pads
        traceback.print_exc(file=sys.stderr)
        print("prefill   pad=128      FAIL %s: %s" % (type(e).__name__, str(e).splitlines()[0][:200]), flush=True)
        return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["torch", "numpy"], default="torch")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    cfg = loop_shapes.model_config(a.backend)
    bad = 0
    for op, impls in ops.IMPLS[a.backend].items():
        ref_fn = ops.load({op: "eager"}, a.backend)[op]
        for impl in sorted(impls):
            try:
                fn = ops.load({op: impl}, a.backend)[op]
            except Exception as e:  # e.g. triton missing or a syntax error in a kernel file
                print("%-9s %-12s import FAIL %s: %s" % (op, impl, type(e).__name__, e), flush=True)
                bad += 1
                continue
            for t in (1, 7, 32, 333):
                x = inputs(op, t, cfg, a.backend, a.device)
                try:
                    err, ok = max_err(fn(*x), ref_fn(*x), a.backend)
                    why = ""
                except Exception as e:  # report and go on: the next kernel may be fine
                    err, ok, why = float("nan"), False, "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
                    traceback.print_exc(file=sys.stderr)
                wrong_ok = (op, impl) in EXPECTED_WRONG
                verdict = "ok" if ok else ("mismatch (expected)" if wrong_ok and not why else "FAIL")
                bad += verdict == "FAIL"
                print("%-9s %-12s tokens=%-4d max_abs_err=%-10.3g %s %s" % (op, impl, t, err, verdict, why), flush=True)
    if a.backend == "torch":
        bad += check_prefill_pad(a.device)
    if a.backend == "torch" and a.device.startswith("cuda"):
        bad += check_graphs(a.device)
    print("check_kernels: %s" % ("all as expected" if not bad else "%d FAILED" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
