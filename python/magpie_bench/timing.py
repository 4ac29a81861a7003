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
import mmap
import os
import sys
import time
import traceback

from magpie_bench import HARNESS, PROTOCOL, BenchError
from magpie_bench.device import env_int
from magpie_bench.modes import log, make_flush, tensors_in, timed_size_index
from magpie_bench.program import Program, flatten_outputs, one_line
from magpie_bench.tensors import host_copy, poison

# The harness's own functions, bound before the kernel's module is imported: a kernel that
# replaces Program.refresh_inputs (to compute while inputs are generated, untimed) or the
# poison / copy helpers changes nothing here.
_make_inputs = Program.make_inputs
_refresh_inputs = Program.refresh_inputs
_call = Program.call
_poison = poison
_host_copy = host_copy
_flatten_outputs = flatten_outputs

# Bound at import, before the kernel's module is loaded: replacing time.perf_counter_ns later
# does not change the harness's clock.
_now_ns = time.perf_counter_ns

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
        t0 = _now_ns()
        for _ in range(n):
            self.launch()
        return _now_ns() - t0

    def warmup(self, n):
        return self._run(n) if n > 0 else 0

    def sample(self, sample_id, flush_inline):
        if flush_inline and self.flush is not None:
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
        t0 = _now_ns()
        self._launch_batch()
        enqueue_ns = _now_ns() - t0
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

    def sample(self, sample_id, flush_inline):
        if flush_inline and self.flush is not None:
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


class Exchange:
    """The supervisor's exchange memory (MAGPIE_BENCH_EXCHANGE, a memfd): sized once from the
    first result's outputs (64-byte aligned), then every sample's outputs are copied into it
    before the reply. The supervisor reads it itself, so nothing here has to be trusted."""

    def __init__(self, fd, outputs):
        self.layout, off = [], 0
        for name, t in outputs:
            h = _host_copy(t)
            n = len(_raw(h))
            off = (off + 63) & ~63
            self.layout.append({"name": name, "dtype": h.dtype, "shape": list(h.shape), "offset": off,
                                "nbytes": n})
            off += n
        self.nbytes = max(off, 64)
        os.ftruncate(fd, self.nbytes)
        self.mm = mmap.mmap(fd, self.nbytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)

    def describe(self):
        return {"bytes": self.nbytes, "outputs": [{k: o[k] for k in ("name", "dtype", "shape", "offset")}
                                                  for o in self.layout]}

    def write(self, outputs):
        if len(outputs) != len(self.layout):
            raise BenchError("the entry returned %d outputs, %d at the first call"
                             % (len(outputs), len(self.layout)))
        for o, (_, t) in zip(self.layout, outputs):
            h = _host_copy(t)
            np = sys.modules.get("numpy")
            if h.array is not None and np is not None:
                # Straight from the array into the mapping: one copy (tobytes() made a second,
                # ~10 ms more per sample for a 64 MB output).
                src = np.ascontiguousarray(h.array).reshape(-1).view(np.uint8)
                n = src.nbytes
            else:
                src = _raw(h)
                n = len(src)
            if n != o["nbytes"]:
                raise BenchError("output %s has %d bytes, %d at the first call" % (o["name"], n, o["nbytes"]))
            if np is not None and h.array is not None:
                np.frombuffer(self.mm, dtype=np.uint8, count=n, offset=o["offset"])[:] = src
            else:
                self.mm[o["offset"]:o["offset"] + n] = src


def _raw(h):
    return h.array.tobytes() if h.array is not None else h.raw


class Session:
    """What one timing conversation holds: the timed size's inputs (refreshed in place by
    `inputs`), the last result (poisoned by `inputs`), the exchange memory."""

    def __init__(self, program, device):
        self.program, self.device = program, device
        self.protocol = env_int("MAGPIE_BENCH_PROTOCOL", 2)
        self.size_index = timed_size_index(program)
        self.inputs = _make_inputs(program, self.size_index, env_int("MAGPIE_BENCH_SEED", 0), device)
        self.batch = env_int("MAGPIE_BENCH_BATCH", 1)
        if self.batch < 1:
            raise BenchError("MAGPIE_BENCH_BATCH=%d must be at least 1" % self.batch)
        self.last = [None]
        self.exchange = None

    def launch(self):
        self.last[0] = _call(self.program, self.inputs)

    def to_exchange(self):
        """Copies the last result's outputs into the exchange memory (inside the sample)."""
        self.device.synchronize()
        self.exchange.write(_flatten_outputs(self.last[0]))


