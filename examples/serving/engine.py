"""Continuous-batching engine of the example server, backend-agnostic.

One engine thread owns the model. Each iteration it (1) runs pending profiler commands,
(2) admits waiting requests up to max_batch, prefilling each (its first token is emitted at
once), (3) runs one batched decode step over every running request. Tokens go back to the
HTTP layer through each request's `emit(token_id, finished)` callback (called on the engine
thread). Greedy decoding; a request ends at max_tokens (the random model has no EOS).
"""
import queue
import threading
import time
from concurrent.futures import Future


class GenRequest:
    def __init__(self, prompt_ids, max_tokens, emit):
        self.prompt_ids = list(prompt_ids)
        self.max_tokens = max(1, int(max_tokens))
        self.emit = emit
        self.generated = 0
        self.slot = -1
        self.last_token = 0
        self.position = 0  # next cache position to write
        self.cancelled = False


class Engine:
    def __init__(self, backend, max_batch, max_model_len, profiler=None):
        self.backend = backend
        self.max_batch = max_batch
        self.max_model_len = max_model_len
        self.profiler = profiler
        self._waiting = queue.Queue()
        self._commands = queue.Queue()
        self._running = []
        self._free_slots = list(range(max_batch))
        self._wake = threading.Event()
        self._stop = False
        self.steps = 0
        self._thread = threading.Thread(target=self._loop, name="engine", daemon=True)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop = True
        self._wake.set()
        self._thread.join(timeout=10)

    def submit(self, req):
        """Thread-safe. Raises ValueError when the request cannot fit the context."""
        if len(req.prompt_ids) + req.max_tokens > self.max_model_len:
            raise ValueError(f"prompt ({len(req.prompt_ids)}) + max_tokens ({req.max_tokens}) exceeds max_model_len "
                             f"({self.max_model_len})")
        if not req.prompt_ids:
            raise ValueError("empty prompt")
        self._waiting.put(req)
        self._wake.set()

    def command(self, fn):
        """Runs fn() on the engine thread between steps; returns a Future of its result."""
        fut = Future()
        self._commands.put((fn, fut))
        self._wake.set()
        return fut

    def _loop(self):
        while not self._stop:
            self._run_commands()
            admitted = self._admit()
            if self._running:
                self._decode()
            elif not admitted:
                self._wake.wait(0.05)
                self._wake.clear()

    def _run_commands(self):
        while True:
            try:
                fn, fut = self._commands.get_nowait()
            except queue.Empty:
                return
            try:
                fut.set_result(fn())
            except Exception as e:  # reported to the HTTP caller
                fut.set_exception(e)

    def _finish(self, req):
        self._running.remove(req)
        self._free_slots.append(req.slot)

    def _admit(self):
        n = 0
        while self._free_slots and not self._waiting.empty():
            req = self._waiting.get_nowait()
            if req.cancelled:
                continue
            req.slot = self._free_slots.pop()
            with self._annotate(f"execute_{len(req.prompt_ids)}_context_1(sq{len(req.prompt_ids)}sk{len(req.prompt_ids)}"
                                f"sqsq{len(req.prompt_ids) ** 2}sqsk{len(req.prompt_ids) ** 2})_generation_0(sq0sk0sqsq0sqsk0)"):
                tok = self.backend.prefill(req.slot, req.prompt_ids)
            self.steps += 1
            req.position = len(req.prompt_ids)
            self._running.append(req)
            self._emit(req, tok)
            n += 1
        return n

    def _decode(self):
        batch = [r for r in self._running if not r.cancelled]
        for r in [r for r in self._running if r.cancelled]:
            self._finish(r)
        if not batch:
            return
        sk = sum(r.position + 1 for r in batch)
        b = len(batch)
        with self._annotate(f"execute_{b}_context_0(sq0sk0sqsq0sqsk0)_generation_{b}(sq{b}sk{sk}sqsq{b}sqsk{sk})"):
            toks = self.backend.decode([r.slot for r in batch], [r.last_token for r in batch], [r.position for r in batch])
        self.steps += 1
        for r, t in zip(batch, toks):
            r.position += 1
            self._emit(r, t)

    def _emit(self, req, tok):
        req.generated += 1
        req.last_token = tok
        finished = req.generated >= req.max_tokens
        if finished:
            self._finish(req)
        req.emit(tok, finished)

    def _annotate(self, name):
        return self.profiler.annotate(name) if self.profiler else _null()


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class FakeBackend:
    """No model: sleeps like a small GPU model would (prefill speed, fixed decode step) and
    returns deterministic token ids. For testing the HTTP layer where torch is absent."""

    def __init__(self, vocab=32000, prefill_tokens_per_s=200000.0, decode_step_s=0.004):
        self.vocab = vocab
        self.prefill_tps = prefill_tokens_per_s
        self.step_s = decode_step_s
        self.device = "none"

    def prefill(self, slot, ids):
        time.sleep(len(ids) / self.prefill_tps)
        return (sum(ids) + slot) % self.vocab

    def decode(self, slots, tokens, positions):
        time.sleep(self.step_s)
        return [(t * 31 + p) % self.vocab for t, p in zip(tokens, positions)]
