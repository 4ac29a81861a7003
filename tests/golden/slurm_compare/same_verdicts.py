"""Asserts that a Slurm- or Ray-merged compare/analyze report has the local run's verdicts:
correctness outcomes, methods, trial seeds, rankings membership, winner
(argv: local merged [engine, default slurm])."""
import json
import sys

local, slurm = (json.load(open(p)) for p in sys.argv[1:3])
assert slurm["mode"] == local["mode"], (slurm["mode"], local["mode"])
assert slurm["run_seed"] == local["run_seed"], (slurm["run_seed"], local["run_seed"])
engine = sys.argv[3] if len(sys.argv) > 3 else "slurm"
assert "scheduler" in slurm and slurm["scheduler"]["environment"] == engine, slurm["scheduler"]["environment"]
assert slurm["scheduler"]["inputs"]["identical"] is True, slurm["scheduler"]["inputs"]
assert slurm["scheduler"]["complete"] is True
if local["mode"] == "compare":
    lr, sr = local["results"], slurm["results"]
    rows = list(zip(lr["kernel_results"], sr["kernel_results"]))
    for key in ("comparison_metrics", "winner", "winner_reason", "baseline_index", "reference"):
        assert lr[key] == sr[key], (key, lr[key], sr[key])
    assert sorted(i for i, _ in lr["rankings"]) == sorted(i for i, _ in sr["rankings"]), (lr["rankings"], sr["rankings"])
    for a, b in zip(lr["verdicts"], sr["verdicts"]):
        assert (a["kernel_id"], a["verdict"]) == (b["kernel_id"], b["verdict"]), (a, b)
else:
    rows = list(zip(local["results"], slurm["results"]))
    assert (local["reference"] is None) == (slurm["reference"] is None)
assert len(rows) == len(slurm["summary"]) == len(local["summary"])
for a, b in rows:
    for key in ("outcome", "correctness_state", "compiling_state", "correctness_method", "extra"):
        assert a[key] == b[key], (a["extra"], key, a[key], b[key])
    assert a["correctness"].get("seeds") == b["correctness"].get("seeds"), a["extra"]
    if a["correctness_state"] != "SUCCESS":  # the same gate failed for the same reason
        assert [e.split(":")[0] for e in a["errors"]] == [e.split(":")[0] for e in b["errors"]], (a["errors"], b["errors"])
    assert b["job"]["state"] in ("COMPLETED", "FAILED"), b["job"]
print("same verdicts:", sys.argv[2])
