"""magpie_bench: the harness that runs one `pytorch` / `triton` kernel for the magpie supervisor.

It speaks harness protocol version 1 (docs/harness-protocol.md): standalone, correctness,
timing and profile modes, selected by MAGPIE_BENCH_MODE. Run it as

    python3 -m magpie_bench --module FILE [--entry NAME] [--inputs-from FILE] [--device cuda|cpu]

torch is imported lazily: a module whose get_inputs returns numpy arrays and whose entry
returns numpy arrays runs on the CPU without torch being installed (see docs/python-harness.md).
"""

PROTOCOL = 3
__version__ = "0.2"
HARNESS = "magpie-bench-py/" + __version__


class BenchError(Exception):
    """A user-facing error: bad module, bad entry, bad environment or a malformed result.

    The message is shown as is (one line, no traceback) on stderr, in the manifest or on the
    control channel."""
