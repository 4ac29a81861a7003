#!/usr/bin/env bash
# Magpie's Docker server reuse (examples/benchmarks/benchmark_sglang_docker_reuse.yaml's shape):
# server_lifecycle with run_mode docker keeps one detached, named container between runs, reuses it
# while the server settings match (client values may change), refuses other settings without
# cleanup, replaces a container that died, and a cleanup run saves the container's output as
# reuse_server_container.log and removes it. `docker` is a stand-in (bin/docker) that runs the
# fake sglang as a local process.
set -euo pipefail
source "${MAGPIE_SOURCE_DIR:?set MAGPIE_SOURCE_DIR}/tests/golden/serve_common/common.sh"
export MAGPIE_SIM_ARGS="--decode-step-ms 1"
export PATH="$MAGPIE_SOURCE_DIR/tests/golden/dropin_docker_reuse/bin:$PATH" FAKE_DOCKER_STATE="$TMP/docker"
# a failing step must not leave a detached stand-in container (a server process) behind
remove_containers() {
  for r in "$FAKE_DOCKER_STATE"/*.json; do [ -e "$r" ] && docker rm -f "$(basename "$r" .json)" > /dev/null 2>&1 || true; done
  cleanup
}
trap remove_containers EXIT
# The stand-in dockerd: containers are its children, not magpie's (magpie ends its own leftovers).
docker daemon > "$TMP/dockerd.log" 2>&1 &
OWN_PIDS+=($!)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
name="magpie-server-sglang-$port"
runs=0
bench() {  # bench NAME CONC CLEANUP [EXTRA_SGLANG_ARGS]
  cat > "$TMP/$1.yaml" <<YAML
benchmark:
  framework: sglang
  model: sim-model
  precision: fp8
  run_mode: docker
  docker_image: "your-sglang-image:version"
  benchmark_script: "sglang_mi355x.sh"
  timeout_seconds: 7200

  envs:
    TP: 1
    PORT: $port
    CONC: $2
    ISL: 16
    OSL: 4
    NUM_PROMPTS: 4
    RANDOM_RANGE_RATIO: 1
    EXTRA_SGLANG_ARGS: "${4:---context-length 4096 --disable-radix-cache}"

  profiler:
    torch_profiler:
      enabled: false

  server_lifecycle:
    enabled: true
    cleanup: $3
    force_reuse: false
    pid_dir: $TMP/state
    server_ready_timeout_s: 120
YAML
  "$MAGPIE_BIN" benchmark --benchmark-config "$TMP/$1.yaml" -o "$TMP/$1" > "$TMP/$1.log" 2>&1
}
docker_runs() { grep -c "^run -d --name $name " "$FAKE_DOCKER_STATE/calls" || true; }

# 1. the first run starts a detached container and leaves it running
bench first 1 false || fail "first: $(tail -20 "$TMP/first.log")"
[ "$(docker inspect -f '{{.State.Running}}' "$name")" = true ] || fail "the container did not outlive its run"
check_json "$TMP/state/sglang_$port.json" 'assert r["container"] == "'"$name"'" and r["metadata"]["image"] == "your-sglang-image:version", r'
[ ! -e "$TMP/state/sglang_$port.pid" ] || fail "docker mode wrote a pid file"
check_json "$(workspace_in "$TMP/first")/benchmark_report.json" '
assert r["success"] is True and r["server"]["lifecycle"]["reused"] is False, r["errors"]
assert r["server"]["launch_command"][:3] == ["docker", "run", "-d"], r["server"]["launch_command"]
assert "kept running (container" in r["server"]["exit"], r["server"]["exit"]
'
[ "$(docker_runs)" = 1 ] || fail "docker run calls: $(cat "$FAKE_DOCKER_STATE/calls")"

# 2. a client-only change (CONC) reuses the container: no second docker run
bench second 2 false || fail "second: $(tail -20 "$TMP/second.log")"
check_json "$(workspace_in "$TMP/second")/benchmark_report.json" '
assert r["success"] is True and r["server"]["lifecycle"]["reused"] is True, r["server"]
assert r["server"]["lifecycle"]["container"] == "'"$name"'"
assert r["throughput"]["completed_requests"] == 4
'
[ "$(docker_runs)" = 1 ] || fail "the reuse run started a container"

# 3. other server settings without cleanup: refused, the container is left alone
if bench other 1 false "--context-length 8192"; then fail "a container with other settings was reused"; fi
check_json "$(workspace_in "$TMP/other")/benchmark_report.json" '
assert r["success"] is False and any("started with other settings" in e for e in r["errors"]), r["errors"]
'
[ "$(docker inspect -f '{{.State.Running}}' "$name")" = true ] || fail "the refused run stopped the container"

# 4. a container that died is replaced (its stale record removed)
docker stop -t 1 "$name" > /dev/null
bench revive 1 false || fail "revive: $(tail -20 "$TMP/revive.log")"
grep -q "is gone; removing its state" "$TMP/revive.log" || fail "no stale-state message: $(cat "$TMP/revive.log")"
[ "$(docker_runs)" = 2 ] || fail "the dead container was not replaced"

# 5. the final run (cleanup: true) reuses, saves the output and removes the container and state
bench last 4 true || fail "last: $(tail -20 "$TMP/last.log")"
ws=$(workspace_in "$TMP/last")
check_json "$ws/benchmark_report.json" '
assert r["server"]["lifecycle"]["reused"] is True and "server_lifecycle cleanup" in r["server"]["exit"], r["server"]
'
grep -q "fake sglang" "$ws/reuse_server_container.log" || fail "no reuse_server_container.log"
if docker inspect -f '{{.State.Running}}' "$name" 2>/dev/null; then fail "cleanup left the container"; fi
[ ! -e "$TMP/state/sglang_$port.json" ] || fail "cleanup left the state file"
assert_no_orphans
echo "dropin_docker_reuse: ok"
