#!/usr/bin/env bash
# A real single-node Ray cluster (head with the dashboard and its Jobs API) on loopback for
# magpie's tests, all state under one directory. Ray comes from scripts/install-deps.sh
# (a virtualenv at /opt/magpie-ray; MAGPIE_RAY_BIN names another `ray`).
#
#   tests/ray/cluster.sh start DIR   start; prints "export RAY_API_SERVER_ADDRESS=http://127.0.0.1:PORT"
#   tests/ray/cluster.sh stop DIR    stop this cluster's processes (found by DIR in their command line)
#
# Run it inside a private network namespace (tests/ray/golden_lib.sh does): Ray advertises the
# host's first non-loopback address otherwise. start exits 77 with the reason on stderr when the
# cluster cannot be made here (Ray not installed, the head does not come up).
set -uo pipefail
skip() { echo "SKIP: $*" >&2; exit 77; }
log() { echo "ray cluster: $*" >&2; }

ray_bin() {
  if [ -n "${MAGPIE_RAY_BIN:-}" ]; then echo "$MAGPIE_RAY_BIN"; return; fi
  if [ -x /opt/magpie-ray/bin/ray ]; then echo /opt/magpie-ray/bin/ray; return; fi
  command -v ray || true
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# PIDs of this cluster: every process whose command line names DIR (Ray puts the temp dir in
# the arguments of the GCS, raylet, dashboard and agents) or its GCS address (the Ray Client
# server), and their descendants.
cluster_pids() {
  local p cmd pids="" gcs="@none@"
  [ -f "$DIR/gcs_address" ] && gcs=$(cat "$DIR/gcs_address")
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null < "$p/cmdline") || continue
    case "$cmd" in *"$DIR/"*|*"--address=$gcs "*|*"--gcs-address=$gcs "*) pids="$pids ${p#/proc/}" ;; esac
  done
  for p in $pids; do echo "$p"; pgrep -P "$p" 2>/dev/null; done | sort -u
}

start() {
  local RAY; RAY=$(ray_bin)
  [ -n "$RAY" ] && [ -x "$RAY" ] || skip "Ray is not installed (scripts/install-deps.sh puts ray[default] in /opt/magpie-ray; or set MAGPIE_RAY_BIN)"
  mkdir -p "$DIR/tmp" "$DIR/log"
  local gcs dash t0; gcs=$(free_port); dash=$(free_port); t0=$(date +%s.%N)
  echo "127.0.0.1:$gcs" > "$DIR/gcs_address"
  RAY_USAGE_STATS_ENABLED=0 "$RAY" start --head --node-ip-address=127.0.0.1 --port="$gcs" \
    --dashboard-host=127.0.0.1 --dashboard-port="$dash" --include-dashboard=true \
    --num-cpus="${MAGPIE_RAY_CPUS:-8}" --num-gpus=0 --temp-dir="$DIR/tmp" --disable-usage-stats \
    > "$DIR/log/start.log" 2>&1 || { tail -n 30 "$DIR/log/start.log" >&2; skip "ray start --head failed"; }
  local ok=0
  for _ in $(seq 150); do
    python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$dash/api/version', timeout=2)" \
      >/dev/null 2>&1 && { ok=1; break; }
    sleep 0.4
  done
  [ "$ok" = 1 ] || { tail -n 30 "$DIR/log/start.log" >&2; stop; skip "the Ray dashboard did not answer on 127.0.0.1:$dash"; }
  echo "http://127.0.0.1:$dash" > "$DIR/address"
  log "head up in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s, dashboard http://127.0.0.1:$dash ($("$RAY" --version))"
  echo "export RAY_API_SERVER_ADDRESS=http://127.0.0.1:$dash"
}

# A process that has not exited (zombies whose parent does not reap them count as gone).
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

stop() {
  local pids; pids=$(cluster_pids)
  [ -z "$pids" ] && return 0
  kill -TERM $pids 2>/dev/null
  for _ in $(seq 15); do  # the GCS and the autoscaler monitor may ignore SIGTERM for long: 3 s, then SIGKILL
    pids=$(for p in $pids; do alive "$p" && echo "$p"; done)
    [ -z "$pids" ] && return 0
    sleep 0.2
  done
  kill -KILL $pids 2>/dev/null
  return 0
}

[ $# -eq 2 ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
DIR=$(cd "$2" 2>/dev/null && pwd) || { mkdir -p "$2" && DIR=$(cd "$2" && pwd); }
case "$1" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
