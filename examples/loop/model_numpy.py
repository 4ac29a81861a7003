"""numpy backend of the loop example server (CPU, float32, no torch): the same decoder as
model.py at the tiny CPU shapes of loop_shapes.CPU, for the CI dry run of `magpie optimize -c examples/loop/optimize_cpu.yaml`.

Profiling writes a PyTorch-profiler-like Chrome trace (.pt.trace.json.gz): per engine step a
user_annotation, per op launch a cpu_op + cudaLaunchKernel + "kernel" event (linked by
correlation / External id) timed on the host clock. Pluggable ops record under the Triton
kernel names they stand for (kernels_numpy.py); matmuls as "numpy_blas_sgemm", prefill attention as
"numpy_attention" (names that map to no file of examples/loop); decode attention is the
pluggable `attention` op.
"""
import contextlib
import gzip
import hashlib
import json
import os
import time

import numpy as np

import kernels_numpy


class _Trace:
    def __init__(self):
        self.events, self.t0, self.n = [], time.perf_counter_ns(), 0
        self.pid = os.getpid()

    def _us(self, ns):
        return (ns - self.t0) / 1000.0

    @contextlib.contextmanager
    def kernel(self, name):
        t0 = time.perf_counter_ns()
        yield
        t1 = time.perf_counter_ns()
        self.n += 1
        ts, dur = self._us(t0), max((t1 - t0) / 1000.0, 0.001)
        ev = {"ph": "X", "pid": self.pid, "tid": 1}
        self.events.append(dict(ev, cat="cpu_op", name="loop::" + name, ts=ts, dur=dur, args={"External id": self.n}))
        self.events.append(dict(ev, cat="cuda_runtime", name="cudaLaunchKernel", ts=ts, dur=min(dur, 1.0),
                                args={"correlation": self.n, "External id": self.n}))
        self.events.append({"ph": "X", "pid": 0, "tid": 7, "cat": "kernel", "name": name, "ts": ts, "dur": dur,
                            "args": {"correlation": self.n, "External id": self.n, "device": 0, "stream": 7}})

    @contextlib.contextmanager
    def annotation(self, name):
        t0 = time.perf_counter_ns()
        yield
        t1 = time.perf_counter_ns()
        self.events.append({"ph": "X", "pid": self.pid, "tid": 1, "cat": "user_annotation", "name": name,
                            "ts": self._us(t0), "dur": (t1 - t0) / 1000.0})

    def write(self, path):
        doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "numpy CPU simulation"}],
               "traceEvents": self.events}
        with gzip.open(path + ".tmp", "wt", compresslevel=3) as f:
            json.dump(doc, f)
        os.replace(path + ".tmp", path)


