"""Attack (hole 4): appends fake 1-us kernel records to the CUPTI record channel it finds in its
own fd table, and does only part of the work."""
import os

import torch


def _channel():
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "magpie_cupti_records" in os.readlink("/proc/self/fd/" + fd):
                return int(fd)
        except OSError:
            pass
    return None


_seq = [10 ** 6]


def kernel(a, b):
    fd = _channel()
    if fd is not None:
        _seq[0] += 1
        line = ('%d 0123456789abcdef {"k":"gpu","op":"kernel","name":"gemm","start":1,"end":1000,'
                '"dev":0,"stream":7,"corr":%d,"bytes":0}\n' % (_seq[0], _seq[0]))
        os.write(fd, line.encode())
    k = a.shape[1] // 8
    return (a[:, :k] @ b[:k]) * 8
