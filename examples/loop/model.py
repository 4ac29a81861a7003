"""Torch backend of the loop example server: a Llama-style decoder (random bf16 weights, seed 0)
whose hot path calls four pluggable ops (ops.py): rms_norm, silu_mul, rotary and the decode
attention. GEMMs go to cuBLAS (F.linear), prefill attention to scaled_dot_product_attention, the
KV cache is a static [slots + 1, max_len, kv_heads, head_dim] tensor per layer (the extra row
takes the padding rows of graphed decode steps). Greedy sampling; no EOS (requests end at
max_tokens), so every kernel set produces the same number of tokens.

With graphs=True (server.py --cuda-graphs) a decode step replays a CUDA graph captured per batch
bucket at start-up (the batch is padded up to the bucket), as vLLM does: the step's ~20 launches
per layer cost one launch on the host, so the step's time is the GPU's. While the profiler
records, decode steps run eagerly (the same kernels at the same shapes) so the trace keeps every
launch with its Python op; profile_max_steps (server.py --profile-max-steps) bounds a recording to
that many engine steps (a 32-layer decode step is ~700 kernels).

Prefill attention (scaled_dot_product_attention, per sequence) goes to cuDNN on H100/H200 with
torch 2.11, which builds an execution plan for every new sequence length on first use and keeps
it for the life of the thread. With prefill_pad=P (server.py --prefill-pad) each sequence's
q/k/v are zero-padded to a multiple of P positions, so a server sees at most max_len / P attention
shapes, and warmup() builds all of them at start-up (timed: describe()["prefill_attention"]);
causal masking makes the first n outputs of a padded sequence those of the unpadded one. With
P = 0 every new prompt length costs a plan build inside a measured run.
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


def sdpa_backend(q, k, v, causal=True):
    """The backend torch's scaled_dot_product_attention picks for these inputs ("CUDNN_ATTENTION",
    "FLASH_ATTENTION", ...; None when torch cannot say)."""
    try:
        from torch.nn.attention import SDPBackend
        choice = int(torch._fused_sdp_choice(q, k, v, None, 0.0, causal))
        for name, b in SDPBackend.__members__.items():
            if int(b) == choice:
                return name
        return str(choice)
    except Exception:  # informational only (private API)
        return None


GRAPH_BUCKETS = (1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 96, 128)


class TorchBackend:
    def __init__(self, cfg, kernels, device="cuda", max_slots=64, max_len=2048, dtype=torch.bfloat16, graphs=False,
                 prefill_pad=0):
        self.cfg, self.ops, self.device, self.dtype = cfg, kernels, torch.device(device), dtype
        self.max_slots, self.max_len = max_slots, max_len
        torch.manual_seed(0)
        gen_dev = self.device if self.device.type == "cuda" else torch.device("cpu")
        g = torch.Generator(device=gen_dev).manual_seed(0)
        H, I, V = cfg["hidden"], cfg["intermediate"], cfg["vocab"]
        nh, nkv, hd = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
        self.nh, self.nkv, self.hd = nh, nkv, hd

        def w(*shape, scale=1.0, offset=0.0):
            return (offset + scale * torch.randn(*shape, generator=g, device=gen_dev)).to(dtype).to(self.device)
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
        self.scratch = max_slots  # cache row of the padding rows of graphed decode steps
        shape = (max_slots + 1, max_len, nkv, hd)
        self.k_cache = [torch.zeros(shape, dtype=dtype, device=self.device) for _ in self.layers]
        self.v_cache = [torch.zeros(shape, dtype=dtype, device=self.device) for _ in self.layers]
        self.weights_sha256 = self._fingerprint()
        self._prof, self._recording, self._prof_steps = None, False, 0
        self.profile_max_steps = 0  # > 0: the profiler records this many engine steps, then stops
        self.graphs = bool(graphs) and self.device.type == "cuda"
        self._graphs, self._pool = {}, None
        self.buckets = sorted({b for b in GRAPH_BUCKETS if b < max_slots} | {max_slots})
        self.prefill_pad = max(0, int(prefill_pad))
        self._attn_shapes = set()   # padded prefill attention lengths used so far by this process
        self.new_shapes = 0         # prefill attention lengths first used by a request (not at start-up)
        self.prepared = {}          # start-up timing of the prefill attention shapes (describe())

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

    def padded_len(self, n):
        """The attention length of a prompt of n tokens (n rounded up to prefill_pad, at most max_len)."""
        p = self.prefill_pad
        return n if p <= 0 else max(n, min(-(-n // p) * p, self.max_len))

    def _attention_inputs(self, q, k, v):
        """SDPA's inputs for one prompt, q [n, heads, hd], k/v [n, kv_heads, hd]: fresh
        [1, heads, m, hd] views of [m, heads, hd] buffers (m = padded_len(n), zero rows past n), so
        the shape and strides SDPA sees depend on m alone."""
        n, m, g = q.shape[0], self.padded_len(q.shape[0]), self.nh // self.nkv

        def padded(x):
            buf = x.new_zeros((m,) + tuple(x.shape[1:]))
            buf[:n] = x
            return buf.transpose(0, 1).unsqueeze(0)
        return padded(q), padded(k.repeat_interleave(g, dim=1)), padded(v.repeat_interleave(g, dim=1))

    def _attend_one(self, q, k, v):
        """Causal attention of one prompt -> [n, heads * hd] (the first n rows of the padded result)."""
        n = q.shape[0]
        out = _sdpa(*self._attention_inputs(q, k, v), causal=True)
        return out[0, :, :n].transpose(0, 1).reshape(n, -1)

    @torch.no_grad()
    def prefill(self, slots, prompts):
        V = self.cfg["vocab"]
        toks = torch.tensor([t % V for p in prompts for t in p], dtype=torch.long).to(self.device)
        positions = torch.cat([torch.arange(len(p)) for p in prompts]).to(self.device)
        offs, o = [], 0
        for p in prompts:
            offs.append((o, len(p)))
            o += len(p)
        for n in set(len(p) for p in prompts):
            m = self.padded_len(n)
            if m not in self._attn_shapes:
                self._attn_shapes.add(m)
                self.new_shapes += 1

        def attend(li, q, k, v):
            outs = []
            for s, (o, n) in zip(slots, offs):
                self.k_cache[li][s, :n] = k[o:o + n]
                self.v_cache[li][s, :n] = v[o:o + n]
                outs.append(self._attend_one(q[o:o + n], k[o:o + n], v[o:o + n]))
            return torch.cat(outs) if len(outs) > 1 else outs[0]
        h = self._layers(F.embedding(toks, self.embed), positions, attend)
        last = torch.tensor([o + n - 1 for o, n in offs], device=self.device)
        return self._sample(h.index_select(0, last))

    @torch.no_grad()
    def _decode_core(self, toks, pos, sl):
        """One new token per row: toks, pos, sl int64 [B] on the device -> next tokens int64 [B] on
        the device. No host synchronisation and no data-dependent shape: capturable."""
        lens = pos + 1

        def attend(li, q, k, v):
            self.k_cache[li][sl, pos] = k
            self.v_cache[li][sl, pos] = v
            return self.ops["attention"](q, self.k_cache[li], self.v_cache[li], sl, lens).reshape(q.shape[0], -1)
        h = self._layers(F.embedding(toks, self.embed), pos, attend)
        return F.linear(h, self.lm_head).float().argmax(-1)

    def _graph(self, size):
        """The CUDA graph of a decode step of `size` rows (captured on first use)."""
        g = self._graphs.get(size)
        if g is not None:
            return g
        inputs = torch.zeros((3, size), dtype=torch.long, device=self.device)  # tokens, positions, slots
        inputs[2].fill_(self.scratch)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):  # compile and warm every kernel outside the capture
            for _ in range(2):
                self._decode_core(inputs[0], inputs[1], inputs[2])
        torch.cuda.current_stream(self.device).wait_stream(side)
        if self._pool is None:
            self._pool = torch.cuda.graph_pool_handle()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool):
            out = self._decode_core(inputs[0], inputs[1], inputs[2])
        g = {"size": size, "inputs": inputs, "graph": graph, "out": out}
        self._graphs[size] = g
        return g

    @torch.no_grad()
    def decode(self, slots, last_tokens, positions):
        V = self.cfg["vocab"]
        toks = [t % V for t in last_tokens]
        if not self.graphs or self._recording:
            dev = lambda xs: torch.tensor(xs, dtype=torch.long).to(self.device)  # noqa: E731
            return self._decode_core(dev(toks), dev(positions), dev(slots)).tolist()
        b = len(slots)
        g = self._graph(next(x for x in self.buckets if x >= b))
        pad = g["size"] - b
        g["inputs"].copy_(torch.tensor([toks + [0] * pad, list(positions) + [0] * pad, list(slots) + [self.scratch] * pad],
                                       dtype=torch.long))
        g["graph"].replay()
        return g["out"][:b].tolist()

    # ---- profiling (called on the engine thread)
    def annotate(self, name):
        """The step annotation; also counts the steps recorded so far (profile_max_steps)."""
        if self._prof is not None and self._recording and self.profile_max_steps:
            self._prof_steps += 1
            if self._prof_steps > self.profile_max_steps:
                self._finish_recording()
        return torch.profiler.record_function(name)

    def _finish_recording(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        self._prof.__exit__(None, None, None)
        self._recording = False

    def start_profile(self):
        if self._prof is not None:
            return False
        acts = [torch.profiler.ProfilerActivity.CPU]
        if self.device.type == "cuda":
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        self._prof = torch.profiler.profile(activities=acts, record_shapes=True)
        self._prof.__enter__()
        self._recording, self._prof_steps = True, 0
        return True

    def stop_profile(self, trace_dir):
        if self._prof is None:
            return None
        if self._recording:
            self._finish_recording()
        prof, self._prof = self._prof, None
        os.makedirs(trace_dir, exist_ok=True)
        stem = os.path.join(trace_dir, "loop_model-rank-0.%d.pt.trace" % int(time.time() * 1000))
        prof.export_chrome_trace(stem + ".tmp")
        with open(stem + ".tmp", "rb") as src, gzip.open(stem + ".gz.tmp", "wb", compresslevel=3) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(stem + ".tmp")
        os.replace(stem + ".gz.tmp", stem + ".json.gz")
        return stem + ".json.gz"

    def warmup(self):
        """Compiles every kernel (Triton JIT, cuBLAS heuristics) at prefill and decode shapes and,
        with graphs, captures every bucket's decode graph (largest first: they share one pool)."""
        n = min(300, self.max_len - 2)
        self.prefill([0, 1], [[1] * 37, [2] * n])
        self.decode([0, 1], [3, 4], [37, n])
        self.decode([0], [5], [38])
        self._prepare_prefill_attention()
        self.new_shapes = 0
        if self.graphs:
            for size in sorted(self.buckets, reverse=True):
                self._graph(size)
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    @torch.no_grad()
    def _prepare_prefill_attention(self):
        """With prefill_pad: runs the prefill attention once at every padded length up to max_len
        (on the engine's shapes; cuDNN builds and caches each length's plan), timing the first
        call and a repeat of each (synchronised, ms) for describe()."""
        n = min(1024, self.max_len)
        zq = torch.zeros((n, self.nh, self.hd), dtype=self.dtype, device=self.device)
        zkv = torch.zeros((n, self.nkv, self.hd), dtype=self.dtype, device=self.device)
        backend = sdpa_backend(*self._attention_inputs(zq, zkv, zkv))
        if self.prefill_pad <= 0:
            self.prepared = {"pad": 0, "shapes": 0, "sdpa_backend": backend}
            return
        sync = torch.cuda.synchronize if self.device.type == "cuda" else (lambda: None)
        first, again = [], []
        for m in range(self.prefill_pad, self.max_len + 1, self.prefill_pad):
            q = torch.zeros((m, self.nh, self.hd), dtype=self.dtype, device=self.device)
            kv = torch.zeros((m, self.nkv, self.hd), dtype=self.dtype, device=self.device)
            for times in (first, again):
                sync()
                t0 = time.perf_counter()
                self._attend_one(q, kv, kv)
                sync()
                times.append((time.perf_counter() - t0) * 1e3)
            self._attn_shapes.add(m)
        med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
        self.prepared = {"pad": self.prefill_pad, "sdpa_backend": backend, "shapes": len(first),
                         "first_call_ms_median": round(med(first), 3), "first_call_ms_max": round(max(first), 3),
                         "repeat_ms_median": round(med(again), 3), "total_s": round((sum(first) + sum(again)) / 1e3, 3)}

    def describe(self):
        dev = torch.cuda.get_device_name(self.device) if self.device.type == "cuda" else "cpu"
        return {"torch": torch.__version__, "device": dev,
                "cuda_graphs": {"enabled": self.graphs, "buckets": sorted(self._graphs), "while_profiling": "eager"},
                "prefill_attention": self.prepared}

