"""Timing mode: the harness side of the control-channel conversation (docs/harness-protocol.md).

The supervisor owns the policy (how many warm-ups and samples, when to stop) and every
statistic; this file only launches the kernel and reports raw nanoseconds per sample.
One sample on CUDA: [L2 flush] → [calibrated torch.cuda._sleep so the queued launches start
together: launch overhead excluded] → magpie_cupti_begin(id) → start event → `batch` launches
(or one CUDA-graph replay of them) → stop event → synchronize → magpie_cupti_end(id).
On the CPU: [host-cache flush] → perf_counter_ns → `batch` calls → perf_counter_ns.
"""
import ctypes
import io
import json
import math
import os
import sys
import time
import traceback

from magpie_bench import HARNESS, PROTOCOL, BenchError
from magpie_bench.device import env_int
from magpie_bench.modes import log, make_flush, timed_size_index
from magpie_bench.program import one_line

SLEEP_MIN_NS = 20_000        # shortest blocking delay queued before a sample
SLEEP_MAX_NS = 50_000_000    # longest one (a kernel whose enqueue blocks the host)


class CuptiMarks:
    """magpie_cupti_begin/end(uint64) of the injection library named by MAGPIE_CUPTI_LIB."""

    def __init__(self, path):
        try:
            lib = ctypes.CDLL(path)
            self.begin = lib.magpie_cupti_begin
            self.end = lib.magpie_cupti_end
        except (OSError, AttributeError) as e:
            raise BenchError("MAGPIE_CUPTI_LIB=%s: cannot use it: %s" % (path, e)) from e
        for f in (self.begin, self.end):
            f.argtypes = [ctypes.c_uint64]
            f.restype = None
        self.flush = getattr(lib, "magpie_cupti_flush", None)  # optional export
        if self.flush is not None:
            self.flush.argtypes = []
            self.flush.restype = None


class HostTimer:
    """perf_counter_ns around `batch` calls (timer "host_clock")."""
    name = "host_clock"
    blocking = False
    graph = None

    def __init__(self, launch, batch, flush):
        self.launch, self.batch, self.flush = launch, batch, flush

    def _run(self, n):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            self.launch()
        return time.perf_counter_ns() - t0

    def warmup(self, n):
        return self._run(n) if n > 0 else 0

    def sample(self, sample_id):
        if self.flush is not None:
            self.flush()
        return self._run(self.batch)


class CudaTimer:
    """torch.cuda events around `batch` launches on the current stream (timer "torch_events")."""
    name = "torch_events"

    def __init__(self, device, launch, batch, flush, use_graph):
        self.torch = device.torch
        self.device = device
        self.batch, self.flush = batch, flush
        self.launch = launch
        self.graph = None
        if use_graph:
            self.graph = self._capture(launch, batch)
        self.start = self.torch.cuda.Event(enable_timing=True)
        self.stop = self.torch.cuda.Event(enable_timing=True)
        self.sleep_cycles = self._calibrate_sleep()
        self.blocking = self.sleep_cycles is not None
        self.cupti = None

    def _capture(self, launch, batch):
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                launch()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(batch):
                launch()
        self.device.synchronize()
        return graph

    def _calibrate_sleep(self):
        """Cycles of torch.cuda._sleep that cover 2× the host's enqueue time of one sample;
        None when torch has no _sleep."""
        torch = self.torch
        if not hasattr(torch.cuda, "_sleep"):
            return None
        cycles = 1_000_000
        torch.cuda._sleep(cycles)
        self.start.record()
        torch.cuda._sleep(cycles)
        self.stop.record()
        self.device.synchronize()
        cycles_per_ns = cycles / max(self.start.elapsed_time(self.stop) * 1e6, 1.0)
        t0 = time.perf_counter_ns()
        self._launch_batch()
        enqueue_ns = time.perf_counter_ns() - t0
        self.device.synchronize()
        delay = min(max(2 * enqueue_ns + SLEEP_MIN_NS, SLEEP_MIN_NS), SLEEP_MAX_NS)
        return max(1, int(delay * cycles_per_ns))

    def _launch_batch(self):
        if self.graph is not None:
            self.graph.replay()
        else:
            for _ in range(self.batch):
                self.launch()

    def _elapsed_ns(self):
        return int(round(self.start.elapsed_time(self.stop) * 1e6))

    def warmup(self, n):
        """n launches (graph mode: ceil(n / batch) replays); their total event time."""
        if n <= 0:
            return 0
        self.start.record()
        if self.graph is not None:
            for _ in range(math.ceil(n / self.batch)):
                self.graph.replay()
        else:
            for _ in range(n):
                self.launch()
        self.stop.record()
        self.device.synchronize()
        return self._elapsed_ns()

    def sample(self, sample_id):
        if self.flush is not None:
            self.flush()
        if self.sleep_cycles is not None:
            self.torch.cuda._sleep(self.sleep_cycles)
        if self.cupti is not None:
            self.cupti.begin(sample_id)
        self.start.record()
        self._launch_batch()
        self.stop.record()
        self.device.synchronize()
        if self.cupti is not None:
            self.cupti.end(sample_id)
        return self._elapsed_ns()


