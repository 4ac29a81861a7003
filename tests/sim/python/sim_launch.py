"""Shared launcher of the fake sglang / atom entry points: maps their flags onto
magpie_sim_server and execs it (same pid, same process group)."""
import os
import subprocess
import sys


def launch(model, host, port, trace_dir, framework):
    sim = os.environ.get("MAGPIE_SIM_SERVER")
    if not sim:
        sys.exit("set MAGPIE_SIM_SERVER to the magpie_sim_server binary")
    print(f"INFO fake {framework}: serving {model} on {host}:{port}", flush=True)
    args = [sim, "--host", host, "--port", str(port), "--model", model]
    if trace_dir:
        args += ["--trace-dir", trace_dir]
    args += os.environ.get("MAGPIE_SIM_ARGS", "").split()
    # like an engine worker process; MAGPIE_SIM_SETSID_WORKER=1 puts it in a session of its own
    worker = subprocess.Popen(["sleep", "600"], start_new_session=os.environ.get("MAGPIE_SIM_SETSID_WORKER") == "1")
    pid_dir = os.environ.get("MAGPIE_SIM_PID_DIR")
    if pid_dir:
        with open(os.path.join(pid_dir, "worker.pid"), "w") as f:
            f.write(f"{worker.pid}\n")
        with open(os.path.join(pid_dir, "server.pid"), "w") as f:
            f.write(f"{os.getpid()}\n")
    os.execv(sim, args)


def flag(argv, names, default=None):
    for i, a in enumerate(argv):
        if a in names and i + 1 < len(argv):
            return argv[i + 1]
    return default