def _prepare(program, device):
    """Inputs of the timed size, one untimed launch (JIT compilation), the timer."""
    session = Session(program, device)
    session.launch()  # Triton JIT / cuBLAS heuristics / lazy init: never inside a sample
    device.synchronize()
    if os.environ.get("MAGPIE_BENCH_EXCHANGE") is None:
        raise BenchError("timing mode needs MAGPIE_BENCH_EXCHANGE (the supervisor's exchange memory)")
    session.exchange = Exchange(env_int("MAGPIE_BENCH_EXCHANGE", 0), _flatten_outputs(session.last[0]))
    flush = make_flush(device, os.environ.get("MAGPIE_BENCH_COLD") == "1")
    use_graph = os.environ.get("MAGPIE_BENCH_GRAPH") == "1"
    if device.is_cuda:
        timer = CudaTimer(device, session.launch, session.batch, flush, use_graph)
        if os.environ.get("MAGPIE_CUPTI_LIB"):
            timer.cupti = CuptiMarks(os.environ["MAGPIE_CUPTI_LIB"])
    else:
        if use_graph:
            log("MAGPIE_BENCH_GRAPH=1 ignored: CUDA graphs need a CUDA device")
        timer = HostTimer(session.launch, session.batch, flush)
    label = program.size_label(session.size_index) or session.inputs.shapes_label()
    ready = {"harness": HARNESS, "protocol": session.protocol, "kernel": program.kernel,
             "entry": program.entry_name, "device": device.description(), "timer": timer.name,
             "l2_bytes": device.cache_bytes(), "flush_bytes": flush.nbytes if flush else 0,
             "size": label, "size_index": session.size_index, "batch": session.batch,
             "blocking_kernel": bool(timer.blocking), "graph": timer.graph is not None,
             "cupti": bool(getattr(timer, "cupti", None)), "framework": program.framework(),
             "repoison": True, "inputs_in_place": True, "exchange": session.exchange.describe(),
             "inputs_from": os.path.abspath(program.inputs_path)}
    return timer, ready, session


def _command(cmd, timer, session):
    """The reply to one command other than stop; BenchError for a malformed one."""
    nums = [int(x) for x in cmd[1:] if x.isdigit()]
    if cmd == ["ping"]:
        return "pong"
    if cmd == ["flush"]:
        t0 = _now_ns()
        if timer.flush is not None:
            timer.flush()
        return "ok %d" % (_now_ns() - t0)
    if cmd[0] == "warmup" and len(cmd) == 2 and len(nums) == 1:
        return "ok %d" % timer.warmup(nums[0])
    if cmd[0] == "inputs" and len(cmd) == 2 and len(nums) == 1:
        t0 = _now_ns()
        _refresh_inputs(session.program, session.inputs, session.size_index, nums[0], session.device)
        # Poisoned here, before the cold flush: the next (checked) launch must write them again.
        _poison(tensors_in(session.last[0]), [t for _, t in session.inputs.tensors])
        session.device.synchronize()
        return "ok %d" % (_now_ns() - t0)
    if cmd[0] == "sample" and len(cmd) == 2 and cmd[1].isdigit():
        if nums[0] >= 1 << 64:
            raise BenchError("sample id %d does not fit in 64 bits" % nums[0])
        ns = timer.sample(nums[0], False)
        session.to_exchange()  # inside the supervisor's clock: it reads them after the reply
        return "sample %d %d" % (nums[0], ns)
    raise BenchError("bad command %r (expected: ping | flush | warmup <n> | inputs <seed> | "
                     "sample <id> | stop)" % " ".join(cmd))


def _serve(channel, timer, device, session):
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
        channel.send(_command(cmd, timer, session))


def run_timing(program, device, channel):
    """Serves one timing conversation on `channel`. 0 after `stop`; 1 after an `error` line."""
    try:
        timer, ready, session = _prepare(program, device)
        channel.send("ready " + json.dumps(ready, separators=(",", ":")))
        return _serve(channel, timer, device, session)
    except Exception as e:
        if not isinstance(e, BenchError):
            traceback.print_exc(file=sys.stderr)
        message = one_line(e) if not isinstance(e, BenchError) else str(e)
        log("timing: %s", message)
        send_error(channel, message)
        return 1
