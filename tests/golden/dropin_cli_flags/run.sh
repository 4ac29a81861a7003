#!/usr/bin/env bash
# Every Magpie CLI flag of research magpie.md §2 parses; the ones that do nothing here say so.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
T="$GOLDEN_TMP"
cd "$T"
printf 'int main() { return 0; }\n' > k.cpp
ok() {  # ok NAME ARGS... : exit 0 required
  local name=$1; shift
  "$MAGPIE_BIN" "$@" > "$T/$name.out" 2> "$T/$name.err" || fail "$name: exit $? for: $*; $(tail -5 "$T/$name.err")"
}
# global options (before the subcommand)
ok gpuinfo --gpu-info
grep -q "^GPU Information:" "$T/gpuinfo.out" || fail "--gpu-info format"
ok version --version
ok help --help
for sub in analyze compare benchmark targeted-trace; do ok "help_$sub" "$sub" --help; done
ok globals -c missing_config.yaml -v -e local -w 2 --docker-image img:1 analyze k.cpp -t true --no-perf -o res
# analyze / compare flags, including the latency-line ones (accepted, said on stderr)
printf 'kernel:\n  id: y\n  type: host\n  source_files: [k.cpp]\n  testcase_command: "true"\n' > k.yaml
ok analyze analyze --kernel-config k.yaml -o res --no-perf
ok analyze_short analyze -k k.yaml -o res --no-perf
ok analyze2 analyze k.cpp -t true --type host --compile-cmd true --no-perf --output-dir res --no-latency \
  --latency-method both --latency-rep-ms 20
for f in --no-latency --latency-method --latency-rep-ms; do
  grep -q -- "$f is accepted for Magpie compatibility but not used" "$T/analyze2.err" || fail "no note for $f"
done
ok compare compare k.cpp k.cpp -t true --type host --compile-cmd true --baseline 1 --no-perf -o res --no-latency
# benchmark flags (planned only: --dry-run)
ok bench benchmark vllm -m org/m -p bf16 --tp 2 --concurrency 8 --input-len 128 --output-len 64 --torch-profiler \
  --system-profiler --run-mode local --run-kind diagnostic --docker-image img:2 --inferencex-path /opt/ix \
  --benchmark-script s.sh --timeout 600 -o res --dry-run
check_json "$T/bench.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["config"]["envs"]["TP"] == "2" and r["config"]["envs"]["CONC"] == "8"
assert r["config"]["profiler"]["system_profiler"]["enabled"] is True and r["run_kind"] == "diagnostic"
assert "skipped" in r["server"]["system_profiler"], r["server"]["system_profiler"]
PY
grep -q -- "--inferencex-path is accepted for Magpie compatibility" "$T/bench.err" || fail "no --inferencex-path note"
grep -q -- "--benchmark-script is accepted for Magpie compatibility" "$T/bench.err" || fail "no --benchmark-script note"
ok bench_yaml benchmark -b "$MAGPIE_SOURCE_DIR/examples/benchmarks/vllm_local.yaml" --run-mode local --run-kind diagnostic --dry-run
if "$MAGPIE_BIN" benchmark vllm -m m --agentx --agentx-mode fast --dry-run > /dev/null 2> "$T/agentx.err"; then fail "--agentx accepted"; fi
grep -q "AgentX recipes" "$T/agentx.err" || fail "--agentx: unclear refusal"
# standalone gap analysis flags
ok gap benchmark --trace-dir "$MAGPIE_SOURCE_DIR/examples/traces" --top-k 5 --start-pct 10 --end-pct 90 \
  --min-duration-us 0 --categories kernel gpu --ignore-categories gpu_user_annotation --no-rank-csv -o "$T/gap"
grep -q "Gap Analysis (10" "$T/gap.out" || fail "gap header: $(head -3 "$T/gap.out")"
# targeted-trace subcommands
ok tt_help1 targeted-trace adapt-torch --help
ok tt_help2 targeted-trace postprocess --help
if "$MAGPIE_BIN" targeted-trace > /dev/null 2>&1; then fail "targeted-trace without a command: exit 0"; fi
echo "ok: every Magpie flag parses"
