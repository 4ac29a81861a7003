"""Pluggable-kernel registry of the loop example (stdlib only; implementations are imported
lazily, so the driver and the CI tests can use this file without torch).

MAGPIE_LOOP_KERNELS (read by server.py at start-up) selects one implementation per op:
    "baseline"                      every op from its shipped kernels (kernels_baseline.py)
    "eager"                         every op in eager PyTorch (kernels_eager.py)
    "baseline,rms_norm=onepass"     a preset, then per-op overrides (later items win)
An unknown op or implementation is an error naming the valid choices.
"""
import importlib
import os
import sys

OP_NAMES = ("rms_norm", "silu_mul", "rotary", "attention")

# backend -> op -> implementation id -> (module, function)
IMPLS = {
    "torch": {
        "rms_norm": {"eager": ("kernels_eager", "rms_norm"), "baseline": ("kernels_baseline", "rms_norm"),
                     "onepass": ("kernels_triton", "rms_norm_onepass")},
        "silu_mul": {"eager": ("kernels_eager", "silu_mul"), "baseline": ("kernels_baseline", "silu_mul"),
                     "2d": ("kernels_triton", "silu_mul_2d"), "swapped": ("kernels_triton", "silu_mul_swapped")},
        "rotary": {"eager": ("kernels_eager", "rotary"), "baseline": ("kernels_baseline", "rotary"),
                   "fused": ("kernels_triton", "rotary_fused"), "interleaved": ("kernels_triton", "rotary_interleaved")},
        "attention": {"eager": ("kernels_eager", "attention"), "baseline": ("kernels_baseline", "attention"),
                      "split": ("kernels_triton", "attention_split"), "offbyone": ("kernels_triton", "attention_offbyone")},
    },
    "numpy": {
        "rms_norm": {"eager": ("kernels_numpy", "rms_norm_eager"), "baseline": ("kernels_numpy", "rms_norm_baseline"),
                     "onepass": ("kernels_numpy", "rms_norm_onepass")},
        "silu_mul": {"eager": ("kernels_numpy", "silu_mul_eager"), "baseline": ("kernels_numpy", "silu_mul_baseline"),
                     "2d": ("kernels_numpy", "silu_mul_2d"), "swapped": ("kernels_numpy", "silu_mul_swapped")},
        "rotary": {"eager": ("kernels_numpy", "rotary_eager"), "baseline": ("kernels_numpy", "rotary_baseline"),
                   "fused": ("kernels_numpy", "rotary_fused"), "interleaved": ("kernels_numpy", "rotary_interleaved")},
        "attention": {"eager": ("kernels_numpy", "attention_eager"), "baseline": ("kernels_numpy", "attention_baseline"),
                      "split": ("kernels_numpy", "attention_split"), "offbyone": ("kernels_numpy", "attention_offbyone")},
    },
}
PRESETS = ("baseline", "eager")


class SpecError(ValueError):
    pass


def parse_spec(spec, backend="torch"):
    """'baseline,rms_norm=onepass' -> {'rms_norm': 'onepass', 'silu_mul': 'baseline', 'rotary': 'baseline'}."""
    if backend not in IMPLS:
        raise SpecError("unknown backend %r (torch | numpy)" % backend)
    table = IMPLS[backend]
    chosen = {op: "baseline" for op in OP_NAMES}
    for item in [s.strip() for s in (spec or "baseline").split(",") if s.strip()]:
        if "=" not in item:
            if item not in PRESETS:
                raise SpecError("unknown kernel preset %r (presets: %s; or op=impl)" % (item, ", ".join(PRESETS)))
            chosen = {op: item for op in OP_NAMES}
            continue
        op, impl = [p.strip() for p in item.split("=", 1)]
        if op not in table:
            raise SpecError("unknown op %r in %r (ops: %s)" % (op, item, ", ".join(OP_NAMES)))
        if impl not in table[op]:
            raise SpecError("unknown implementation %r for %s (choices: %s)" % (impl, op, ", ".join(sorted(table[op]))))
        chosen[op] = impl
    return chosen


def spec_string(chosen):
    """Canonical spec for a choice: 'rms_norm=onepass,rotary=baseline,silu_mul=baseline'."""
    return ",".join("%s=%s" % (op, chosen[op]) for op in sorted(chosen))


def load(chosen, backend="torch"):
    """{op: callable} for a parsed choice; modules are imported from this directory."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    out = {}
    for op, impl in chosen.items():
        mod, fn = IMPLS[backend][op][impl]
        out[op] = getattr(importlib.import_module(mod), fn)
    return out


def from_env(backend="torch"):
    return parse_spec(os.environ.get("MAGPIE_LOOP_KERNELS", "baseline"), backend)
