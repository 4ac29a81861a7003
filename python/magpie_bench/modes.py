"""Correctness, profile and standalone modes (docs/harness-protocol.md).

Exit status of correctness mode: 0 when every trial ran, 1 when some trial failed (its
`ok` is false and `error` says why; the manifest is complete either way)."""
import os
import sys
import traceback

from magpie_bench import HARNESS, PROTOCOL, BenchError
from magpie_bench.device import CudaFlush, HostFlush, env_int
from magpie_bench.program import Program, flatten_outputs, one_line
from magpie_bench.tensors import (dtype_name, host_copy, is_tensor, poison, safe_name,
                                  write_json_atomic)


def log(fmt, *args):
    sys.stderr.write("magpie_bench: " + (fmt % args if args else fmt) + "\n")
    sys.stderr.flush()


def parse_seeds(text):
    """MAGPIE_BENCH_SEEDS: comma-separated unsigned 64-bit integers, at least one."""
    seeds = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) >= 1 << 64:
            raise BenchError("MAGPIE_BENCH_SEEDS: %r is not an unsigned 64-bit integer" % part)
        seeds.append(int(part))
    if not seeds:
        raise BenchError("MAGPIE_BENCH_SEEDS is empty; correctness mode needs at least one seed")
    return seeds


def base_manifest(opts, program=None, device=None, init_seed=0):
    """The manifest's fixed part; without a program (setup failed) only what is known."""
    m = {"protocol": PROTOCOL, "harness": HARNESS,
         "kernel": os.path.splitext(os.path.basename(opts.module))[0],
         "module": os.path.abspath(opts.module) if os.path.exists(opts.module) else opts.module,
         "inputs_from": os.path.abspath(opts.inputs_from) if opts.inputs_from else None,
         "entry": None, "device": None, "framework": None, "init_seed": init_seed,
         "n_sizes": 0, "timed_size": 0, "sizes": [],
         "poisoned": False, "repoison": True, "error": None, "trials": []}
    if program is not None:
        m.update({"entry": program.entry_name, "framework": program.framework(),
                  "n_sizes": len(program.sizes), "timed_size": program.timed_size,
                  "sizes": [program.size_label(i) for i in range(len(program.sizes))]})
    if device is not None:
        m["device"] = device.description()
    return m


def write_setup_failure(opts, out_dir, message, init_seed):
    """Correctness mode could not start: a manifest with `error` set and no trials."""
    m = base_manifest(opts, init_seed=init_seed)
    m["error"] = message
    try:
        os.makedirs(out_dir, exist_ok=True)
        write_json_atomic(os.path.join(out_dir, "manifest.json"), m)
    except OSError as e:
        log("cannot write %s/manifest.json: %s", out_dir, e)


def _save(h, out_dir, name):
    h.save(os.path.join(out_dir, name))
    return name


# Bound at import, before the kernel's module runs (see magpie_bench.timing).
_make_inputs = Program.make_inputs
_call = Program.call
_poison = poison


def tensors_in(value):
    """Every tensor inside a result (tensor, list/tuple/dict of them, nested)."""
    if is_tensor(value):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    return []


def run_trial(program, device, out_dir, index, seed, previous, size_index=None):
    """One correctness trial → its manifest entry. Outputs are freshly allocated by the
    framework, so they cannot be poisoned beforehand ("poisoned": false); what the previous
    trial returned is poisoned right before this launch ("repoison"), so a kernel that returns
    a buffer it does not write again fails. `previous` is a one-element list holding the last
    result; `size_index` overrides the trial's size (check trials: the timed size)."""
    check = size_index is not None
    size_index = index % len(program.sizes) if size_index is None else size_index
    trial = {"index": index, "seed": seed, "size_index": size_index, "check": check,
             "size": program.size_label(size_index), "ok": False, "error": None,
             "inputs": [], "outputs": [], "scalars": {}}
    try:
        inputs = _make_inputs(program, size_index, seed, device)
        if trial["size"] is None:
            trial["size"] = inputs.shapes_label()
        trial["scalars"] = inputs.scalars
        for name, t in inputs.tensors:
            h = host_copy(t)
            pre = _save(h, out_dir, "t%d_in_%s.npy" % (index, safe_name(name)))
            trial["inputs"].append({"name": name, "dtype": h.dtype, "shape": h.shape,
                                    "pre": pre, "post": None})
        _poison(tensors_in(previous[0]), [t for _, t in inputs.tensors])
        device.synchronize()
        result = _call(program, inputs)
        previous[0] = result
        device.synchronize()
        for name, t in flatten_outputs(result):
            h = host_copy(t)
            f = _save(h, out_dir, "t%d_out_%s.npy" % (index, safe_name(name)))
            trial["outputs"].append({"name": name, "dtype": h.dtype, "shape": h.shape,
                                     "file": f, "poisoned": False})
        for entry, (name, t) in zip(trial["inputs"], inputs.tensors):
            entry["post"] = _save(host_copy(t), out_dir,
                                  "t%d_in_%s.post.npy" % (index, safe_name(name)))
        trial["ok"] = True
    except Exception as e:  # the kernel's failure is data: recorded in the trial
        if not isinstance(e, BenchError):
            traceback.print_exc(file=sys.stderr)
        trial["error"] = one_line(e)
        log("trial %d (seed %d, size %s) failed: %s", index, seed, trial["size"], trial["error"])
    return trial


