#!/usr/bin/env bash
# Client benchmark: how many requests/s and streamed tokens/s magpie's serving client sustains
# on one core against a fast local server (the simulator, on another core), side by side with a
# Python aiohttp client doing the same work; then the TTFT measurement error of both against the
# simulator's ground truth with a paced (continuous-batching) timing model.
# Usage: bench/serve/run.sh          env: BUILD_DIR (default build), REPEATS (3), N (2000),
#        CONC (64), OSL (64 tokens per request), PYTHON (python3 with aiohttp).  Not a ctest: it takes about a minute.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD_DIR:-$root/build}
MAGPIE=${MAGPIE_BIN:-$BUILD/magpie}
SIM=$BUILD/tests/sim/magpie_sim_server
REPEATS=${REPEATS:-3} N=${N:-2000} CONC=${CONC:-64} OSL=${OSL:-64}
[ -x "$MAGPIE" ] && [ -x "$SIM" ] || { echo "build magpie and magpie_sim_server first ($BUILD)"; exit 2; }
PY=${PYTHON:-python3}
"$PY" -c "import aiohttp" 2>/dev/null || { echo "$PY lacks aiohttp (python3-aiohttp); set PYTHON"; exit 2; }
ncpu=$(nproc)
client_cpu=0; server_cpu=$(( ncpu > 1 ? 1 : 0 ))
# Simulators sharing the port (SO_REUSEPORT), one per core 1..SERVERS, so that the one-core
# client is the bottleneck where the host has the cores (default min(4, cores - 1)).
SERVERS=${SERVERS:-$(( ncpu > 5 ? 4 : (ncpu > 1 ? ncpu - 1 : 1) ))}
tmp=$(mktemp -d); sim_pids=()
trap 'for p in "${sim_pids[@]:-}"; do [ -n "$p" ] && kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
export MAGPIE_NO_PROGRESS=1

