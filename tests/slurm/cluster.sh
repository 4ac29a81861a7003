#!/usr/bin/env bash
# A real single-node Slurm cluster on loopback for magpie's tests: munged, (MariaDB + slurmdbd
# for sacct, when installed), slurmctld and slurmd, all as root, all state under one directory,
# private ports. Uses Debian's slurm-wlm, munge (and slurmdbd, mariadb-server) packages.
#
#   tests/slurm/cluster.sh start DIR   start; prints "export SLURM_CONF=DIR/slurm.conf" on stdout
#   tests/slurm/cluster.sh stop DIR    cancel its jobs, stop its daemons (by their pid files)
#
# start exits 77 with the reason on stderr when the cluster cannot be made here (not root,
# packages missing, a daemon does not come up). MAGPIE_SLURM_ACCOUNTING=0 skips slurmdbd.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
skip() { echo "SKIP: $*" >&2; exit 77; }
log() { echo "cluster: $*" >&2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_for SECONDS CMD...: retries CMD every 0.2 s
wait_for() {
  local n=$(( $1 * 5 )); shift
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}

tail_logs() { for f in "$DIR"/log/*.log "$DIR"/log/*.err; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }; done; }

start_munge() {
  mkdir -p "$DIR/munge" && chmod 700 "$DIR/munge"
  dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none && chmod 400 "$DIR/munge/munge.key"
  munged -f --socket="$DIR/munge/munge.sock" --key-file="$DIR/munge/munge.key" --pid-file="$DIR/run/munged.pid" \
    --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed" --num-threads=4 \
    || { tail_logs; skip "munged did not start"; }
  wait_for 10 munge -S "$DIR/munge/munge.sock" -n || { tail_logs; skip "munged does not answer"; }
}

# MariaDB + slurmdbd: returns 1 (accounting off) when they are not installed or do not start.
start_accounting() {
  [ "${MAGPIE_SLURM_ACCOUNTING:-1}" = 0 ] && return 1
  command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null && command -v mariadb-install-db >/dev/null || {
    log "slurmdbd/mariadb not installed: no accounting (sacct), squeue only"; return 1; }
  [ -f /usr/lib/x86_64-linux-gnu/slurm-wlm/accounting_storage_mysql.so ] || ls /usr/lib/*/slurm-wlm/accounting_storage_mysql.so >/dev/null 2>&1 \
    || { log "slurm-wlm-mysql-plugin missing: no accounting"; return 1; }
  DB_PORT=$(free_port); DBD_PORT=$(free_port)
  mariadb-install-db --datadir="$DIR/db" --user=root --skip-test-db --auth-root-authentication-method=socket \
    > "$DIR/log/dbinit.log" 2>&1 || { log "mariadb-install-db failed: no accounting"; return 1; }
  (mariadbd --no-defaults --datadir="$DIR/db" --socket="$DIR/run/mysql.sock" --port="$DB_PORT" --bind-address=127.0.0.1 \
     --user=root --pid-file="$DIR/run/mariadbd.pid" --log-error="$DIR/log/mariadb.err" --innodb-buffer-pool-size=32M \
     --innodb-lock-wait-timeout=900 > /dev/null 2>&1 &)
  wait_for 30 mariadb --no-defaults -S "$DIR/run/mysql.sock" -e "select 1" || { log "mariadbd did not start: no accounting"; return 1; }
  mariadb --no-defaults -S "$DIR/run/mysql.sock" -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'magpie'; \
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || return 1
  sed -e "s#@DIR@#$DIR#g; s#@DBD_PORT@#$DBD_PORT#g; s#@DB_PORT@#$DB_PORT#g" "$HERE/slurmdbd.conf.in" > "$DIR/slurmdbd.conf"
  chmod 600 "$DIR/slurmdbd.conf"
  return 0
}

write_slurm_conf() {
  local acct="AccountingStorageType=accounting_storage/none" jobacct="jobacct_gather/none"
  if [ "$ACCOUNTING" = 1 ]; then
    acct="AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort=$DBD_PORT\n"
    acct+="AccountingStoragePass=$DIR/munge/munge.sock"
    jobacct="jobacct_gather/linux"
  fi
  sed -e "s#@DIR@#$DIR#g; s#@CTLD_PORT@#$(free_port)#g; s#@SLURMD_PORT@#$(free_port)#g; s#@CLUSTER@#$CLUSTER#g" \
      -e "s#@NODE@#magpienode#g; s#@HOST@#$(hostname)#g; s#@JOBACCT@#$jobacct#g; s#@ACCOUNTING@#$acct#g" \
      "$HERE/slurm.conf.in" > "$DIR/slurm.conf"
  cp "$HERE/cgroup.conf" "$DIR/cgroup.conf"
}

node_idle() { sinfo -h -n magpienode -o %t | grep -qE '^(idle|mix|alloc)'; }

start() {
  [ "$(id -u)" -eq 0 ] || skip "a test Slurm cluster needs root (slurmd runs jobs as their users)"
  for t in munged munge slurmctld slurmd sbatch squeue scancel sinfo python3; do
    command -v "$t" >/dev/null || skip "$t not found: install slurm-wlm and munge (scripts/install-deps.sh)"
  done
  mkdir -p "$DIR"/{state,spool,log,run,db} || skip "cannot create $DIR"
  DIR="$(cd "$DIR" && pwd)"
  CLUSTER="magpie$(printf '%05d' $(( $$ % 100000 )))"
  export SLURM_CONF="$DIR/slurm.conf"
  start_munge
  ACCOUNTING=0
  start_accounting && ACCOUNTING=1
  write_slurm_conf
  if [ "$ACCOUNTING" = 1 ]; then
    slurmdbd > "$DIR/log/slurmdbd.out" 2>&1 || { tail_logs; skip "slurmdbd did not start"; }
    wait_for 30 sacctmgr -i add cluster "$CLUSTER" || { tail_logs; skip "slurmdbd does not answer"; }
  fi
  slurmctld -i > "$DIR/log/slurmctld.out" 2>&1 || { tail_logs; skip "slurmctld did not start"; }
  wait_for 30 scontrol ping || { tail_logs; skip "slurmctld does not answer"; }
  slurmd -N magpienode > "$DIR/log/slurmd.out" 2>&1 || { tail_logs; skip "slurmd did not start"; }
  wait_for 30 node_idle || { tail_logs; sinfo -N -l >&2; skip "the node did not become idle"; }
  echo "$ACCOUNTING" > "$DIR/accounting"
  log "up: $DIR (cluster $CLUSTER, accounting $([ "$ACCOUNTING" = 1 ] && echo slurmdbd || echo off))"
  echo "export SLURM_CONF=$DIR/slurm.conf"
}

stop_pid() {  # stop_pid NAME: TERM the pid in run/NAME.pid, KILL after 10 s
  local f="$DIR/run/$1.pid" pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f" 2>/dev/null); [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null || true
}

stop() {
  [ -d "$DIR" ] || return 0
  export SLURM_CONF="$DIR/slurm.conf"
  if [ -f "$SLURM_CONF" ] && [ -f "$DIR/run/slurmctld.pid" ]; then
    ids=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
    [ -n "${ids// /}" ] && scancel $ids 2>/dev/null && sleep 3
  fi
  for d in slurmd slurmctld slurmdbd mariadbd munged; do stop_pid "$d"; done
}

cmd="${1:-}"; DIR="${2:-}"
[ -n "$DIR" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }
case "$cmd" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