def run_correctness(opts, program, device, init_seed):
    out_dir = os.environ.get("MAGPIE_BENCH_OUT_DIR", "")
    if not out_dir:
        raise BenchError("MAGPIE_BENCH_OUT_DIR is required in correctness mode")
    seeds = parse_seeds(os.environ.get("MAGPIE_BENCH_SEEDS", ""))
    checks = parse_seeds(os.environ["MAGPIE_BENCH_CHECK_SEEDS"]) \
        if os.environ.get("MAGPIE_BENCH_CHECK_SEEDS") else []
    os.makedirs(out_dir, exist_ok=True)
    manifest = base_manifest(opts, program, device, init_seed)
    previous = [None]
    for i, seed in enumerate(seeds):
        manifest["trials"].append(run_trial(program, device, out_dir, i, seed, previous))
    timed = timed_size_index(program) if checks else None
    for j, seed in enumerate(checks):
        manifest["trials"].append(run_trial(program, device, out_dir, len(seeds) + j, seed,
                                            previous, timed))
    seeds = seeds + checks
    write_json_atomic(os.path.join(out_dir, "manifest.json"), manifest)
    failed = sum(1 for t in manifest["trials"] if not t["ok"])
    log("correctness: %d/%d trial(s) ran, manifest %s", len(seeds) - failed, len(seeds),
        os.path.join(out_dir, "manifest.json"))
    return 1 if failed else 0


def make_flush(device, cold):
    """The cache flush for cold runs (None when MAGPIE_BENCH_COLD is not 1)."""
    if not cold:
        return None
    nbytes = device.flush_bytes()
    return CudaFlush(device, nbytes) if device.is_cuda else HostFlush(nbytes)


def timed_size_index(program):
    """MAGPIE_BENCH_SIZE, default the program's timed size."""
    index = env_int("MAGPIE_BENCH_SIZE", program.timed_size)
    if not 0 <= index < len(program.sizes):
        raise BenchError("MAGPIE_BENCH_SIZE=%d is out of range (%d size(s))"
                         % (index, len(program.sizes)))
    return index


def run_profile(program, device):
    """3 warm-up launches, then MAGPIE_BENCH_PROFILE_LAUNCHES launches, each synchronised and
    preceded by the cold flush when MAGPIE_BENCH_COLD=1 (meant to run under ncu)."""
    launches = env_int("MAGPIE_BENCH_PROFILE_LAUNCHES", 5)
    size_index = timed_size_index(program)
    inputs = program.make_inputs(size_index, env_int("MAGPIE_BENCH_SEED", 0), device)
    flush = make_flush(device, os.environ.get("MAGPIE_BENCH_COLD") == "1")
    for _ in range(3):
        program.call(inputs)
    device.synchronize()
    for _ in range(launches):
        if flush is not None:
            flush()
        program.call(inputs)
        device.synchronize()
    log("profile: %d launch(es) of size %s on %s", launches,
        program.size_label(size_index) or inputs.shapes_label(), device.description())
    return 0


def run_standalone(program, device):
    """Every size once with seed 0; one line per size on stdout; 1 if any launch failed."""
    failed = 0
    for i in range(len(program.sizes)):
        label = program.size_label(i)
        try:
            inputs = program.make_inputs(i, 0, device)
            label = label or inputs.shapes_label()
            outputs = flatten_outputs(program.call(inputs))
            device.synchronize()
            desc = " ".join("%s:%s[%s]" % (n, dtype_name(t), "x".join(map(str, t.shape)))
                            for n, t in outputs)
            print("%s size %s: ok (%s)" % (program.kernel, label, desc), flush=True)
        except Exception as e:
            failed += 1
            if not isinstance(e, BenchError):
                traceback.print_exc(file=sys.stderr)
            print("%s size %s: FAILED: %s" % (program.kernel, label, one_line(e)), flush=True)
    return 1 if failed else 0
