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
    new_shapes (optional int)            prefill attention shapes first used so far (model.py)

Step timing: every step is timed on the engine thread (the backends return host lists, so a
step's wall time includes its GPU work). A burst is the steps from the first step after the
engine was idle up to the next time it has nothing to run (one benchmark run, one warm-up pass);
each burst's summary (burst_summary) is printed to stderr as one "engine: burst" line and the
last 64 are kept for GET /loop_stats. It tells where a slow run's time went: prefill or decode,
and prefill steps that used a new attention shape.
"""
import queue
import sys
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
        self.bursts = []          # the last 64 burst summaries (burst_summary), oldest first
        self._burst = None        # the burst in progress: its raw step records
        self._dropped_bursts = 0
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
            kind = "prefill" if admit else "decode" if self._running else ""
            if not kind:
                continue
            shapes0 = getattr(self.backend, "new_shapes", 0)
            t0 = time.perf_counter()
            rows = len(admit) if admit else len(self._running)
            tokens = sum(len(r.prompt) for r in admit) if admit else rows
            try:
                if admit:
                    self._prefill(admit)
                else:
                    self._decode()
            except Exception as e:  # a failed step fails its requests, the server keeps running
                for r in admit + self._running:
                    r.out.put(("error", "engine step failed: %s" % e))
                    self._release(r)
                self._running = []
            self._record_step(kind, time.perf_counter() - t0, rows, tokens, getattr(self.backend, "new_shapes", 0) - shapes0)

    def _record_step(self, kind, secs, rows, tokens, new_shapes):
        """Adds a step to the burst in progress; closes the burst when nothing is left to run."""
        if self._burst is None:
            self._burst = {"t0": time.time() - secs, "steps": []}
        self._burst["steps"].append((kind, secs, rows, tokens, new_shapes))
        with self._cv:
            idle = not self._waiting and not self._running
        if not idle:
            return
        b = burst_summary(len(self.bursts) + self._dropped_bursts, self._burst["t0"], time.time(), self._burst["steps"])
        self._burst = None
        self.bursts.append(b)
        if len(self.bursts) > 64:
            self.bursts.pop(0)
            self._dropped_bursts += 1
        print("engine: burst %(index)d: %(requests)d req %(wall_s).2f s | prefill %(prefill_steps)d steps %(prefill_s).3f s "
              "%(prefill_tokens)d tok, %(new_shapes)d new attention shapes in %(new_shape_steps)d steps %(new_shape_s).3f s | "
              "decode %(decode_steps)d steps %(decode_s).3f s, median %(decode_ms_median).2f ms, p90 %(decode_ms_p90).2f ms | "
              "longest %(longest_ms).1f ms %(longest_kind)s" % b, file=sys.stderr, flush=True)

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


def burst_summary(index, t_start, t_end, steps):
    """One burst's summary: steps are (kind, seconds, rows, tokens, new_shapes) in order; times in
    s (totals) and ms (per step); a prefill's rows are its requests."""
    pre = [s for s in steps if s[0] == "prefill"]
    dec = sorted(s[1] for s in steps if s[0] == "decode")
    new = [s for s in pre if s[4] > 0]
    longest = max(steps, key=lambda s: s[1])

    def pct(xs, q):
        return xs[min(len(xs) - 1, int(q * len(xs)))] * 1e3 if xs else 0.0
    return {"index": index, "start_unix": round(t_start, 3), "wall_s": round(t_end - t_start, 4),
            "requests": sum(s[2] for s in pre), "prefill_steps": len(pre), "prefill_tokens": sum(s[3] for s in pre),
            "prefill_s": round(sum(s[1] for s in pre), 4), "new_shape_steps": len(new),
            "new_shapes": sum(s[4] for s in new), "new_shape_s": round(sum(s[1] for s in new), 4),
            "decode_steps": len(dec), "decode_s": round(sum(dec), 4), "decode_ms_median": round(pct(dec, 0.5), 3),
            "decode_ms_p90": round(pct(dec, 0.9), 3), "longest_ms": round(longest[1] * 1e3, 2),
            "longest_kind": longest[0]}


def wait_ready(engine, timeout=5.0):
    t0 = time.time()
    while not engine.thread.is_alive() and time.time() - t0 < timeout:
        time.sleep(0.01)
    return engine.thread.is_alive()
