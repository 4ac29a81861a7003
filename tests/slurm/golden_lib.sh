# Sourced by the tests/golden/slurm_*/run.sh cases (after tests/golden/lib/common.sh): starts a
# private single-node Slurm cluster (tests/slurm/cluster.sh), exports SLURM_CONF, stops it on exit.
# Exits 77 (skip, reason printed) when the cluster cannot be started here.
slurm_up() {
  SLURM_DIR=$(mktemp -d /tmp/magpie_slurm.XXXXXX)  # short: munge's unix socket path lives in it
  trap 'bash "$MAGPIE_SOURCE_DIR/tests/slurm/cluster.sh" stop "$SLURM_DIR"; rm -rf "$SLURM_DIR" "$GOLDEN_TMP"' EXIT
  local out rc=0
  out=$(bash "$MAGPIE_SOURCE_DIR/tests/slurm/cluster.sh" start "$SLURM_DIR") || rc=$?
  [ "$rc" -eq 77 ] && exit 77
  [ "$rc" -eq 0 ] || fail "tests/slurm/cluster.sh start exited $rc"
  eval "$out"
  export SLURM_CONF
  SLURM_ACCOUNTING=$(cat "$SLURM_DIR/accounting")
}

# batch_dir OUTPUT_DIR: the newest batch directory under OUTPUT_DIR/batches
batch_dir() { ls -d "$1"/batches/batch_* 2>/dev/null | sort | tail -n 1 || true; }  # empty before the batch exists (not an error under set -e)

# wait_job_state BATCH_DIR JOB STATE [SECONDS]: until batch.json records JOB in STATE
wait_job_state() {
  local n=$(( ${4:-120} * 2 ))
  for _ in $(seq "$n"); do
    python3 - "$1/batch.json" "$2" "$3" <<'PY' && return 0
import json, sys
b = json.load(open(sys.argv[1]))
sys.exit(0 if any(j["name"] == sys.argv[2] and j["last"]["state"] == sys.argv[3] for j in b["jobs"]) else 1)
PY
    "$MAGPIE_BIN" jobs status "$1" > "$1/.wait_status.txt" 2>&1 || true
    sleep 0.5
  done
  local seen
  seen=$(python3 -c 'import json,sys; print(", ".join(j["name"] + "=" + j["last"]["state"] for j in json.load(open(sys.argv[1]))["jobs"]))' "$1/batch.json" 2>&1)
  fail "job $2 of $1 never reached $3 (states: $seen; last 'jobs status': $(tail -n 8 "$1/.wait_status.txt"))"
}
