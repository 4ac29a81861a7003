"""The kernel under test: the user's module, its entry, its inputs and its problem sizes.

Contract (docs/python-harness.md):
- modules are loaded by file path under a unique name, their directory first on sys.path
  (a dotted name that is not a file is imported normally);
- entry = --entry, else `ModelNew` if defined, else `Model`, else --callable;
- a class entry is instantiated as Entry(*get_init_inputs()) right after seeding every RNG
  with MAGPIE_BENCH_INIT_SEED, then `.eval().to(device)` if it is a torch.nn.Module;
- get_inputs (from --inputs-from, default the module) is called right after seeding with the
  trial's seed; its torch tensors are moved to the device; forward runs with autograd off.
- the supervisor overrides the inputs module with MAGPIE_BENCH_INPUTS_FROM (and the function
  names with MAGPIE_BENCH_GET_INPUTS / MAGPIE_BENCH_GET_INIT_INPUTS) when a reference exists:
  inputs, sizes and constructor arguments then come from the reference's module, which is
  loaded before the kernel's module and whose functions are bound before the kernel's code runs.
- optional problem sizes: `get_sizes()` (or a list `get_sizes` / `SIZES`) gives one value per size;
  get_inputs then receives it (a dict as keyword arguments, anything else as one argument).
  `TIMED_SIZE` (an index) picks the timed size; default the last one.
"""
import hashlib
import importlib
import importlib.util
import inspect
import itertools
import os
import sys

from magpie_bench import BenchError
from magpie_bench.device import seed_all
from magpie_bench.tensors import is_numpy_scalar, is_scalar, is_tensor, safe_name, scalar_value

_module_counter = itertools.count()
_loaded_by_path = {}


def load_module(spec):
    """Loads a module from a .py path (unique module name, its directory on sys.path) or, for a
    dotted name that is not a file, imports it. Import failures become BenchError."""
    if not (spec.endswith(".py") or os.sep in spec or os.path.isfile(spec)):
        try:
            return importlib.import_module(spec)
        except Exception as e:
            raise BenchError("importing module %s failed: %s" % (spec, one_line(e))) from e
    path = os.path.abspath(spec)
    if not os.path.isfile(path):
        raise BenchError("module file not found: %s" % spec)
    if path in _loaded_by_path:
        return _loaded_by_path[path]
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    stem = safe_name(os.path.splitext(os.path.basename(path))[0]).replace(".", "_")
    digest = hashlib.md5(path.encode()).hexdigest()[:8]
    name = "_magpie_bench_%s_%s_%d" % (stem, digest, next(_module_counter))
    spec_obj = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec_obj)
    sys.modules[name] = module
    try:
        spec_obj.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise BenchError("importing %s failed: %s" % (path, one_line(e))) from e
    _loaded_by_path[path] = module
    return module


def one_line(e):
    """'TypeName: message' on one line (the form used in manifests and `error` lines)."""
    text = "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__
    return " ".join(text.split())


def _public_names(module):
    return sorted(n for n, v in vars(module).items()
                  if not n.startswith("_") and callable(v) and not inspect.ismodule(v))


def resolve_entry(module, module_label, entry, callable_name):
    """(name, object) of the entry point; BenchError naming what the module defines."""
    if entry:
        candidates = [entry]
    else:
        candidates = ["ModelNew", "Model"] + ([callable_name] if callable_name else [])
    for name in candidates:
        obj = getattr(module, name, None)
        if obj is not None:
            if not callable(obj):
                raise BenchError("entry %s in %s is a %s, not a class or function"
                                 % (name, module_label, type(obj).__name__))
            return name, obj
    defined = ", ".join(_public_names(module)) or "nothing callable"
    if entry:
        raise BenchError("%s: entry %r not found; the module defines: %s"
                         % (module_label, entry, defined))
    raise BenchError("%s: none of %s is defined (pass --entry NAME or --callable NAME); "
                     "the module defines: %s" % (module_label, ", ".join(candidates), defined))


def split_call_args(value):
    """get_inputs / get_init_inputs result → (args, kwargs): a list/tuple is positional, a dict
    keyword arguments, an (args, kwargs) pair both, None nothing, anything else one argument."""
    if value is None:
        return [], {}
    if isinstance(value, dict):
        return [], dict(value)
    if isinstance(value, (list, tuple)):
        if len(value) == 2 and isinstance(value[0], (list, tuple)) and isinstance(value[1], dict):
            return list(value[0]), dict(value[1])
        return list(value), {}
    return [value], {}


def param_names(target):
    """Names of the leading positional parameters of `target` (bound: without self)."""
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    names = []
    for p in sig.parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            break
        names.append(p.name)
    return names


