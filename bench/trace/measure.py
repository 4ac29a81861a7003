#!/usr/bin/env python3
"""Runs a command and writes "wall_s user_s sys_s maxrss_kb" to FILE (as GNU time -f "%e %U %S %M").

For machines without /usr/bin/time. Usage: measure.py FILE CMD... (exit code: the command's).
The peak RSS counts the forked Python before exec (about 14 MB here), so it reads high for a
command that stays below that; GNU time's own fork is smaller.
"""
import os
import subprocess
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
child = subprocess.Popen(cmd)
_, status, ru = os.wait4(child.pid, 0)  # that child's own usage (Linux: ru_maxrss in KiB)
wall = time.monotonic() - t0
rc = os.waitstatus_to_exitcode(status)
with open(out, "w") as f:
    f.write("%.3f %.3f %.3f %d\n" % (wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss))
sys.exit(rc if rc >= 0 else 128 - rc)  # a signal as the shell reports it