class Channel:
    """The control channel: commands in on MAGPIE_BENCH_CTRL_IN (fd 3), replies out on
    MAGPIE_BENCH_CTRL_OUT (fd 4), one line each, flushed after every line."""

    def __init__(self):
        fd_in = env_int("MAGPIE_BENCH_CTRL_IN", 3)
        fd_out = env_int("MAGPIE_BENCH_CTRL_OUT", 4)
        try:
            os.fstat(fd_in)
            os.fstat(fd_out)
        except OSError as e:
            raise BenchError("timing mode needs the control channel on fds %d/%d: %s"
                             % (fd_in, fd_out, e)) from e
        self.inp = io.open(fd_in, "r", encoding="utf-8", closefd=False)
        self.out = io.open(fd_out, "w", encoding="utf-8", closefd=False)

    def send(self, line):
        self.out.write(line + "\n")
        self.out.flush()

    def receive(self):
        """Next non-empty command as a list of fields; None at end of file."""
        while True:
            line = self.inp.readline()
            if not line:
                return None
            if line.strip():
                return line.split()


def open_channel_for_error():
    """The control channel if it is usable, else None (for reporting a setup failure)."""
    try:
        return Channel()
    except BenchError:
        return None


def send_error(channel, message):
    if channel is not None:
        try:
            channel.send("error " + " ".join(str(message).split()))
        except OSError:
            pass


def _prepare(program, device):
    """Inputs of the timed size, one untimed launch (JIT compilation), the timer."""
    size_index = timed_size_index(program)
    inputs = program.make_inputs(size_index, env_int("MAGPIE_BENCH_SEED", 0), device)
    batch = env_int("MAGPIE_BENCH_BATCH", 1)
    if batch < 1:
        raise BenchError("MAGPIE_BENCH_BATCH=%d must be at least 1" % batch)
    launch = lambda: program.call(inputs)  # noqa: E731
    launch()  # Triton JIT / cuBLAS heuristics / lazy init: never inside a sample
    device.synchronize()
    flush = make_flush(device, os.environ.get("MAGPIE_BENCH_COLD") == "1")
    use_graph = os.environ.get("MAGPIE_BENCH_GRAPH") == "1"
    if device.is_cuda:
        timer = CudaTimer(device, launch, batch, flush, use_graph)
        if os.environ.get("MAGPIE_CUPTI_LIB"):
            timer.cupti = CuptiMarks(os.environ["MAGPIE_CUPTI_LIB"])
    else:
        if use_graph:
            log("MAGPIE_BENCH_GRAPH=1 ignored: CUDA graphs need a CUDA device")
        timer = HostTimer(launch, batch, flush)
    label = program.size_label(size_index) or inputs.shapes_label()
    ready = {"harness": HARNESS, "protocol": PROTOCOL, "kernel": program.kernel,
             "entry": program.entry_name, "device": device.description(), "timer": timer.name,
             "l2_bytes": device.cache_bytes(), "flush_bytes": flush.nbytes if flush else 0,
             "size": label, "size_index": size_index, "batch": batch,
             "blocking_kernel": bool(timer.blocking), "graph": timer.graph is not None,
             "cupti": bool(getattr(timer, "cupti", None)), "framework": program.framework()}
    return timer, ready


def _serve(channel, timer, device):
    while True:
        cmd = channel.receive()
        if cmd is None:
            raise BenchError("control channel closed without 'stop'")
        if cmd[0] == "stop" and len(cmd) == 1:
            device.synchronize()
            cupti = getattr(timer, "cupti", None)
            if cupti is not None and cupti.flush is not None:
                cupti.flush()
            return 0
        if cmd[0] not in ("warmup", "sample") or len(cmd) != 2 or not cmd[1].isdigit():
            raise BenchError("bad command %r (expected: warmup <n> | sample <id> | stop)"
                             % " ".join(cmd))
        value = int(cmd[1])
        if cmd[0] == "warmup":
            channel.send("ok %d" % timer.warmup(value))
        else:
            if value >= 1 << 64:
                raise BenchError("sample id %d does not fit in 64 bits" % value)
            channel.send("sample %d %d" % (value, timer.sample(value)))


def run_timing(program, device, channel):
    """Serves one timing conversation on `channel`. 0 after `stop`; 1 after an `error` line."""
    try:
        timer, ready = _prepare(program, device)
        channel.send("ready " + json.dumps(ready, separators=(",", ":")))
        return _serve(channel, timer, device)
    except Exception as e:
        if not isinstance(e, BenchError):
            traceback.print_exc(file=sys.stderr)
        message = one_line(e) if not isinstance(e, BenchError) else str(e)
        log("timing: %s", message)
        send_error(channel, message)
        return 1