def size_label(size):
    """"n=4099" for {"n": 4099}; str(size) otherwise (no spaces)."""
    if isinstance(size, dict):
        return ",".join("%s=%s" % (k, _compact(v)) for k, v in size.items())
    return _compact(size)


def _compact(v):
    if isinstance(v, (list, tuple)):
        return "x".join(_compact(x) for x in v)
    return str(v).replace(" ", "")


class InputSet:
    """One trial's call arguments plus the named tensors and scalars among them."""

    def __init__(self, args, kwargs, names):
        self.args = args
        self.kwargs = kwargs
        self.tensors = []   # [(name, tensor)] in argument order
        self.scalars = {}   # name → JSON value
        used = set()
        for i, value in enumerate(args):
            self._collect(names[i] if i < len(names) else "in%d" % i, value, used)
        for key, value in kwargs.items():
            self._collect(str(key), value, used)

    def _collect(self, name, value, used):
        if is_tensor(value):
            base, k = name, 1
            while name in used:
                name, k = "%s_%d" % (base, k), k + 1
            used.add(name)
            self.tensors.append((name, value))
        elif is_scalar(value):
            self.scalars[name] = scalar_value(value)
        elif isinstance(value, (list, tuple)):
            for j, v in enumerate(value):
                self._collect("%s_%d" % (name, j), v, used)

    def shapes_label(self):
        """"x:16x16384,w:16384" — the size label of a module without declared sizes."""
        parts = ["%s:%s" % (n, "x".join(str(int(d)) for d in t.shape) or "scalar")
                 for n, t in self.tensors]
        return ",".join(parts) or "default"


class Program:
    """The loaded kernel. `opts` carries the CLI fields module, entry, callable, inputs_from,
    get_inputs, get_init_inputs and get_sizes (see magpie_bench.cli)."""

    def __init__(self, opts):
        inputs_from = os.environ.get("MAGPIE_BENCH_INPUTS_FROM") or opts.inputs_from
        get_inputs = os.environ.get("MAGPIE_BENCH_GET_INPUTS") or opts.get_inputs
        get_init = os.environ.get("MAGPIE_BENCH_GET_INIT_INPUTS") or opts.get_init_inputs
        self.module_path = opts.module
        self.inputs_path = inputs_from or opts.module
        # The inputs module first, its functions and sizes bound before the kernel's module
        # runs any code: the kernel cannot replace the generator it is measured with.
        self.inputs_module = load_module(self.inputs_path)
        self.get_inputs = self._function(get_inputs, required=True)
        self.get_init_inputs = self._function(get_init, required=False)
        self.sizes = self._sizes(opts.get_sizes)
        self.timed_size = self._timed_size()
        self.module = load_module(opts.module)
        self.kernel = os.path.splitext(os.path.basename(opts.module))[0]
        self.entry_name, self.entry = resolve_entry(self.module, opts.module, opts.entry,
                                                    opts.callable)
        self.fn = None
        self.names = []
        self._pass_seed = "seed" in _parameters(self.get_inputs)

    def _function(self, name, required):
        fn = getattr(self.inputs_module, name, None)
        if fn is None:
            if required:
                raise BenchError("%s defines no %s() (use --inputs-from FILE or --get-inputs NAME)"
                                 % (self.inputs_path, name))
            return None
        if not callable(fn):
            raise BenchError("%s.%s is not callable" % (self.inputs_path, name))
        return fn

    def _sizes(self, name):
        """--get-sizes NAME, else `get_sizes`, else `SIZES`; [None] when none is defined."""
        for candidate in ([name] if name else ["get_sizes", "SIZES"]):
            sizes = getattr(self.inputs_module, candidate, None)
            if sizes is not None:
                name = candidate
                break
        else:
            return [None]
        try:
            sizes = list(sizes() if callable(sizes) else sizes)
        except Exception as e:
            raise BenchError("%s.%s failed: %s" % (self.inputs_path, name, one_line(e))) from e
        if not sizes:
            raise BenchError("%s.%s returned no sizes" % (self.inputs_path, name))
        return sizes

    def _timed_size(self):
        timed = getattr(self.inputs_module, "TIMED_SIZE", len(self.sizes) - 1)
        if not isinstance(timed, int) or not 0 <= timed < len(self.sizes):
            raise BenchError("%s: TIMED_SIZE=%r is not an index into its %d size(s)"
                             % (self.inputs_path, timed, len(self.sizes)))
        return timed

    def size_label(self, index):
        size = self.sizes[index]
        return None if size is None else size_label(size)

    def framework(self):
        torch = sys.modules.get("torch")
        if torch is not None:
            return "torch " + torch.__version__
        np = sys.modules.get("numpy")
        return "numpy " + np.__version__ if np is not None else "python"

    def build(self, device, init_seed):
        """Instantiates a class entry (seeded with init_seed) and binds the callable."""
        torch = sys.modules.get("torch")
        target = self.entry
        if inspect.isclass(self.entry):
            seed_all(init_seed)
            init = self.get_init_inputs() if self.get_init_inputs is not None else None
            args, kwargs = split_call_args(init)
            instance = self.entry(*args, **kwargs)
            if torch is not None and isinstance(instance, torch.nn.Module):
                instance = instance.eval()
                if device.torch_device is not None:
                    instance = instance.to(device.torch_device)
                target, self.fn = instance.forward, instance
            elif callable(getattr(instance, "forward", None)):
                target = self.fn = instance.forward
            elif callable(instance):
                target = self.fn = instance
            else:
                raise BenchError("class %s has neither forward() nor __call__()" % self.entry_name)
        else:
            self.fn = self.entry
        self.names = param_names(target)
        if torch is not None:
            torch.set_grad_enabled(False)  # forward under no_grad for the rest of the process

    def make_inputs(self, size_index, seed, device):
        """Seeds every RNG with `seed`, calls get_inputs for size `size_index`, moves tensors
        to the device."""
        size = self.sizes[size_index]
        seed_all(seed)
        kw = {"seed": int(seed)} if self._pass_seed else {}
        if size is None:
            value = self.get_inputs(**kw)
        elif isinstance(size, dict):
            value = self.get_inputs(**size, **kw)
        else:
            value = self.get_inputs(size, **kw)
        args, kwargs = split_call_args(value)
        return InputSet(device.move(args), device.move(kwargs), self.names)

    def call(self, inputs):
        return self.fn(*inputs.args, **inputs.kwargs)

    def refresh_inputs(self, inputs, size_index, seed, device):
        """Regenerates `inputs` in place from `seed`: new values copied into the same tensors
        (pointers unchanged), scalars replaced. BenchError when the new inputs do not have the
        same structure, shapes and dtypes."""
        fresh = _MAKE_INPUTS(self, size_index, seed, device)
        if len(fresh.tensors) != len(inputs.tensors):
            raise BenchError("inputs for seed %d have %d tensors, the first ones had %d"
                             % (seed, len(fresh.tensors), len(inputs.tensors)))
        for (name, old), (_, new) in zip(inputs.tensors, fresh.tensors):
            copy_into(old, new, name)
        inputs.scalars = fresh.scalars
        inputs.args = _merge(inputs.args, fresh.args)
        inputs.kwargs = {k: _merge(inputs.kwargs.get(k), v) for k, v in fresh.kwargs.items()}
        return inputs


