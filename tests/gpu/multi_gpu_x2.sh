#!/usr/bin/env bash
# Issue 13 on two NVIDIA GPUs (the nvidia-h200-x2 kind), in one device call of < 9 minutes:
#   tp     a two-rank tensor-parallel MLP with NCCL all-gather / all-reduce (tests/gpu/multi_gpu/
#          tp_mlp.py), profiled on both ranks; then the analysis of tests/gpu/multi_gpu/analyze.sh
#          (magpie benchmark --trace-dir per-rank CSVs, magpie trace report per rank with exposed
#          vs overlapped communication, and check_comm.py's independent sum of the NCCL kernels)
#   workers magpie compare of examples/cuda/compare.yaml on one GPU and with -w 2 on both
#          (CUDA_VISIBLE_DEVICES per worker, seen by an nvidia-smi sampler): same verdicts, wall ratio
#   select GPU 0 kept busy by a load process: gpu-info --select 1 must choose GPU 1, --select 2
#          must fail, compare -w 2 must run on GPU 1 only; nvidia-smi's real outputs are saved
#          (fixtures for tests/fixtures/gpu)
# Usage (repo root): bash tests/gpu/multi_gpu_x2.sh [BUILD_DIR]   (BUILD_DIR/magpie and
# BUILD_DIR/lib/libmagpie_cupti.so; or MAGPIE_BIN)
# MULTI_ONLY="tp workers select" runs a subset. Prints a table; logs in $OUT/multi_gpu_x2_logs.tar.gz.
# Exit: 0 all checks passed, 1 a check failed, 77 fewer than two NVIDIA GPUs (or no torch for
# the tp / select stages).
# For the CPU runs of the stages (tests/golden/{multi_rank_comm,compare_workers,gpu_select_busy}:
# stand-in nvidia-smi, generated traces, host kernels) only: MULTI_TP_CMD (a command given the
# trace directory, instead of tp_mlp.py), MULTI_COMPARE_YAML, MULTI_COMPARE_ARGS, MULTI_CHECK_ARGS
# and MULTI_LOAD_CMD replace the two-rank program, the compare file, its profiler and timing
# flags, extra check_workers.py flags, and the load process (a shell command that prints
# "load ready").
set -uo pipefail
want() { [ -z "${MULTI_ONLY:-}" ] || [[ " $MULTI_ONLY " == *" $1 "* ]]; }
command -v nvidia-smi >/dev/null || { echo "skip: no nvidia-smi (no NVIDIA GPU)"; exit 77; }
ngpu=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | grep -c .)
[ "${ngpu:-0}" -ge 2 ] || { echo "skip: $ngpu NVIDIA GPU(s), this test needs 2"; exit 77; }
if { want tp && [ -z "${MULTI_TP_CMD:-}" ]; } || { want select && [ -z "${MULTI_LOAD_CMD:-}" ]; }; then
  python3 -c "import torch; assert torch.cuda.device_count() >= 2" 2>/dev/null \
    || { echo "skip: python3 torch with 2 CUDA devices not available"; exit 77; }
fi
SRC=${MAGPIE_SOURCE_DIR:-$(pwd)}
COMPARE_YAML=${MULTI_COMPARE_YAML:-$SRC/examples/cuda/compare.yaml}
read -r -a COMPARE_ARGS <<< "${MULTI_COMPARE_ARGS:---profiler cupti --max-time 8 --max-noise 0.05}"
read -r -a CHECK_ARGS <<< "${MULTI_CHECK_ARGS:-}"
BIN=${MAGPIE_BIN:-$(cd "${1:-build}" && pwd)/magpie}
MG="$SRC/tests/gpu/multi_gpu"
OUT=${OUT:-$(mktemp -d)}
W=$(mktemp -d)
export MAGPIE_NO_PROGRESS=1 PYTHONUNBUFFERED=1 MAGPIE_BIN="$BIN" MAGPIE_HOME="${MAGPIE_HOME:-$SRC}" \
  MAGPIE_DATA_DIR="${MAGPIE_DATA_DIR:-$SRC/data}"
