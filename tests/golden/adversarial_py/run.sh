#!/usr/bin/env bash
# Python adversarial suite (issue 19), numpy on the CPU through python/magpie_bench: one compare
# of the reference against honest variants and attacks. Every attack is rejected by the defence
# named below; every honest variant is accepted. The reference's tensor files are gone.
set -euo pipefail
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
source "$MAGPIE_SOURCE_DIR/tests/golden/py_harness_protocol/find_python.sh"
py="$(magpie_find_numpy_python)" || { echo "SKIP: no python3 with numpy found"; exit 77; }
export MAGPIE_PYTHON="$py" PYTHONDONTWRITEBYTECODE=1
out="$GOLDEN_TMP/res"
set +e
"$MAGPIE_BIN" compare -k "$MAGPIE_SOURCE_DIR/tests/golden/adversarial_py/suite.yaml" -o "$out" > "$GOLDEN_TMP/c.txt" 2> "$GOLDEN_TMP/e.txt"
set -e
cat "$GOLDEN_TMP/c.txt"
ws=$(workspace_of "$out" compare)
[ -f "$ws/compare_report.json" ] || fail "no report: $(tail -20 "$GOLDEN_TMP/e.txt")"
[ -z "$(find "$ws" -name '*.npy' -print -quit)" ] || fail "tensor files left in the workspace: $(find "$ws" -name '*.npy' | head -3)"
check_json "$ws/compare_report.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
k = {x["extra"]["kernel_id"]: x for x in res["kernel_results"]}
v = {x["kernel_id"]: x for x in res["verdicts"]}
def why(name):
    return " | ".join(k[name]["errors"]) + " || " + str(k[name]["integrity"]["reason"])
honest = ["baseline", "honest_blocked", "honest_f64", "honest_reversed", "aa_copy"]
for name in honest:
    x = k[name]
    assert x["correctness_state"] == "SUCCESS" and not x["integrity"]["rejected"], (name, why(name))
    assert v[name]["verdict"] in ("baseline", "faster", "slower", "same", "ambiguous"), (name, v[name])
    checks = {c["name"]: c["status"] for c in x["integrity"]["checks"]}
    if name != "baseline":
        assert checks["reference_inputs"] == "pass" and checks["reference_outputs"] == "pass", checks
    assert checks["timed_outputs"] == "pass" and checks["clock_bracket"] == "pass", checks
attacks = {
    "own_inputs": ("error", "all zeros"),            # inputs come from the reference's get_inputs
    "patch_timer": ("check", ("clock_bracket", "clock_gain")),  # the supervisor's clock (CPU in the bracket, or the gain) vs the harness clock
    "read_reference": ("error", "constant 0.5"),     # the reference's files were deleted
    "early_exit": ("check", "manifest"),             # exit 0 without a manifest is FAILED
    "memo_id": ("error", "shape"),
    "memo_content": ("check", "input_reuse"),        # fast only on repeated inputs
    "mode_sniff": ("check", "timed_outputs"),        # outputs of timed samples probed
    "patch_refresh": ("error", "all zeros"),         # the harness bound its functions before import
    "stale_buffer": ("error", "constant nan"),       # returned buffers re-poisoned before each launch
    "background": ("error", "NaN/inf pattern"),
    "low_precision": ("error", "outside atol"),
    "echo_input": ("error", "equals input"),
    "partial_rows": ("error", "outside atol"),
    # issue 35: the kernel patches the harness in its own interpreter
    # reported times halved: the interpreter's thread used more CPU per sample than the claim
    # (cpu_floor, load-robust; the supervisor's clock disagrees too: clock_gain, when load allows)
    "patch_send": ("check", ("cpu_floor",)),
    "lazy_copy": ("check", ("clock_gain", "clock_bracket", "cpu_floor")),  # computed in the patched output copy, after the timer
}
for name, (kind, needle) in attacks.items():
    x = k[name]
    assert v[name]["verdict"] == "not_ranked", (name, v[name])
    if kind == "check":
        failed = [c["name"] for c in x["integrity"]["checks"] if c["status"] == "fail"]
        assert set(needle if isinstance(needle, tuple) else (needle,)) & set(failed), (name, failed, why(name))
        print("%-14s rejected by %s" % (name, ", ".join(failed)))
    else:
        assert x["correctness_state"] == "FAILED" and needle in " ".join(x["errors"]), (name, why(name))
assert sorted(i for i, _ in res["rankings"]) == [0, 1, 2, 3, 4], res["rankings"]
print("adversarial python: %d attacks rejected, %d honest accepted" % (len(attacks), len(honest)))
PY
echo "ok: adversarial python golden"
