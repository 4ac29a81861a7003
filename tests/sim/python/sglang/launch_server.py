"""Fake `python3 -m sglang.launch_server`: starts magpie_sim_server with the same model/host/port."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sim_launch import flag, launch  # noqa: E402

a = sys.argv[1:]
launch(flag(a, ["--model-path", "--model"], "sim-model"), flag(a, ["--host"], "127.0.0.1"), flag(a, ["--port"], "30000"),
       os.environ.get("SGLANG_TORCH_PROFILER_DIR", ""), "sglang")