class NumpyBackend:
    def __init__(self, cfg, kernels, max_slots=64, max_len=1024):
        self.cfg, self.ops = cfg, kernels
        self.max_slots, self.max_len = max_slots, max_len
        rng = np.random.default_rng(0)
        H, I, V = cfg["hidden"], cfg["intermediate"], cfg["vocab"]
        nh, nkv, hd = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
        self.nh, self.nkv, self.hd = nh, nkv, hd

        def w(*shape, scale=1.0, offset=0.0):
            return (offset + scale * rng.standard_normal(shape)).astype(np.float32)
        self.embed = w(V, H)
        self.layers = [dict(ln1=w(H, scale=0.1, offset=1.0), wqkv=w((nh + 2 * nkv) * hd, H, scale=H ** -0.5),
                            wo=w(H, nh * hd, scale=(nh * hd) ** -0.5), ln2=w(H, scale=0.1, offset=1.0),
                            wgu=w(2 * I, H, scale=H ** -0.5), wd=w(H, I, scale=I ** -0.5))
                       for _ in range(cfg["layers"])]
        self.norm = w(H, scale=0.1, offset=1.0)
        self.lm_head = w(V, H, scale=H ** -0.5)
        self.cos_sin = kernels_numpy.rope_cache(cfg["max_pos"], hd, cfg["rope_theta"])
        self.k_cache = [np.zeros((max_slots, max_len, nkv, hd), np.float32) for _ in self.layers]
        self.v_cache = [np.zeros((max_slots, max_len, nkv, hd), np.float32) for _ in self.layers]
        h = hashlib.sha256()
        for t in [self.embed, self.norm, self.lm_head] + [v for l in self.layers for v in l.values()]:
            h.update(t.tobytes())
        self.weights_sha256 = h.hexdigest()
        self._trace = None

    def _k(self, name):
        return self._trace.kernel(name) if self._trace is not None else contextlib.nullcontext()

    def _linear(self, x, w):
        with self._k("numpy_blas_sgemm"):
            return x @ w.T

    def _layers(self, x, positions, attend):
        eps = self.cfg["eps"]
        nh, nkv, hd = self.nh, self.nkv, self.hd
        for li, L in enumerate(self.layers):
            h = self.ops["rms_norm"](x, L["ln1"], eps)
            qkv = self._linear(h, L["wqkv"])
            t = qkv.shape[0]
            q = qkv[:, :nh * hd].reshape(t, nh, hd)
            k = qkv[:, nh * hd:(nh + nkv) * hd].reshape(t, nkv, hd)
            v = qkv[:, (nh + nkv) * hd:].reshape(t, nkv, hd)
            q, k = self.ops["rotary"](q, k, self.cos_sin, positions)
            a = attend(li, q, k, v)
            x = x + self._linear(a, L["wo"])
            h = self.ops["rms_norm"](x, L["ln2"], eps)
            x = x + self._linear(self.ops["silu_mul"](self._linear(h, L["wgu"])), L["wd"])
        return self.ops["rms_norm"](x, self.norm, eps)

    def _sample(self, h):
        return [int(t) for t in np.argmax(self._linear(h, self.lm_head), axis=-1)]

    @staticmethod
    def _softmax_attn(q, k, v, mask):
        s = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])
        s = np.where(mask, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        return np.einsum("bhqk,bhkd->bhqd", s, v)

    def prefill(self, slots, prompts):
        V = self.cfg["vocab"]
        toks = np.array([t % V for p in prompts for t in p], dtype=np.int64)
        positions = np.concatenate([np.arange(len(p)) for p in prompts])
        offs, o = [], 0
        for p in prompts:
            offs.append((o, len(p)))
            o += len(p)
        g = self.nh // self.nkv

        def attend(li, q, k, v):
            with self._k("numpy_attention"):
                return prefill_attend(li, q, k, v)

        def prefill_attend(li, q, k, v):
            outs = []
            for s, (o, n) in zip(slots, offs):
                self.k_cache[li][s, :n] = k[o:o + n]
                self.v_cache[li][s, :n] = v[o:o + n]
                qi = q[o:o + n].transpose(1, 0, 2)[None]
                ki = np.repeat(k[o:o + n], g, axis=1).transpose(1, 0, 2)[None]
                vi = np.repeat(v[o:o + n], g, axis=1).transpose(1, 0, 2)[None]
                mask = np.tril(np.ones((n, n), dtype=bool))[None, None]
                outs.append(self._softmax_attn(qi, ki, vi, mask)[0].transpose(1, 0, 2).reshape(n, -1))
            return np.concatenate(outs)
        h = self._layers(self.embed[toks], positions, attend)
        return self._sample(h[[o + n - 1 for o, n in offs]])

    def decode(self, slots, last_tokens, positions):
        V = self.cfg["vocab"]
        toks = np.array([t % V for t in last_tokens], dtype=np.int64)
        pos = np.array(positions, dtype=np.int64)
        sl = np.array(slots, dtype=np.int64)

        def attend(li, q, k, v):
            self.k_cache[li][sl, pos] = k
            self.v_cache[li][sl, pos] = v
            return self.ops["attention"](q, self.k_cache[li], self.v_cache[li], sl, pos + 1).reshape(len(slots), -1)
        return self._sample(self._layers(self.embed[toks], pos, attend))

    def annotate(self, name):
        return self._trace.annotation(name) if self._trace is not None else contextlib.nullcontext()

    def start_profile(self):
        if self._trace is not None:
            return False
        self._trace = _Trace()
        kernels_numpy.RECORDER = self._trace.kernel
        return True

    def stop_profile(self, trace_dir):
        if self._trace is None:
            return None
        tr, self._trace = self._trace, None
        kernels_numpy.RECORDER = None
        os.makedirs(trace_dir, exist_ok=True)
        path = os.path.join(trace_dir, "loop_model-rank-0.%d.pt.trace.json.gz" % int(time.time() * 1000))
        tr.write(path)
        return path

    def warmup(self):
        self.prefill([0], [[1] * 9])
        self.decode([0], [2], [9])

    def describe(self):
        return {"numpy": np.__version__, "device": "cpu"}
