#!/usr/bin/env bash
# Ctrl-C (SIGINT) to `magpie analyze` and `magpie compare` while a testcase has started a
# grandchild in a session of its own (setsid): the grandchild is ended (magpie is the subreaper
# of what it starts), stderr says the run was interrupted and names the workspace, the workspace
# is marked INCOMPLETE with the reason, and the results store records the run as interrupted.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
command -v setsid >/dev/null || { echo "skip: setsid not found"; exit 77; }
T="$GOLDEN_TMP"
printf 'int main() { return 0; }\n' > "$T/k1.cpp"
printf 'int main() { return 0; }\n' > "$T/k2.cpp"
# The testcase leaves a setsid grandchild (its argv carries a unique marker), then waits.
cat > "$T/tc.sh" <<'SH'
#!/usr/bin/env bash
setsid sleep "$1" &
touch "$2"
sleep 120
SH
chmod +x "$T/tc.sh"

alive() {  # a live (non-zombie) process with this argv word
  for d in /proc/[0-9]*; do
    [ "$(awk '{print $3}' "$d/stat" 2>/dev/null)" = "Z" ] && continue
    { tr '\0' '\n' < "$d/cmdline"; } 2>/dev/null | grep -qx -- "$1" && return 0
  done
  return 1
}

interrupt_case() {  # mode marker args...
  local mode=$1 marker=$2; shift 2
  local out="$T/res_$mode" started="$T/started_$mode"
  "$MAGPIE_BIN" "$mode" "$@" --type host --compile-cmd true --testcase "$T/tc.sh $marker $started" \
    --correctness-method exit_code --no-perf -o "$out" > "$T/$mode.out" 2> "$T/$mode.err" &
  local pid=$!
  for _ in $(seq 300); do [ -e "$started" ] && alive "$marker" && break; sleep 0.1; done
  alive "$marker" || fail "$mode: the testcase's setsid grandchild never started: $(tail -5 "$T/$mode.err")"
  kill -INT "$pid"
  local rc=0
  wait "$pid" || rc=$?
  [ "$rc" -eq 130 ] || fail "$mode: exit status $rc after SIGINT (want 130: died by SIGINT)"
  for _ in $(seq 30); do alive "$marker" || break; sleep 0.1; done
  alive "$marker" && fail "$mode: the setsid grandchild ($marker) survived SIGINT"
  local ws; ws=$(workspace_of "$out" "$mode")
  [ -n "$ws" ] || fail "$mode: no workspace"
  grep -q "interrupted by SIGINT" "$T/$mode.err" || fail "$mode: stderr does not say it was interrupted: $(cat "$T/$mode.err")"
  grep -qF "$ws" "$T/$mode.err" || fail "$mode: stderr does not name the workspace $ws"
  grep -q "INCOMPLETE" "$T/$mode.err" || fail "$mode: stderr does not say INCOMPLETE"
  [ -f "$ws/INCOMPLETE" ] || fail "$mode: $ws has no INCOMPLETE marker"
  check_json "$ws/INCOMPLETE" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["state"] == "interrupted" and m["reason"] == "interrupted by SIGINT" and m["signal"] == 2, m
PY
  [ ! -e "$ws/${mode}_report.json" ] || fail "$mode: an interrupted run wrote a report"
  "$MAGPIE_BIN" results list -o "$out" --json > "$T/$mode.list.json" || fail "$mode: results list failed"
  python3 - "$T/$mode.list.json" "$ws" "$mode" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1])) if r["workspace"] == sys.argv[2]]
assert len(rows) == 1, "the interrupted run is not in the results store"
r = rows[0]
assert r["state"] == "interrupted" and r["success"] is False and r["mode"] == sys.argv[3], r
assert r["summary"]["reason"] == "interrupted by SIGINT", r
PY
}

interrupt_case analyze 1031.0625 "$T/k1.cpp"
interrupt_case compare 1031.125 "$T/k1.cpp" "$T/k2.cpp"
# A run that finishes is not marked.
"$MAGPIE_BIN" analyze "$T/k1.cpp" --type host --compile-cmd true --testcase true --correctness-method exit_code \
  --no-perf -o "$T/res_ok" > /dev/null 2> "$T/ok.err" || fail "a plain analyze failed: $(tail -5 "$T/ok.err")"
ws=$(workspace_of "$T/res_ok" analyze)
[ ! -e "$ws/INCOMPLETE" ] || fail "a finished run is marked INCOMPLETE"
"$MAGPIE_BIN" results list -o "$T/res_ok" --json | python3 -c '
import json, sys
rows = json.load(sys.stdin)
assert rows and rows[0]["state"] == "complete", rows'
echo "interrupt_kernel: ok"
