"""Tensor classification, host copies and .npy files, for numpy arrays and torch tensors.

Neither numpy nor torch is imported here: a value can only be a numpy array or a torch tensor
if the user's module imported that library already, so `sys.modules` is the source of truth.
"""
import ctypes
import json
import os
import re
import struct
import sys
import tempfile

from magpie_bench import BenchError

# Protocol dtype names (docs/harness-protocol.md) → .npy descr of the stored data.
# bfloat16 has no NumPy descr; it is stored as '<u2' and the manifest says what it is.
NPY_DESCR = {
    "float16": "<f2", "bfloat16": "<u2", "float32": "<f4", "float64": "<f8",
    "int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
    "uint8": "|u1", "uint16": "<u2", "uint32": "<u4", "uint64": "<u8", "bool": "|b1",
}


def _torch():
    return sys.modules.get("torch")


def _numpy():
    return sys.modules.get("numpy")


def is_torch_tensor(x):
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def is_numpy_array(x):
    n = _numpy()
    return n is not None and isinstance(x, n.ndarray)


def is_numpy_scalar(x):
    n = _numpy()
    return n is not None and isinstance(x, n.generic)


def is_tensor(x):
    """A torch tensor or a numpy ndarray (what the harness saves as .npy)."""
    return is_torch_tensor(x) or is_numpy_array(x)


def is_scalar(x):
    """A plain number or bool (listed under "scalars" in the manifest)."""
    return isinstance(x, (bool, int, float)) or is_numpy_scalar(x)


def scalar_value(x):
    """JSON-serialisable value of a scalar (numpy scalars become Python numbers)."""
    if is_numpy_scalar(x):
        x = x.item()
    if isinstance(x, float) and (x != x or x in (float("inf"), float("-inf"))):
        return repr(x)
    return x


def dtype_name(x):
    """Protocol dtype name of a tensor; BenchError for dtypes the protocol cannot carry."""
    if is_torch_tensor(x):
        name = str(x.dtype).replace("torch.", "")
        name = {"half": "float16", "float": "float32", "double": "float64"}.get(name, name)
    else:
        name = x.dtype.name
    if name not in NPY_DESCR:
        raise BenchError("tensor dtype %s is not supported by the protocol (supported: %s)"
                         % (name, " ".join(NPY_DESCR)))
    return name


def shape_of(x):
    return [int(d) for d in x.shape]


def safe_name(name):
    """A name usable inside a file name: [A-Za-z0-9_.-], never empty."""
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", str(name))
    return s or "_"


class HostTensor:
    """A host-side, C-ordered, little-endian copy of one tensor, ready to be written as .npy.

    `array` is a numpy array when numpy is importable; otherwise `raw` holds the bytes."""

    def __init__(self, dtype, shape, array=None, raw=None):
        self.dtype = dtype
        self.shape = shape
        self.array = array
        self.raw = raw

    def save(self, path):
        if self.array is not None:
            _numpy().save(path, self.array, allow_pickle=False)
        else:
            write_npy_raw(path, NPY_DESCR[self.dtype], self.shape, self.raw)


def host_copy(x):
    """HostTensor of a torch tensor (any device) or numpy array. Device tensors are copied
    to the host (a device synchronisation); the result is written before the kernel runs
    again, so it may share memory with a CPU input."""
    name = dtype_name(x)
    shape = shape_of(x)
    if is_torch_tensor(x):
        torch = _torch()
        c = x.detach().to("cpu").contiguous()
        if name == "bfloat16":
            c = c.view(torch.int16)
        np = _numpy()
        if np is None:
            nbytes = c.numel() * c.element_size()
            raw = ctypes.string_at(c.data_ptr(), nbytes) if nbytes else b""
            return HostTensor(name, shape, raw=raw)
        arr = c.numpy()
        if name == "bfloat16":
            arr = arr.view(np.uint16)
        return HostTensor(name, shape, array=arr)
    np = _numpy()
    arr = x
    if name == "bfloat16":  # ml_dtypes.bfloat16
        arr = arr.view(np.uint16)
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    return HostTensor(name, shape, array=np.ascontiguousarray(arr))


def write_npy_raw(path, descr, shape, raw):
    """Writes a format-1.0 .npy file from raw C-ordered little-endian bytes."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * (pad % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(raw)


def write_json_atomic(path, value):
    """Writes `value` as JSON to `path` through a temp file in the same directory + rename."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".manifest.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(value, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _shares_memory(a, b):
    if is_torch_tensor(a) and is_torch_tensor(b):
        try:
            return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
        except (RuntimeError, AttributeError):
            return a.data_ptr() == b.data_ptr()
    if is_numpy_array(a) and is_numpy_array(b):
        return bool(_numpy().may_share_memory(a, b))
    return False


def poison(outputs, protected):
    """Fills every tensor of `outputs` with the poison pattern (NaN for floats, all bits set
    for integers) unless it shares memory with a tensor of `protected` (the inputs) or cannot
    be written. Returns how many tensors were poisoned. Called right before a checked launch,
    so an output that the launch does not write again shows up as wrong."""
    count = 0
    for t in outputs:
        if not is_tensor(t) or any(_shares_memory(t, p) for p in protected):
            continue
        try:
            if is_torch_tensor(t):
                if t.is_floating_point():
                    t.fill_(float("nan"))
                elif t.dtype != _torch().bool:
                    t.fill_(-1 if t.dtype.is_signed else _max_of(t))
                else:
                    t.fill_(True)
            else:
                np = _numpy()
                if not t.flags.writeable:
                    continue
                if np.issubdtype(t.dtype, np.floating):
                    t.fill(np.nan)
                elif t.dtype == np.bool_:
                    t.fill(True)
                else:
                    t.fill(np.iinfo(t.dtype).max if t.dtype.kind == "u" else -1)
            count += 1
        except (RuntimeError, ValueError, TypeError):
            continue
    return count


def _max_of(t):
    return _torch().iinfo(t.dtype).max