start_sim() {  # start_sim COUNT RECORD ARGS...: COUNT simulators on one port
  local count=$1 rec=$2; shift 2
  rm -f "$tmp/port"
  taskset -c $server_cpu "$SIM" --reuse-port --port-file "$tmp/port" --record "$rec" "$@" 2>/dev/null &
  sim_pids=($!)
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  local port; port=$(cat "$tmp/port")
  for k in $(seq 2 "$count"); do
    taskset -c $(( k % ncpu == 0 ? 1 : k % ncpu )) "$SIM" --reuse-port --port "$port" --record "$rec.$k" "$@" 2>/dev/null &
    sim_pids+=($!)
  done
  sleep 0.2
  url="http://127.0.0.1:$port"
}
stop_sim() { kill "${sim_pids[@]}"; wait "${sim_pids[@]}" 2>/dev/null || true; sim_pids=(); }
sim_ticks() { local t=0; for p in "${sim_pids[@]}"; do t=$(( t + $(cpu_ticks $p) )); done; echo $t; }
cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
magpie_run() {  # magpie_run OUT N CONC OSL
  taskset -c $client_cpu "$MAGPIE" -q benchmark --base-url "$url" --served-model-name sim-model --random-input-len 16 \
    --random-output-len "$4" --num-prompts "$2" --max-concurrency "$3" --num-warmups 0 --no-continuous-usage -o "$1" > /dev/null
  ls -d "$1"/benchmark_*
}
python_run() {  # python_run OUTFILE N CONC OSL
  taskset -c $client_cpu "$PY" "$root/bench/serve/aiohttp_client.py" --url "$url" --num-prompts "$2" --concurrency "$3" \
    --input-len 16 --output-len "$4" > "$1"
}
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $ncpu cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "client on core $client_cpu, $SERVERS simulator(s) from core $server_cpu; $N requests x $OSL tokens, concurrency $CONC, 1 token per SSE event"
echo
throughput_phase() {  # throughput_phase EVENTS_PER_WRITE
  echo "== throughput: simulator without delays, $1 SSE event(s) per socket write =="
  start_sim "$SERVERS" "$tmp/fast$1.jsonl" --decode-step-ms 0 --max-batch 100000 --burst-steps "$1"
  printf "%-4s %-8s %10s %12s %11s %11s %16s\n" run client "req/s" "tokens/s" "client CPU" "servers CPU" "tokens/CPU-s"
  local m_tps=() p_tps=() m_eff=() p_eff=() m_rps=() p_rps=()
  for r in $(seq "$REPEATS"); do
    for who in magpie aiohttp; do
      local t0 s0 w rps tps cpu; t0=$(sim_ticks); s0=$(date +%s.%N)
      if [ $who = magpie ]; then
        /usr/bin/time -f "%U %S" -o "$tmp/cpu" bash -c "$(declare -f magpie_run); url=$url MAGPIE=$MAGPIE client_cpu=$client_cpu magpie_run $tmp/m$1_$r $N $CONC $OSL" > "$tmp/ws"
        w=$(cat "$tmp/ws")/serving_result.json
      else
        /usr/bin/time -f "%U %S" -o "$tmp/cpu" bash -c "$(declare -f python_run); url=$url PY=$PY root=$root client_cpu=$client_cpu python_run $tmp/p$1_$r.json $N $CONC $OSL"
        w=$tmp/p$1_$r.json
      fi
      local wall; wall=$(python3 -c "print($(date +%s.%N)-$s0)")
      srv=$(python3 -c "print(f'{($(sim_ticks)-$t0)/100/$wall*100:.0f}%')")
      rps=$(field "$w" request_throughput); tps=$(field "$w" output_throughput)
      [ "$(field "$w" completed)" = "$N" ] || echo "warning: $who completed $(field "$w" completed) of $N"
      read -r cu cs < "$tmp/cpu"
      cpu=$(python3 -c "print(f'{($cu+$cs)/$wall*100:.0f}%')")
      eff=$(python3 -c "print(f'{$N*$OSL/($cu+$cs):.0f}')")
      printf "%-4s %-8s %10.0f %12.0f %11s %11s %16s\n" "$r" $who "$rps" "$tps" "$cpu" "$srv" "$eff"
      if [ $who = magpie ]; then m_tps+=("$tps"); m_rps+=("$rps"); m_eff+=("$eff"); else p_tps+=("$tps"); p_rps+=("$rps"); p_eff+=("$eff"); fi
    done
  done
  stop_sim
  python3 - "${m_rps[*]}" "${m_tps[*]}" "${p_rps[*]}" "${p_tps[*]}" "${m_eff[*]}" "${p_eff[*]}" <<'PY'
import statistics as st, sys
m_r, m_t, p_r, p_t, m_e, p_e = ([float(x) for x in a.split()] for a in sys.argv[1:7])
r = [a / b for a, b in zip(m_t, p_t)]
e = [a / b for a, b in zip(m_e, p_e)]
print(f"median magpie {st.median(m_r):.0f} req/s {st.median(m_t):.0f} tokens/s | aiohttp {st.median(p_r):.0f} req/s {st.median(p_t):.0f} tokens/s")
print(f"ratio tokens/s per run: {', '.join(f'{x:.1f}' for x in r)} (median {st.median(r):.1f}x); "
      f"ratio tokens per client CPU-second: {', '.join(f'{x:.1f}' for x in e)} (median {st.median(e):.1f}x)")
PY
  echo
}
throughput_phase 1
throughput_phase 8
echo
echo "== TTFT measurement error vs ground truth (paced simulator: 5 ms decode steps, 50k prefill tokens/s) =="
start_sim 1 "$tmp/paced.jsonl" --decode-step-ms 5 --prefill-tokens-per-s 50000 --max-batch 256
ws=$(magpie_run "$tmp/mp" 512 64 32)
python_run "$tmp/pp.json" 512 64 32
stop_sim
echo "magpie:  $(python3 "$root/bench/serve/compare.py" "$tmp/paced.jsonl" "$ws/requests.jsonl" magpie)"
echo "aiohttp: $(python3 "$root/bench/serve/compare.py" "$tmp/paced.jsonl" "$tmp/pp.json" python)"
