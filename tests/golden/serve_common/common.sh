# Shared setup of the serve_* golden tests (sourced; not a test itself): the simulated
# server, the fake vllm/sglang/atom on PATH / PYTHONPATH, a temp dir, helpers.
set -euo pipefail
: "${MAGPIE_BIN:?}" "${MAGPIE_SOURCE_DIR:?}" "${MAGPIE_BUILD_DIR:?}"
SIM="$MAGPIE_BUILD_DIR/tests/sim/magpie_sim_server"
if [ ! -x "$SIM" ]; then echo "skip: $SIM is not built (ninja magpie_sim_server)"; exit 77; fi
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
export MAGPIE_SIM_SERVER="$SIM" MAGPIE_NO_PROGRESS=1
export PATH="$MAGPIE_SOURCE_DIR/tests/sim/bin:$PATH"
export PYTHONPATH="$MAGPIE_SOURCE_DIR/tests/sim/python${PYTHONPATH:+:$PYTHONPATH}"
TMP=$(mktemp -d)
export MAGPIE_SIM_PID_DIR="$TMP/pids"
mkdir -p "$MAGPIE_SIM_PID_DIR"
OWN_PIDS=()
cleanup() {
  for p in "${OWN_PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# Starts the simulator in the background on a free port; sets SIM_URL.
start_sim() {
  rm -f "$TMP/port"
  "$SIM" --port-file "$TMP/port" --record "$TMP/truth.jsonl" "$@" 2>"$TMP/sim.log" &
  OWN_PIDS+=($!)
  for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
  [ -s "$TMP/port" ] || fail "simulator did not start: $(cat "$TMP/sim.log")"
  SIM_URL="http://127.0.0.1:$(cat "$TMP/port")"
}

# The workspace created under $1.
workspace_in() { ls -d "$1"/benchmark_* 2>/dev/null | head -1; }

# No process recorded by the fake servers (server, engine worker) is still alive.
assert_no_orphans() {
  for f in "$MAGPIE_SIM_PID_DIR"/*.pid; do
    [ -e "$f" ] || continue
    local pid; pid=$(cat "$f")
    # killed processes may stay zombies for a moment until init reaps them
    for _ in $(seq 30); do
      [ -e "/proc/$pid" ] || break
      [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = "Z" ] && break
      sleep 0.1
    done
    if [ -e "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != "Z" ]; then
      fail "orphan process left: $(basename "$f") pid $pid ($(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null))"
    fi
  done
}

# check_json FILE PYTHON-ASSERTIONS (r = the parsed JSON)
check_json() {
  python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[2])
PY
}