unset CUDA_VISIBLE_DEVICES
declare -a ROWS
FAILED=0
row() {  # row CHECK RESULT DETAIL
  ROWS+=("$(printf '%-34s %-5s %s' "$1" "$2" "$3")")
  [ "$2" = ok ] || [ "$2" = info ] || FAILED=1
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
finish() {
  echo
  printf '%-34s %-5s %s\n' check result detail
  printf '%s\n' "${ROWS[@]}"
  # $OUT takes files of 16 MiB at most: big non-JSON files (kernel binaries) stay out, listed.
  find "$W" -type f -size +2M ! -name '*.json' ! -name '*.json.gz' -printf '%P\n' > "$W/left_out.txt"
  tar -czf "$OUT/multi_gpu_x2_logs.tar.gz" -X "$W/left_out.txt" -C "$W" . 2>/dev/null
  echo "logs: $OUT/multi_gpu_x2_logs.tar.gz"
  exit $FAILED
}
trap 'for p in ${LOAD_PID:-} ${SMI_PID:-}; do kill "$p" 2>/dev/null; done' EXIT

nvidia-smi -L > "$W/smi_L.txt"
nvidia-smi --query-gpu=index,uuid,memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits > "$W/smi_query_gpu_idle.txt"
row "gpus" info "$(sed 's/ (UUID.*//' "$W/smi_L.txt" | paste -sd';')"

# --- tp: two ranks, NCCL, traces, analysis ------------------------------------------------
if want tp; then
  t0=$(date +%s%N)
  # timeout leads its own process group, where the ranks run: at 150 s it signals them all, and
  # ranks left behind after a normal exit are killed below (no GPU held in the later stages).
  timeout -k 5 150 bash -c "${MULTI_TP_CMD:-python3 \"$MG/tp_mlp.py\" --steps 5} \"\$1\"" _ "$W/traces" > "$W/tp_mlp.txt" 2>&1 &
  TP_PID=$!
  wait "$TP_PID"
  rc=$?
  kill -KILL -- "-$TP_PID" 2>/dev/null && echo "tp: killed processes left in its group" >> "$W/tp_mlp.txt"
  row "tp_mlp two ranks (NCCL)" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "rc=$rc $(ms_since "$t0") ms"
  if [ $rc -eq 0 ]; then
    bash "$MG/analyze.sh" "$W/traces" "$W/analysis" > "$W/comm_check.txt" 2>&1
    rc=$?
    cat "$W/comm_check.txt"
    row "comm: magpie vs NCCL event sums" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "$(tail -1 "$W/comm_check.txt")"
    python3 - "$W/traces" "$W/analysis/comm_check.json" > "$W/profiler_vs_check.txt" <<'PY'
import glob, json, sys
chk = {r["rank"]: r for r in json.load(open(sys.argv[2]))["ranks"]}
for p in sorted(glob.glob(sys.argv[1] + "/*.summary.json")):
    s = json.load(open(p))
    r = chk.get(s["rank"])
    if r:
        print("rank %d: torch profiler NCCL self device time %.1f us, trace NCCL kernel sum %.1f us, magpie total %.1f us, "
              "exposed %.1f us, overlapped %.1f us (TP rel err %.2g, %s, NCCL %s)" % (
              s["rank"], s["profiler_nccl_self_device_us"], r["nccl_sum_ns"] / 1e3, r["magpie"]["total_ns"] / 1e3,
              r["magpie"]["exposed_ns"] / 1e3, r["magpie"]["overlapped_ns"] / 1e3, s["rel_max_err"], s["device"], s["nccl"]))
PY
    while read -r l; do row "comm ${l%%:*}" info "${l#*: }"; done < "$W/profiler_vs_check.txt"
  else
    tail -20 "$W/tp_mlp.txt"
  fi
fi

# --- workers: compare on one GPU vs two ---------------------------------------------------
sample_apps() {  # sample_apps FILE: pid of a background sampler of the GPUs' compute processes
  ( while :; do nvidia-smi --query-compute-apps=gpu_uuid,pid --format=csv,noheader 2>/dev/null; sleep 0.2; done ) > "$1" &
  SMI_PID=$!
}
stop_sampler() { kill "$SMI_PID" 2>/dev/null; wait "$SMI_PID" 2>/dev/null; SMI_PID=; }
gpus_seen() { awk -F', *' 'NF>=2 {print $1}' "$1" | sort -u | while read -r u; do grep -n "$u" "$W/smi_L.txt" | sed -E 's/.*GPU ([0-9]+):.*/\1/'; done | sort -n | paste -sd, ; }
compare_run() {  # compare_run NAME VISIBLE WORKERS
  local t0 rc
  sample_apps "$W/apps_$1.txt"
  t0=$(date +%s%N)
  CUDA_VISIBLE_DEVICES=$2 timeout 120 "$BIN" -w "$3" compare -k "$COMPARE_YAML" "${COMPARE_ARGS[@]}" --seed 5 \
    -o "$W/$1" > "$W/$1.txt" 2> "$W/$1.err"
  rc=$?
  echo "$(ms_since "$t0")" > "$W/$1.ms"
  stop_sampler
  return $rc
}
if want workers; then
  compare_run one_gpu 0 1; rc1=$?
  compare_run two_gpus 0,1 2; rc2=$?
  last() { ls -d "$W/$1"/compare_*/compare_report.json 2>/dev/null | tail -1; }
  python3 "$MG/check_workers.py" "$(last one_gpu)" "$(last two_gpus)" "$W/one_gpu.ms" "$W/two_gpus.ms" \
    --smi-one "$(gpus_seen "$W/apps_one_gpu.txt")" --smi-two "$(gpus_seen "$W/apps_two_gpus.txt")" "${CHECK_ARGS[@]}" > "$W/workers_check.txt" 2>&1
  cat "$W/workers_check.txt"
  res=$(grep -q "^workers check: ok" "$W/workers_check.txt" && [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && echo ok || echo FAIL)
  row "compare -w 2 vs one GPU" "$res" "rc=$rc1/$rc2; $(grep '^wall' "$W/workers_check.txt")"
  row "compare verdicts" info "$(grep '^verdicts' "$W/workers_check.txt" | cut -c1-160)"
  row "compare GPUs used" info "$(grep '^workers:' "$W/workers_check.txt")"
fi

# --- select: GPU 0 busy -------------------------------------------------------------------
if want select; then
  cat > "$W/load.py" <<'PY'
import time, torch
x = torch.empty(20 * 2**30, dtype=torch.uint8, device="cuda")  # 20 GiB held
a = torch.randn(8192, 8192, device="cuda")
print("load ready", flush=True)
t = time.time()
while time.time() - t < 150:
    a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
PY
  CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0 bash -c "${MULTI_LOAD_CMD:-exec python3 $W/load.py}" > "$W/load.txt" 2>&1 &
  LOAD_PID=$!
  for _ in $(seq 45); do grep -q "load ready" "$W/load.txt" && break; sleep 1; done
  row "load process on GPU 0" "$(grep -q "load ready" "$W/load.txt" && echo ok || echo FAIL)" "$(tail -c 120 "$W/load.txt" | tr '\n' ' ')"
  sleep 2
  nvidia-smi --query-gpu=index,uuid,memory.used,memory.total,utilization.gpu --format=csv,noheader,nounits > "$W/smi_query_gpu_busy.txt"
  nvidia-smi --query-compute-apps=gpu_uuid,pid --format=csv,noheader > "$W/smi_compute_apps_busy.txt"
  nvidia-smi --query-gpu=index,name,uuid,memory.total,memory.used,compute_cap,driver_version --format=csv,noheader,nounits > "$W/smi_query_devices_busy.txt"
  "$BIN" gpu-info --select 1 --json > "$W/select1.json" 2> "$W/select1.err"; rc=$?
  chosen=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['indices'])" "$W/select1.json" 2>/dev/null)
  row "gpu-info --select 1 (GPU 0 busy)" "$([ $rc -eq 0 ] && [ "$chosen" = "[1]" ] && echo ok || echo FAIL)" \
    "chose $chosen; busy: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['busy'])" "$W/select1.json" 2>/dev/null)"
  "$BIN" gpu-info --select 2 > /dev/null 2> "$W/select2.err"; rc=$?
  row "gpu-info --select 2 refused" "$([ $rc -eq 1 ] && echo ok || echo FAIL)" "rc=$rc $(head -c 150 "$W/select2.err")"
  sample_apps "$W/apps_busy.txt"
  timeout 100 "$BIN" -w 2 compare -k "$COMPARE_YAML" "${COMPARE_ARGS[@]}" -o "$W/busy" \
    > "$W/busy.txt" 2> "$W/busy.err"; rc=$?
  stop_sampler
  devs=$(python3 -c "import glob,json,sys; print(json.load(open(sorted(glob.glob(sys.argv[1]+'/compare_*/compare_report.json'))[-1]))['results']['workers']['devices'])" "$W/busy" 2>/dev/null)
  row "compare -w 2 with GPU 0 busy" "$([ $rc -eq 0 ] && [ "$devs" = "['1']" ] && echo ok || echo FAIL)" "rc=$rc workers on $devs"
  kill "$LOAD_PID" 2>/dev/null; wait "$LOAD_PID" 2>/dev/null; LOAD_PID=
fi
finish
