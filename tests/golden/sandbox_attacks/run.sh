#!/usr/bin/env bash
# The candidate sandbox (issue 35, docs/harness-protocol.md "The sandbox"): a testcase that
# attacks from inside `magpie analyze` — reads a file of the test's (the "reference's") next to
# its own directory, lists the run's correctness directory (every kernel's outputs), writes
# outside its output directory, connects to a loopback listener of the test, kills and reads the
# /proc of a process of the test (the "supervisor"), counts the processes it sees — is blocked
# in every case. The same testcase with MAGPIE_NO_SANDBOX=1 succeeds in every attack (so the
# test can fail), and stays correct.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
command -v unshare >/dev/null && unshare -U -m -p -n -f true 2>/dev/null || {
  echo "skip: this machine refuses user namespaces (the sandbox's warn path)"; exit 77; }
T="$GOLDEN_TMP"
mkdir -p "$T/bin" "$T/reference"
echo "reference-secret" > "$T/reference/outputs.txt"
printf 'int main() { return 0; }\n' > "$T/bin/k.cpp"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -c "
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', $port)); s.listen(8)
while True:
    c, _ = s.accept(); c.sendall(b'hello\n'); c.close()
" &
listener=$!
sleep 300 &
victim=$!
trap 'kill $listener $victim 2>/dev/null; rm -rf "$GOLDEN_TMP"' EXIT
# Each attack prints "ATTACK <name> succeeded" or "ATTACK <name> blocked"; exit 0 when all blocked.
# (The paths are written into the script: a directory named in the testcase's arguments is made
# readable to it.)
{ echo '#!/usr/bin/env bash'; echo "T=$T port=$port victim=$victim"; } > "$T/bin/attack.sh"
cat >> "$T/bin/attack.sh" <<'SH'
ok=0
report() { if [ "$2" = 1 ]; then echo "ATTACK $1 succeeded" >&2; ok=1; else echo "ATTACK $1 blocked" >&2; fi; }
r=0; grep -q reference-secret "$T/reference/outputs.txt" 2>/dev/null && r=1; report read_reference $r
r=0; ls -A "$(dirname "$(dirname "$MAGPIE_BENCH_OUT_DIR")")" 2>/dev/null | grep -qv '^correctness$' && r=1
report see_workspace $r  # the supervisor's workspace around the correctness directory
r=0; echo pwned > "$T/reference/pwned" 2>/dev/null && r=1; report write_outside $r
echo own > "$MAGPIE_BENCH_OUT_DIR/own.txt" 2>/dev/null || { echo "own output directory not writable"; ok=1; }
r=0; (exec 3<>"/dev/tcp/127.0.0.1/$port" && head -1 <&3 | grep -q hello) 2>/dev/null && r=1; report network $r
r=0; kill -0 "$victim" 2>/dev/null && r=1; report signal_supervisor $r
r=0; tr '\0' '\n' 2>/dev/null < "/proc/$victim/environ" | grep -q . && r=1; report ptrace_supervisor $r
r=0; [ "$(ls /proc | grep -c '^[0-9]')" -gt 8 ] && r=1; report see_processes $r
exit $ok
SH
chmod +x "$T/bin/attack.sh"
run_attack() {  # out-dir
  (cd "$T/bin" && "$MAGPIE_BIN" analyze "$T/bin/k.cpp" --type host --compile-cmd true \
    --testcase "$T/bin/attack.sh" --correctness-method exit_code --no-perf -o "$1") \
    > "$1.out" 2> "$1.err" || true
  ws=$(workspace_of "$1" analyze)
  [ -f "$ws/analyze_report.json" ] || fail "no report: $(tail -5 "$1.err")"
  echo "$ws/analyze_report.json"
}
rep=$(run_attack "$T/res")
check_json "$rep" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["results"][0]
assert k["correctness_state"] == "SUCCESS", ("an attack got through the sandbox", k["errors"])
PY
[ ! -e "$T/reference/pwned" ] || fail "the candidate wrote outside its directory"
kill -0 "$victim" || fail "the candidate killed a process of the test"
# A kernel whose YAML env names the test's directory (the reference's parent) in PYTHONPATH: the
# sandbox used to re-bind every such directory readable under its private /tmp, so the reference's
# file was readable again (before session 40's fix: "ATTACK read_reference succeeded").
printf 'kernel:\n  id: pythonpath_attack\n  type: host\n  testcase_command: ["%s/bin/attack.sh"]\n  env: {PYTHONPATH: "%s:/tmp"}\n' "$T" "$T" > "$T/bin/pp.yaml"
(cd "$T/bin" && "$MAGPIE_BIN" analyze -k "$T/bin/pp.yaml" --no-perf -o "$T/res_pp") > "$T/res_pp.out" 2> "$T/res_pp.err" || true
ws=$(workspace_of "$T/res_pp" analyze)
[ -f "$ws/analyze_report.json" ] || fail "no report (PYTHONPATH): $(tail -5 "$T/res_pp.err")"
check_json "$ws/analyze_report.json" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["results"][0]
assert k["correctness_state"] == "SUCCESS", ("an attack got through the sandbox via PYTHONPATH", k["errors"])
PY
# Control: the same attacks without the sandbox all succeed (the candidate then fails).
rep=$(MAGPIE_NO_SANDBOX=1 run_attack "$T/res_off")
check_json "$rep" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["results"][0]
assert k["correctness_state"] == "FAILED", k
text = " ".join(k["errors"])
for name in ("read_reference", "write_outside", "network", "ptrace_supervisor", "see_processes"):
    assert "ATTACK %s succeeded" % name in text, (name, text)
PY
[ -e "$T/reference/pwned" ] || fail "control: without the sandbox the write outside did not happen"
# The integrity block says whether the harness ran sandboxed (pass) or not (warn, with why).
EX="$MAGPIE_SOURCE_DIR/examples/host"
for mode in on off; do
  flag=(); [ "$mode" = off ] && flag=(--no-sandbox)
  "$MAGPIE_BIN" "${flag[@]}" analyze -k "$EX/analyze.yaml" -o "$T/int_$mode" --max-time 0.5 --min-time 0.05 \
    > /dev/null 2> "$T/int_$mode.err" || fail "analyze ($mode) failed: $(tail -5 "$T/int_$mode.err")"
  check_json "$(ls "$T"/int_$mode/*/analyze_report.json)" "$mode" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"][0]
found = []
def walk(o):
    if isinstance(o, dict):
        if o.get("name") == "sandbox" and "status" in o: found.append(o)
        for v in o.values(): walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(res)
assert found, "no sandbox check in the integrity block"
want = "pass" if sys.argv[2] == "on" else "warn"
assert all(c["status"] == want for c in found), found
if want == "warn": assert "--no-sandbox" in found[0]["detail"], found
PY
done
echo "sandbox: every attack blocked; without it they succeed; integrity check sandbox pass / warn"
