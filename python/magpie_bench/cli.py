"""Command line of `python3 -m magpie_bench` and the mode dispatch.

Exit status: 0 success; 1 a kernel failure (a failed trial, launch or `error` line);
2 usage or setup error (bad flags, module import failure, entry not found, bad environment)."""
import argparse
import ctypes
import os
import sys
import traceback

from magpie_bench import HARNESS, BenchError
from magpie_bench.device import env_int, resolve_device
from magpie_bench.modes import (log, run_correctness, run_profile, run_standalone,
                                write_setup_failure)
from magpie_bench.program import Program, one_line
from magpie_bench.timing import Channel, open_channel_for_error, run_timing, send_error

MODES = ("", "correctness", "timing", "profile")

EPILOG = """\
modes (MAGPIE_BENCH_MODE): unset = run every size once with seed 0 and print one line per
size; correctness = write inputs (pre/post), outputs (.npy) and manifest.json to
MAGPIE_BENCH_OUT_DIR for each seed of MAGPIE_BENCH_SEEDS; timing = answer warmup/sample/stop
on fds 3/4 (times in integer nanoseconds); profile = 3 warm-ups + MAGPIE_BENCH_PROFILE_LAUNCHES
(default 5) synchronised launches, for ncu. Other variables: MAGPIE_BENCH_INIT_SEED (weights,
default 0), MAGPIE_BENCH_SEED (timed inputs, default 0), MAGPIE_BENCH_SIZE (size index, default
the module's TIMED_SIZE or its last size), MAGPIE_BENCH_COLD=1 (flush caches before each
sample), MAGPIE_BENCH_FLUSH_BYTES (0 = 2x L2 / LLC), MAGPIE_BENCH_BATCH (launches per sample,
default 1), MAGPIE_BENCH_GRAPH=1 (CUDA graph replay), MAGPIE_BENCH_DEVICE (CUDA index, default
0), MAGPIE_CUPTI_LIB (CUPTI marks). Protocol: docs/harness-protocol.md; guide:
docs/python-harness.md.
"""


def build_parser():
    p = argparse.ArgumentParser(
        prog="python3 -m magpie_bench", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run one pytorch/triton (or numpy) kernel for the magpie supervisor "
                    "(harness protocol 1, %s)." % HARNESS)
    p.add_argument("--module", required=True, metavar="FILE",
                   help="kernel module: a .py file (loaded by path under a unique name, its "
                        "directory first on sys.path) or an importable dotted name")
    p.add_argument("--entry", metavar="NAME",
                   help="class or function to run (default: ModelNew if defined, else Model, "
                        "else --callable)")
    p.add_argument("--callable", metavar="NAME",
                   help="Magpie bench_target.callable: the entry when the module defines "
                        "neither ModelNew nor Model")
    p.add_argument("--inputs-from", metavar="FILE",
                   help="module providing get_inputs/get_init_inputs/get_sizes (default: "
                        "--module itself), e.g. the KernelBench problem file of a ModelNew")
    p.add_argument("--get-inputs", metavar="NAME", default="get_inputs",
                   help="name of the inputs function (default: %(default)s)")
    p.add_argument("--get-init-inputs", metavar="NAME", default="get_init_inputs",
                   help="name of the constructor-arguments function of a class entry "
                        "(default: %(default)s; optional)")
    p.add_argument("--get-sizes", metavar="NAME", default=None,
                   help="name of the optional problem-size function or list (default: "
                        "get_sizes, else SIZES; none = one size)")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto",
                   help="auto (default): cuda when the module imported torch and CUDA is "
                        "available, else cpu")
    return p


def _environment():
    """(mode, init_seed) from the environment; BenchError when malformed."""
    mode = os.environ.get("MAGPIE_BENCH_MODE", "")
    if mode not in MODES:
        raise BenchError("MAGPIE_BENCH_MODE=%r (expected correctness, timing, profile or unset)"
                         % mode)
    protocol = os.environ.get("MAGPIE_BENCH_PROTOCOL", "3")
    if protocol not in ("1", "2", "3"):
        raise BenchError("MAGPIE_BENCH_PROTOCOL=%s: this harness speaks protocol 3 (timing mode needs it)"
                         % protocol)
    init_seed = env_int("MAGPIE_BENCH_INIT_SEED", 0)
    if not 0 <= init_seed < 1 << 64:
        raise BenchError("MAGPIE_BENCH_INIT_SEED=%d is not an unsigned 64-bit integer" % init_seed)
    return mode, init_seed


def _start_cupti():
    """Initialises the CUDA driver before any user code runs when the supervisor injected its
    CUPTI library: the library takes its record channel at that moment, before the kernel's
    module is imported (docs/harness-protocol.md, "CUPTI records")."""
    if not (os.environ.get("CUDA_INJECTION64_PATH") and os.environ.get("MAGPIE_CUPTI_BOOT")):
        return
    try:
        ctypes.CDLL("libcuda.so.1").cuInit(0)
    except OSError:
        pass  # no CUDA driver here: nothing to record


def _setup(opts, init_seed):
    _start_cupti()
    program = Program(opts)
    device = resolve_device(opts.device)
    program.build(device, init_seed)
    return program, device


def _report_setup_failure(mode, opts, message, channel, init_seed):
    log("error: %s", message)
    if mode == "correctness" and os.environ.get("MAGPIE_BENCH_OUT_DIR"):
        write_setup_failure(opts, os.environ["MAGPIE_BENCH_OUT_DIR"], message, init_seed)
    if mode == "timing":
        send_error(channel, message)


def main(argv):
    opts = build_parser().parse_args(argv)
    mode, init_seed, channel = "", 0, None
    try:
        mode, init_seed = _environment()
        if mode == "timing":
            channel = Channel()
        program, device = _setup(opts, init_seed)
    except Exception as e:
        if mode == "timing" and channel is None:
            channel = open_channel_for_error()
        if not isinstance(e, BenchError):
            traceback.print_exc(file=sys.stderr)
        message = str(e) if isinstance(e, BenchError) else "setup failed: " + one_line(e)
        _report_setup_failure(mode, opts, message, channel, init_seed)
        return 2
    try:
        if mode == "correctness":
            return run_correctness(opts, program, device, init_seed)
        if mode == "timing":
            return run_timing(program, device, channel)
        if mode == "profile":
            return run_profile(program, device)
        return run_standalone(program, device)
    except BenchError as e:
        log("error: %s", e)
        return 2
