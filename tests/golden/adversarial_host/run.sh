#!/usr/bin/env bash
# Host adversarial suite (issue 19): one compare of the reference against honest variants and
# attacks built with include/magpie/bench.hpp. Every attack is rejected by the defence named
# below; every honest variant is accepted (correct, not rejected, given a verdict). Also: the
# reference's tensor files are gone from the workspace, and the report carries the integrity
# block, the shuffled timing order and per-process medians.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
HERE="$MAGPIE_SOURCE_DIR/tests/golden/adversarial_host"
bin="$GOLDEN_TMP/bin"
mkdir -p "$bin"
g++ -O2 -std=c++17 -I"$MAGPIE_SOURCE_DIR/include" "$HERE/suite.cpp" -o "$bin/suite" -pthread || fail "cannot build suite.cpp"
g++ -O2 -std=c++17 -I"$MAGPIE_SOURCE_DIR/include" "$HERE/relay.cpp" -o "$bin/relay" -pthread || fail "cannot build relay.cpp"
g++ -O2 -std=c++17 -I"$MAGPIE_SOURCE_DIR/include" "$HERE/clock_interpose.cpp" -o "$bin/clock_interpose" || fail "cannot build clock_interpose.cpp"
sed "s#@BIN@#$bin#g" "$HERE/suite.yaml" > "$bin/suite.yaml"
out="$GOLDEN_TMP/res"
set +e
"$MAGPIE_BIN" compare -k "$bin/suite.yaml" -o "$out" > "$GOLDEN_TMP/c.txt" 2> "$GOLDEN_TMP/e.txt"
set -e
cat "$GOLDEN_TMP/c.txt"
ws=$(workspace_of "$out" compare)
[ -f "$ws/compare_report.json" ] || fail "no report: $(tail -20 "$GOLDEN_TMP/e.txt")"
[ -z "$(find "$ws" -name '*.npy' -print -quit)" ] || fail "tensor files left in the workspace: $(find "$ws" -name '*.npy' | head -3)"
check_json "$ws/compare_report.json" "$GOLDEN_TMP/c.txt" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
console = open(sys.argv[2]).read()
k = {x["extra"]["kernel_id"]: x for x in res["kernel_results"]}
v = {x["kernel_id"]: x for x in res["verdicts"]}
def why(name):
    x = k[name]
    return " | ".join(x["errors"]) + " || " + str(x["integrity"]["reason"])
honest = ["baseline", "honest_fma", "honest_threads", "honest_atomic", "honest_multistep", "aa_copy"]
for name in honest:
    assert k[name]["correctness_state"] == "SUCCESS", (name, why(name))
    assert not k[name]["integrity"]["rejected"], (name, why(name))
    assert v[name]["verdict"] in ("baseline", "faster", "slower", "same", "ambiguous"), (name, v[name])
    t = k[name]["timing"]
    assert t["success"] and len(t["processes"]) >= 2 and all(p["samples"] > 0 for p in t["processes"]), t["processes"]
    assert len(t["checked_samples"]) >= 4 and all(c["passed"] and c["compared_with_reference"] for c in t["checked_samples"])
# attack -> (where the rejection must come from: a failed integrity check, or a correctness error text)
attacks = {
    "setup_work": ("error", "degenerate"),            # outputs re-poisoned after setup
    "setup_copy": ("check", "timed_outputs"),         # fresh inputs in place: the hidden copy is stale
    "early_exit": ("check", "manifest"),              # exit 0 without a manifest is FAILED
    "read_reference": ("error", "constant 0.5"),      # the reference's files were deleted
    "memo_pointer": ("check", "timed_outputs"),
    "memo_content": ("check", "input_reuse"),         # fast only on repeated inputs
    "mode_sniff": ("check", "timed_outputs"),
    "half_precision": ("error", "outside atol"),
    "size_sniff": ("error", "NaN/inf pattern"),
    "stale_output": ("check", "timed_outputs"),       # re-poisoned before checked launches
    "clock_interpose": ("check", "clock_bracket"),    # harness clock vs the supervisor's
    # issue 35: the candidate owns the harness (relay.cpp sits in front of the control channel)
    # times scaled by 0.6: its kernel thread's CPU time per sample exceeds the claim (cpu_floor: load
    # does not inflate CPU time; clock_gain, the supervisor's clock, missed it in 4 of 18 runs with
    # three suites at once on the 2-core VM)
    "shave": ("check", "cpu_floor"),
    "check_sniff": ("check", "input_reuse"),          # full work only after fresh inputs (55% otherwise)
    "lazy_probe": ("check", "timed_outputs"),         # nothing computed; outputs read by the supervisor, complete
    # computed after replying to `inputs`: CPU time seen in /proc (between commands, or inside the
    # next sample's bracket when that command comes at once)
    "between": ("check", ("cpu_between_samples", "clock_bracket")),
    # CPU time of the harness's tree during `inputs` beyond its busiest thread (the generator) is
    # charged to the fresh sample it precedes: fresh samples then cost what the memoised work costs
    "helper": ("check", "input_reuse"),               # a helper process computes during `inputs`
    "helper_thread": ("check", "input_reuse"),        # the relay thread computes after the generator, before the reply
    # the answer written into the exchange memory after the reply: the kernel stops the harness's
    # process group in the write of the reply (O_ASYNC + F_SETSIG SIGSTOP on the supervisor's end
    # of the control channel), so nothing of it runs after the reply however late the supervisor
    # wakes up (before: caught only when it woke in time, else by clock_bracket's ~0 us)
    "race": ("check", "timed_outputs"),
    "race_timed": ("check", "timed_outputs"),          # the same with plausible times (spun, claimed half)
    "race_escape": ("check", "timed_outputs"),         # a helper that left the group (setsid): named at the stop
    # the answer computed after the harness's timer, before the reply, on fresh samples only: the
    # supervisor's clock shows it against the partner sample run right before each fresh one's inputs
    "fresh_overtime": ("check", "fresh_overhead"),
}
for name, (kind, needle) in attacks.items():
    x = k[name]
    assert v[name]["verdict"] == "not_ranked", (name, v[name])
    if kind == "check":
        failed = [c["name"] for c in x["integrity"]["checks"] if c["status"] == "fail"]
        assert set(needle if isinstance(needle, tuple) else (needle,)) & set(failed), (name, failed, why(name))
        if kind == "check":
            print("%-16s rejected by %s" % (name, ", ".join(failed)))
    else:
        assert x["correctness_state"] == "FAILED" and needle in " ".join(x["errors"]), (name, why(name))
    # compare's table: a row "<mark> <index> <id> ...", then the reason on the next line
    lines = console.splitlines()
    row = [i for i, l in enumerate(lines) if l.split()[1:3] == [str(list(k).index(name)), name]]
    assert row and "rejected: " in lines[row[0] + 1], (name, lines[row[0]:row[0] + 2] if row else console)
ranked = [i for i, _ in res["rankings"]]
assert sorted(ranked) == list(range(len(honest))), ranked
order = res["timing_order"]
assert order["processes_per_kernel"] >= 2 and len(order["first_rounds"]) == 3
assert order["first_rounds"][0] != order["first_rounds"][1] or order["first_rounds"][1] != order["first_rounds"][2]
ref = json.load(open(sys.argv[1]))["reference"]
assert ref["correctness_method"] == "reference"
print("adversarial host: %d attacks rejected, %d honest accepted" % (len(attacks), len(honest)))
PY
echo "ok: adversarial host golden"
