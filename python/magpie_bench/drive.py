"""A minimal supervisor for trying a harness by hand (not magpie's policy or statistics).

    python3 -m magpie_bench.drive [--warmup N] [--samples N] [--cold] [--batch N] \
        -- python3 -m magpie_bench --module kernel.py

Runs the command in timing mode with the control channel on fds 3/4, sends `warmup N`, then
N `sample <id>` commands and `stop`, and prints one JSON object on stdout: the ready line's
fields, the warm-up time and every sample's nanoseconds plus their median. Exit status: the
harness's, or 1 when the conversation broke (the harness's `error` line is in "error")."""
import argparse
import fcntl
import json
import os
import statistics
import subprocess
import sys


def converse(cmd, warmup=3, samples=10, env=None, first_id=1, timeout_s=300):
    """Runs `cmd` as a timing-mode harness; returns a dict with ready, warmup_ns, samples_ns,
    error (None or the harness's message), rc, stderr."""
    to_child_r, to_child_w = _high_pipe()
    from_child_r, from_child_w = _high_pipe()
    full_env = dict(os.environ if env is None else env)
    # The exchange memory a supervisor creates (protocol 3): the harness sizes and fills it.
    exchange = os.memfd_create("magpie-exchange", 0)
    exchange_hi = fcntl.fcntl(exchange, fcntl.F_DUPFD, 10)
    os.close(exchange)
    full_env.update({"MAGPIE_BENCH_PROTOCOL": "3", "MAGPIE_BENCH_MODE": "timing",
                     "MAGPIE_BENCH_CTRL_IN": "3", "MAGPIE_BENCH_CTRL_OUT": "4",
                     "MAGPIE_BENCH_EXCHANGE": str(exchange_hi)})
    # The child's ends are ≥ 10, so moving them to 3/4 cannot clobber one another.
    remap = 'exec 3<&%d 4>&%d %d<&- %d>&-; exec "$@"' % (to_child_r, from_child_w,
                                                          to_child_r, from_child_w)
    proc = subprocess.Popen(["/bin/bash", "-c", remap, "bash"] + list(cmd), env=full_env,
                            pass_fds=(to_child_r, from_child_w, exchange_hi), stderr=subprocess.PIPE)
    os.close(exchange_hi)
    os.close(to_child_r)
    os.close(from_child_w)
    out = os.fdopen(to_child_w, "w", buffering=1)
    inp = os.fdopen(from_child_r, "r")
    result = {"ready": None, "warmup_ns": None, "samples_ns": [], "error": None}
    try:
        result.update(_talk(out, inp, warmup, samples, first_id))
    except (BrokenPipeError, ValueError) as e:
        result["error"] = result["error"] or "conversation broke: %s" % e
    finally:
        try:
            out.close()
        except BrokenPipeError:
            pass
    try:
        _, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    inp.close()
    result["rc"] = proc.returncode
    result["stderr"] = err.decode("utf-8", "replace")[-4000:]
    return result


def _high_pipe():
    """A pipe whose two fds are both ≥ 10."""
    r, w = os.pipe()
    hr, hw = fcntl.fcntl(r, fcntl.F_DUPFD, 10), fcntl.fcntl(w, fcntl.F_DUPFD, 10)
    os.close(r)
    os.close(w)
    return hr, hw


def _expect(inp, prefix):
    line = inp.readline()
    if not line:
        raise ValueError("harness closed the channel (expected %r)" % prefix)
    line = line.rstrip("\n")
    if line.startswith("error "):
        raise _HarnessError(line[len("error "):])
    if not line.startswith(prefix):
        raise ValueError("expected %r, got %r" % (prefix, line))
    return line[len(prefix):]


class _HarnessError(Exception):
    pass


def _talk(out, inp, warmup, samples, first_id):
    r = {}
    try:
        r["ready"] = json.loads(_expect(inp, "ready "))
        out.write("warmup %d\n" % warmup)
        r["warmup_ns"] = int(_expect(inp, "ok "))
        ns = []
        for i in range(samples):
            sid = first_id + i
            out.write("sample %d\n" % sid)
            fields = _expect(inp, "sample ").split()
            if len(fields) != 2 or int(fields[0]) != sid:
                raise ValueError("bad sample reply %r for id %d" % (" ".join(fields), sid))
            ns.append(int(fields[1]))
        r["samples_ns"] = ns
        out.write("stop\n")
        out.close()
    except _HarnessError as e:
        r["error"] = str(e)
    return r


def main(argv):
    p = argparse.ArgumentParser(prog="python3 -m magpie_bench.drive", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--warmup", type=int, default=3, help="warm-up launches (default 3)")
    p.add_argument("--samples", type=int, default=10, help="samples (default 10)")
    p.add_argument("--cold", action="store_true", help="MAGPIE_BENCH_COLD=1 (cache flush)")
    p.add_argument("--batch", type=int, default=1, help="MAGPIE_BENCH_BATCH (default 1)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- harness command")
    a = p.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        p.error("no harness command (put it after --)")
    env = dict(os.environ, MAGPIE_BENCH_BATCH=str(a.batch))
    if a.cold:
        env["MAGPIE_BENCH_COLD"] = "1"
    r = converse(cmd, a.warmup, a.samples, env)
    if r["samples_ns"]:
        r["median_ns"] = statistics.median(r["samples_ns"])
    sys.stderr.write(r.pop("stderr"))
    print(json.dumps(r))
    return r["rc"] if r["rc"] else (1 if r["error"] else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
