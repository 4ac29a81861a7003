# Sourced by the tests/golden/ray_*/run.sh cases (after tests/golden/lib/common.sh): re-runs the
# test inside a private network namespace (only loopback: every Ray process binds and talks on
# 127.0.0.1), starts a single-node Ray head there (tests/ray/cluster.sh), exports
# RAY_API_SERVER_ADDRESS (magpie's default Ray address) and stops the cluster on exit.
# Exits 77 (skip, reason printed) when no namespace can be made or the cluster cannot start.
# batch_dir and wait_job_state come from the Slurm tests' library (engine-neutral: each
# 'magpie jobs status' round also submits Ray jobs whose dependencies have ended).
source "$MAGPIE_SOURCE_DIR/tests/slurm/golden_lib.sh"
ray_up() {
  if [ "${MAGPIE_RAY_NETNS:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "SKIP: the Ray tests need root for a private network namespace (unshare -n)" >&2; exit 77; }
    command -v unshare >/dev/null && command -v ip >/dev/null && unshare -n true 2>/dev/null \
      || { echo "SKIP: cannot make a network namespace here (unshare -n, ip)" >&2; exit 77; }
    rm -rf "$GOLDEN_TMP"
    exec unshare -n -- env MAGPIE_RAY_NETNS=1 bash -c 'ip link set lo up && exec bash "$0"' "$0"
  fi
  RAY_DIR=$(mktemp -d /tmp/magpie_ray.XXXXXX)  # short: Ray's unix socket paths live in it
  trap 'bash "$MAGPIE_SOURCE_DIR/tests/ray/cluster.sh" stop "$RAY_DIR"; rm -rf "$RAY_DIR" "$GOLDEN_TMP"' EXIT
  local out rc=0
  out=$(bash "$MAGPIE_SOURCE_DIR/tests/ray/cluster.sh" start "$RAY_DIR") || rc=$?
  [ "$rc" -eq 77 ] && exit 77
  [ "$rc" -eq 0 ] || fail "tests/ray/cluster.sh start exited $rc"
  eval "$out"
  export RAY_API_SERVER_ADDRESS
}

# ray_down: stop the cluster now (the dashboard-down cases); the EXIT trap then has nothing left.
ray_down() { bash "$MAGPIE_SOURCE_DIR/tests/ray/cluster.sh" stop "$RAY_DIR"; }

