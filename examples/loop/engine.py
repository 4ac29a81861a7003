"""Continuous-batching engine of the loop example server (stdlib only).

One engine thread owns the model backend. Each step is either a prefill of waiting requests
(up to max_prefill_tokens prompt tokens, at least one request) or one decode token for every
running request — vLLM's prefill-first policy without mixed steps. Every step runs inside a
vLLM-native step annotation, execute_context_<R>(<tokens>)_generation_<R>(<tokens>), so
`magpie trace stages` can split a profiled trace into prefill / decode.

Backend interface (model.py for torch, model_numpy.py for numpy):
    max_slots, max_len                   capacity (sequences, tokens per sequence)
    prefill(slots, prompts) -> [token]   prompts: lists of token ids, one first token each
    decode(slots, last_tokens, positions) -> [token]
    annotate(name) -> context manager    record_function-style step annotation
    start_profile(); stop_profile(dir) -> path of the written trace
"""
import queue
import threading
import time


class Request:
    def __init__(self, prompt, max_tokens):
        self.prompt = list(prompt)
        self.max_tokens = max_tokens
        self.out = queue.Queue()   # ("token", id) ... then ("done", reason) or ("error", message)
        self.generated = 0
        self.slot = -1
        self.last = 0


class Engine:
    def __init__(self, backend, max_prefill_tokens=4096):
        self.backend = backend
        self.max_prefill_tokens = max_prefill_tokens
        self._waiting = []
        self._running = []
        self._free = list(range(backend.max_slots))
        self._commands = []
        self._cv = threading.Condition()
        self._stop = False
        self.steps = 0
        self.thread = threading.Thread(target=self._loop, name="engine", daemon=True)

    def start(self):
        self.thread.start()

    def stop(self):
        with self._cv:
            self._stop = True
            self._cv.notify_all()

    def submit(self, prompt, max_tokens):
        """Queues a request; raises ValueError when it cannot fit one sequence slot."""
        if not prompt:
            raise ValueError("empty prompt")
        if max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        if len(prompt) + max_tokens > self.backend.max_len:
            raise ValueError("prompt (%d) + max_tokens (%d) exceeds the model length %d"
                             % (len(prompt), max_tokens, self.backend.max_len))
        r = Request(prompt, max_tokens)
        with self._cv:
            self._waiting.append(r)
            self._cv.notify_all()
        return r

    def call(self, fn, timeout=600):
        """Runs fn() on the engine thread between steps (profiler start/stop); returns its result."""
        done = threading.Event()
        box = {}

        def run():
            try:
                box["value"] = fn()
            except Exception as e:  # reported to the HTTP caller
                box["error"] = e
            done.set()
        with self._cv:
            self._commands.append(run)
            self._cv.notify_all()
        if not done.wait(timeout):
            raise TimeoutError("engine command timed out")
        if "error" in box:
            raise box["error"]
        return box.get("value")

    # ---- engine thread
    def _loop(self):
        while True:
            with self._cv:
                while not (self._stop or self._commands or self._running or (self._waiting and self._free)):
                    self._cv.wait()
                if self._stop:
                    break
                commands, self._commands = self._commands, []
                admit = []
                budget = self.max_prefill_tokens
                while self._waiting and self._free and (not admit or len(self._waiting[0].prompt) <= budget):
                    r = self._waiting.pop(0)
                    r.slot = self._free.pop()
                    budget -= len(r.prompt)
                    admit.append(r)
            for c in commands:
                c()
            try:
                if admit:
                    self._prefill(admit)
                elif self._running:
                    self._decode()
            except Exception as e:  # a failed step fails its requests, the server keeps running
                for r in admit + self._running:
                    r.out.put(("error", "engine step failed: %s" % e))
                    self._release(r)
                self._running = []

    def _prefill(self, reqs):
        n = sum(len(r.prompt) for r in reqs)
        name = "execute_context_%d(%d)_generation_0(0)" % (len(reqs), n)
        with self.backend.annotate(name):
            toks = self.backend.prefill([r.slot for r in reqs], [r.prompt for r in reqs])
        self.steps += 1
        for r, t in zip(reqs, toks):
            self._emit(r, t)
            if r.generated < r.max_tokens:
                self._running.append(r)

    def _decode(self):
        rs = self._running
        name = "execute_context_0(0)_generation_%d(%d)" % (len(rs), len(rs))
        pos = [len(r.prompt) + r.generated - 1 for r in rs]
        with self.backend.annotate(name):
            toks = self.backend.decode([r.slot for r in rs], [r.last for r in rs], pos)
        self.steps += 1
        keep = []
        for r, t in zip(rs, toks):
            self._emit(r, t)
            if r.generated < r.max_tokens:
                keep.append(r)
        self._running = keep

    def _emit(self, r, tok):
        r.generated += 1
        r.last = tok
        r.out.put(("token", tok))
        if r.generated >= r.max_tokens:
            r.out.put(("done", "length"))
            self._release(r)

    def _release(self, r):
        if r.slot >= 0:
            with self._cv:
                self._free.append(r.slot)
            r.slot = -1


def wait_ready(engine, timeout=5.0):
    t0 = time.time()
    while not engine.thread.is_alive() and time.time() - t0 < timeout:
        time.sleep(0.01)
    return engine.thread.is_alive()
