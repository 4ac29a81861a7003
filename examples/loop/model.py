"""Torch backend of the loop example server: a Llama-style decoder (random bf16 weights, seed 0)
whose hot path calls three pluggable ops (ops.py): rms_norm, silu_mul, rotary. GEMMs go to
cuBLAS (F.linear), attention to scaled_dot_product_attention, the KV cache is a static
[slots, max_len, kv_heads, head_dim] tensor per layer. Greedy sampling; no EOS (requests end
at max_tokens), so every kernel set produces the same number of tokens.
"""
import gzip
import hashlib
import os
import shutil
import time

import torch
import torch.nn.functional as F

import kernels_eager


def _sdpa(q, k, v, mask=None, causal=False):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    s = (q.float() @ k.float().transpose(-1, -2)) / (q.shape[-1] ** 0.5)  # torch < 2.0
    if causal:
        n = q.shape[-2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return (s.softmax(-1) @ v.float()).to(q.dtype)


class TorchBackend:
    def __init__(self, cfg, kernels, device="cuda", max_slots=64, max_len=2048, dtype=torch.bfloat16):
        self.cfg, self.ops, self.device, self.dtype = cfg, kernels, torch.device(device), dtype
        self.max_slots, self.max_len = max_slots, max_len
        torch.manual_seed(0)
        g = torch.Generator().manual_seed(0)
        H, I, V = cfg["hidden"], cfg["intermediate"], cfg["vocab"]
        nh, nkv, hd = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
        self.nh, self.nkv, self.hd = nh, nkv, hd

        def w(*shape, scale=1.0, offset=0.0):
            return (offset + scale * torch.randn(*shape, generator=g)).to(dtype).to(self.device)
        self.embed = w(V, H)
        self.layers = []
        for _ in range(cfg["layers"]):
            self.layers.append(dict(
                ln1=w(H, scale=0.1, offset=1.0), wqkv=w((nh + 2 * nkv) * hd, H, scale=H ** -0.5),
                wo=w(H, nh * hd, scale=(nh * hd) ** -0.5), ln2=w(H, scale=0.1, offset=1.0),
                wgu=w(2 * I, H, scale=H ** -0.5), wd=w(H, I, scale=I ** -0.5)))
        self.norm = w(H, scale=0.1, offset=1.0)
        self.lm_head = w(V, H, scale=H ** -0.5)
        self.cos_sin = kernels_eager.rope_cache(cfg["max_pos"], hd, cfg["rope_theta"], self.device)
        shape = (max_slots, max_len, nkv, hd)
        self.k_cache = [torch.zeros(shape, dtype=dtype, device=self.device) for _ in self.layers]
        self.v_cache = [torch.zeros(shape, dtype=dtype, device=self.device) for _ in self.layers]
        self.weights_sha256 = self._fingerprint()
        self._prof = None

    def _fingerprint(self):
        h = hashlib.sha256()
        for t in [self.embed, self.norm, self.lm_head] + [v for l in self.layers for v in l.values()]:
            h.update(t.float().cpu().sum().item().hex().encode())
            h.update(str(tuple(t.shape)).encode())
        return h.hexdigest()

    # ---- forward over a flat token batch
    def _layers(self, x, positions, attend):
        eps = self.cfg["eps"]
        nh, nkv, hd = self.nh, self.nkv, self.hd
        for li, L in enumerate(self.layers):
            h = self.ops["rms_norm"](x, L["ln1"], eps)
            qkv = F.linear(h, L["wqkv"])
            t = qkv.shape[0]
            q = qkv[:, :nh * hd].view(t, nh, hd)
            k = qkv[:, nh * hd:(nh + nkv) * hd].view(t, nkv, hd)
            v = qkv[:, (nh + nkv) * hd:].view(t, nkv, hd)
            q, k = self.ops["rotary"](q, k, self.cos_sin, positions)
            x = x + F.linear(attend(li, q, k, v), L["wo"])
            h = self.ops["rms_norm"](x, L["ln2"], eps)
            x = x + F.linear(self.ops["silu_mul"](F.linear(h, L["wgu"])), L["wd"])
        return self.ops["rms_norm"](x, self.norm, eps)

    def _sample(self, h_last):
        return F.linear(h_last, self.lm_head).float().argmax(-1).tolist()

    @torch.no_grad()
    def prefill(self, slots, prompts):
        V = self.cfg["vocab"]
        toks = torch.tensor([t % V for p in prompts for t in p], dtype=torch.long).to(self.device)
        positions = torch.cat([torch.arange(len(p)) for p in prompts]).to(self.device)
        offs, o = [], 0
        for p in prompts:
            offs.append((o, len(p)))
            o += len(p)
        g = self.nh // self.nkv

        def attend(li, q, k, v):
            outs = []
            for s, (o, n) in zip(slots, offs):
                self.k_cache[li][s, :n] = k[o:o + n]
                self.v_cache[li][s, :n] = v[o:o + n]
                qi = q[o:o + n].transpose(0, 1).unsqueeze(0)
                ki = k[o:o + n].repeat_interleave(g, dim=1).transpose(0, 1).unsqueeze(0)
                vi = v[o:o + n].repeat_interleave(g, dim=1).transpose(0, 1).unsqueeze(0)
                outs.append(_sdpa(qi, ki, vi, causal=True)[0].transpose(0, 1).reshape(n, -1))
            return torch.cat(outs) if len(outs) > 1 else outs[0]
        h = self._layers(F.embedding(toks, self.embed), positions, attend)
        last = torch.tensor([o + n - 1 for o, n in offs], device=self.device)
        return self._sample(h.index_select(0, last))

    @torch.no_grad()
    def decode(self, slots, last_tokens, positions):
        V = self.cfg["vocab"]
        toks = torch.tensor([t % V for t in last_tokens], dtype=torch.long).to(self.device)
        pos = torch.tensor(positions, dtype=torch.long).to(self.device)
        sl = torch.tensor(slots, dtype=torch.long).to(self.device)
        n = max(positions) + 1
        mask = (torch.arange(n, device=self.device)[None, :] <= pos[:, None])[:, None, None, :]
        g = self.nh // self.nkv
        b = len(slots)

        def attend(li, q, k, v):
            self.k_cache[li][sl, pos] = k
            self.v_cache[li][sl, pos] = v
            kk = self.k_cache[li][sl, :n].repeat_interleave(g, dim=2).transpose(1, 2)
            vv = self.v_cache[li][sl, :n].repeat_interleave(g, dim=2).transpose(1, 2)
            return _sdpa(q.unsqueeze(2), kk, vv, mask=mask).reshape(b, -1)
        return self._sample(self._layers(F.embedding(toks, self.embed), pos, attend))

    # ---- profiling (called on the engine thread)
    def annotate(self, name):
        return torch.profiler.record_function(name)

    def start_profile(self):
        if self._prof is not None:
            return False
        acts = [torch.profiler.ProfilerActivity.CPU]
        if self.device.type == "cuda":
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        self._prof = torch.profiler.profile(activities=acts, record_shapes=True)
        self._prof.__enter__()
        return True

    def stop_profile(self, trace_dir):
        if self._prof is None:
            return None
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        prof, self._prof = self._prof, None
        prof.__exit__(None, None, None)
        os.makedirs(trace_dir, exist_ok=True)
        stem = os.path.join(trace_dir, "loop_model-rank-0.%d.pt.trace" % int(time.time() * 1000))
        prof.export_chrome_trace(stem + ".tmp")
        with open(stem + ".tmp", "rb") as src, gzip.open(stem + ".gz.tmp", "wb", compresslevel=3) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(stem + ".tmp")
        os.replace(stem + ".gz.tmp", stem + ".json.gz")
        return stem + ".json.gz"

    def warmup(self):
        """Compiles every kernel (Triton JIT, cuBLAS heuristics) at prefill and decode shapes."""
        n = min(300, self.max_len - 2)
        self.prefill([0, 1], [[1] * 37, [2] * n])
        self.decode([0, 1], [3, 4], [37, n])
        self.decode([0], [5], [38])
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def describe(self):
        dev = torch.cuda.get_device_name(self.device) if self.device.type == "cuda" else "cpu"
        return {"torch": torch.__version__, "device": dev}

