"""Fake `python3 -m atom.entrypoints.openai_server`: starts magpie_sim_server."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from sim_launch import flag, launch  # noqa: E402

a = sys.argv[1:]
launch(flag(a, ["--model"], "sim-model"), flag(a, ["--host"], "127.0.0.1"), flag(a, ["--server-port"], "8000"),
       flag(a, ["--torch-profiler-dir"], os.environ.get("ATOM_TORCH_PROFILER_DIR", "")), "atom")
