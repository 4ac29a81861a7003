#!/usr/bin/env python3
"""rss_run.py OUT CMD...: runs CMD and writes "<max RSS KiB> <wall seconds> <exit code>" of it to
OUT (exit code 128 + N when killed by signal N), then exits with that code. CMD gets SIGTERM
when this process dies (PR_SET_PDEATHSIG), so a killed test leaves nothing running."""
import ctypes
import resource
import signal
import subprocess
import sys
import time


def die_with_parent():
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
rc = subprocess.call(cmd, preexec_fn=die_with_parent)
wall = time.monotonic() - t0
rc = rc if rc >= 0 else 128 - rc
with open(out, "w") as f:
    f.write("%d %.2f %d\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, wall, rc))
sys.exit(rc)