_MAKE_INPUTS = Program.make_inputs  # bound at import, before any kernel module runs


def copy_into(old, new, name):
    """old[...] = new for two tensors of one kind, shape and dtype."""
    if is_tensor(old) != is_tensor(new) or list(old.shape) != list(new.shape) or \
            str(old.dtype) != str(new.dtype):
        raise BenchError("input %s changed shape or dtype between seeds (%s %s -> %s %s)"
                         % (name, list(old.shape), old.dtype, list(new.shape), new.dtype))
    if hasattr(old, "copy_"):
        old.copy_(new)
    else:
        sys.modules["numpy"].copyto(old, new)


def _merge(old, new):
    """`new` with every tensor replaced by the matching (already refreshed) tensor of `old`."""
    if is_tensor(new) and is_tensor(old):
        return old
    if isinstance(new, (list, tuple)) and isinstance(old, (list, tuple)) and len(old) == len(new):
        merged = [_merge(o, n) for o, n in zip(old, new)]
        return tuple(merged) if isinstance(new, tuple) else merged
    if isinstance(new, dict) and isinstance(old, dict):
        return {k: _merge(old.get(k), v) for k, v in new.items()}
    return new


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}


def flatten_outputs(result):
    """[(name, tensor)] of an entry's result: a tensor (out0), a tuple/list (out0, out1, ...) or
    a dict (its keys). A numpy scalar counts as a 0-d array. Anything else, or a non-tensor
    element, is a BenchError."""
    result = _as_array(result)
    if is_tensor(result):
        return [("out0", result)]
    if isinstance(result, dict):
        items = [(str(k), _as_array(v)) for k, v in result.items()]
    elif isinstance(result, (list, tuple)):
        items = [("out%d" % i, _as_array(v)) for i, v in enumerate(result)]
    else:
        raise BenchError("the entry returned %s; expected a tensor or a tuple/list/dict of tensors"
                         % type(result).__name__)
    if not items:
        raise BenchError("the entry returned an empty %s" % type(result).__name__)
    for name, v in items:
        if not is_tensor(v):
            raise BenchError("output %s is %s, not a tensor" % (name, type(v).__name__))
    return items


def _as_array(v):
    if is_numpy_scalar(v):
        return sys.modules["numpy"].asarray(v)
    return v
