"""The device a kernel runs on: `cuda:<MAGPIE_BENCH_DEVICE>` (through torch) or the host CPU.

torch is imported only when the user's module imported it or `--device cuda` was asked for."""
import ctypes
import glob
import importlib
import os
import random
import sys

from magpie_bench import BenchError
from magpie_bench.tensors import is_torch_tensor

HOST_FLUSH_FALLBACK = 64 << 20   # bytes, when the host LLC size is unknown
CUDA_FLUSH_FALLBACK = 256 << 20  # bytes, when the device L2 size is unknown


def seed_all(seed):
    """Seeds Python's `random`, numpy's global generator (seed mod 2**32) and torch (CPU and
    every CUDA device), each only if the user's code imported it. `seed` is an unsigned 64-bit
    integer."""
    seed = int(seed)
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(seed % (1 << 32))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


class Device:
    """kind is "cuda" or "cpu"; `torch_device` is a torch.device when torch is in use."""

    def __init__(self, kind, index=0):
        self.kind = kind
        self.index = index
        self.torch = sys.modules.get("torch")
        self.torch_device = None
        if self.torch is not None:
            self.torch_device = self.torch.device("cuda", index) if kind == "cuda" else \
                self.torch.device("cpu")
        if kind == "cuda":
            self.torch.cuda.set_device(index)

    @property
    def is_cuda(self):
        return self.kind == "cuda"

    def description(self):
        """"cuda:0 NVIDIA H200" or "cpu" (the manifest's and ready line's `device`)."""
        if self.is_cuda:
            return "cuda:%d %s" % (self.index, self.torch.cuda.get_device_name(self.index))
        return "cpu"

    def synchronize(self):
        if self.is_cuda:
            self.torch.cuda.synchronize(self.index)

    def move(self, value):
        """Moves torch tensors (also inside lists, tuples and dicts) to this device."""
        if is_torch_tensor(value):
            return value.to(self.torch_device) if self.torch_device is not None else value
        if isinstance(value, list):
            return [self.move(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.move(v) for v in value)
        if isinstance(value, dict):
            return {k: self.move(v) for k, v in value.items()}
        return value

    def cache_bytes(self):
        """Size of the last-level cache in bytes (device L2, or host LLC); 0 if unknown."""
        if self.is_cuda:
            props = self.torch.cuda.get_device_properties(self.index)
            return int(getattr(props, "L2_cache_size", 0) or 0)
        return host_llc_bytes()

    def flush_bytes(self):
        """MAGPIE_BENCH_FLUSH_BYTES, or (0 / unset) 2 × the last-level cache with a fallback."""
        configured = env_int("MAGPIE_BENCH_FLUSH_BYTES", 0)
        if configured > 0:
            return configured
        cache = self.cache_bytes()
        if cache > 0:
            return 2 * cache
        return CUDA_FLUSH_FALLBACK if self.is_cuda else HOST_FLUSH_FALLBACK


def resolve_device(requested):
    """requested: "auto", "cuda" or "cpu". auto = cuda when the user's code imported torch and
    a CUDA device is available, else cpu. The index comes from MAGPIE_BENCH_DEVICE."""
    index = env_int("MAGPIE_BENCH_DEVICE", 0)
    if requested == "cpu":
        return Device("cpu")
    if requested == "cuda":
        try:
            torch = importlib.import_module("torch")
        except ImportError as e:
            raise BenchError("--device cuda needs torch, which cannot be imported: %s" % e)
        if not torch.cuda.is_available():
            raise BenchError("--device cuda: torch.cuda.is_available() is False")
        if index >= torch.cuda.device_count():
            raise BenchError("MAGPIE_BENCH_DEVICE=%d but only %d CUDA device(s) are visible"
                             % (index, torch.cuda.device_count()))
        return Device("cuda", index)
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and index < torch.cuda.device_count():
        return Device("cuda", index)
    return Device("cpu")


class HostFlush:
    """Evicts the host caches by writing a buffer of `nbytes` (memset, outside timed regions)."""

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.buffer = bytearray(nbytes)
        self.view = (ctypes.c_char * nbytes).from_buffer(self.buffer)
        self.address = ctypes.addressof(self.view)
        self.value = 0

    def __call__(self):
        self.value ^= 1
        ctypes.memset(self.address, self.value, self.nbytes)


class CudaFlush:
    """Evicts the device L2 by reading a preallocated buffer of `nbytes` on the current stream
    (queued before the timed region; stream order makes it finish first). A read, not a write:
    a zeroing flush leaves the L2 full of dirty lines whose write-back lands in the timed kernel
    (seen on an H200: ~10% slower than ncu, which flushes and invalidates)."""

    def __init__(self, device, nbytes):
        torch = device.torch
        self.nbytes = nbytes
        self.buffer = torch.zeros(max(1, nbytes // 8), dtype=torch.int64, device=device.torch_device)
        self.sink = torch.empty((), dtype=torch.int64, device=device.torch_device)
        self.torch = torch

    def __call__(self):
        self.torch.sum(self.buffer, 0, out=self.sink)


def host_llc_bytes():
    """Largest cache of cpu0 from sysfs (e.g. "36864K"), 0 when unknown."""
    best_level, best_size = -1, 0
    for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            with open(os.path.join(d, "level")) as f:
                level = int(f.read().strip())
            with open(os.path.join(d, "size")) as f:
                text = f.read().strip().upper()
        except (OSError, ValueError):
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if not digits.isdigit():
            continue
        if level > best_level:
            best_level, best_size = level, int(digits) * mult
    return best_size


def env_int(name, default):
    value = os.environ.get(name, "")
    if value == "":
        return default
    try:
        return int(value, 10)
    except ValueError:
        raise BenchError("%s=%r is not an integer" % (name, value))
