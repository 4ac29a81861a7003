#!/usr/bin/env bash
# Client benchmark: how many requests/s and streamed tokens/s magpie's serving client sustains
# on one core against a fast local server (the simulator, on another core), side by side with a
# Python aiohttp client doing the same work; then the TTFT measurement error of both against the
# simulator's ground truth with a paced (continuous-batching) timing model.
# Usage: bench/serve/run.sh          env: BUILD_DIR (default build), REPEATS (3), N (2000),
#        CONC (64), OSL (64 tokens per request).  Not a ctest: it takes about a minute.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD_DIR:-$root/build}
MAGPIE=${MAGPIE_BIN:-$BUILD/magpie}
SIM=$BUILD/tests/sim/magpie_sim_server
REPEATS=${REPEATS:-3} N=${N:-2000} CONC=${CONC:-64} OSL=${OSL:-64}
[ -x "$MAGPIE" ] && [ -x "$SIM" ] || { echo "build magpie and magpie_sim_server first ($BUILD)"; exit 2; }
python3 -c 'import aiohttp' || { echo "python3-aiohttp is needed"; exit 2; }
ncpu=$(nproc)
client_cpu=0; server_cpu=$(( ncpu > 1 ? 1 : 0 ))
tmp=$(mktemp -d); sim_pid=""
trap '[ -n "$sim_pid" ] && kill $sim_pid 2>/dev/null; rm -rf "$tmp"' EXIT
export MAGPIE_NO_PROGRESS=1

start_sim() {  # start_sim RECORD ARGS...
  local rec=$1; shift
  rm -f "$tmp/port"
  taskset -c $server_cpu "$SIM" --port-file "$tmp/port" --record "$rec" "$@" 2>/dev/null &
  sim_pid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  url="http://127.0.0.1:$(cat "$tmp/port")"
}
stop_sim() { kill $sim_pid; wait $sim_pid 2>/dev/null || true; sim_pid=""; }
cpu_ticks() { awk '{print $14 + $15}' /proc/$1/stat; }
magpie_run() {  # magpie_run OUT N CONC OSL
  taskset -c $client_cpu "$MAGPIE" -q benchmark --base-url "$url" --served-model-name sim-model --random-input-len 16 \
    --random-output-len "$4" --num-prompts "$2" --max-concurrency "$3" --num-warmups 0 --no-continuous-usage -o "$1" > /dev/null
  ls -d "$1"/benchmark_*
}
python_run() {  # python_run OUTFILE N CONC OSL
  taskset -c $client_cpu python3 "$root/bench/serve/aiohttp_client.py" --url "$url" --num-prompts "$2" --concurrency "$3" \
    --input-len 16 --output-len "$4" > "$1"
}
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $ncpu cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "client on core $client_cpu, simulator on core $server_cpu; $N requests x $OSL tokens, concurrency $CONC, 1 token per SSE event"
echo
echo "== throughput (simulator without delays) =="
start_sim "$tmp/fast.jsonl" --decode-step-ms 0 --max-batch 100000
printf "%-4s %-8s %12s %14s %10s\n" run client "req/s" "tokens/s" "server CPU"
m_rps=(); m_tps=(); p_rps=(); p_tps=()
for r in $(seq "$REPEATS"); do
  t0=$(cpu_ticks $sim_pid); s0=$(date +%s.%N)
  ws=$(magpie_run "$tmp/m$r" "$N" "$CONC" "$OSL")
  u=$(python3 -c "print(f'{($(cpu_ticks $sim_pid)-$t0)/100/($(date +%s.%N)-$s0)*100:.0f}%')")
  m_rps+=("$(field "$ws/serving_result.json" request_throughput)"); m_tps+=("$(field "$ws/serving_result.json" output_throughput)")
  [ "$(field "$ws/serving_result.json" completed)" = "$N" ] || echo "warning: magpie completed $(field "$ws/serving_result.json" completed) of $N"
  printf "%-4s %-8s %12.0f %14.0f %10s\n" "$r" magpie "${m_rps[-1]}" "${m_tps[-1]}" "$u"
  t0=$(cpu_ticks $sim_pid); s0=$(date +%s.%N)
  python_run "$tmp/p$r.json" "$N" "$CONC" "$OSL"
  u=$(python3 -c "print(f'{($(cpu_ticks $sim_pid)-$t0)/100/($(date +%s.%N)-$s0)*100:.0f}%')")
  p_rps+=("$(field "$tmp/p$r.json" request_throughput)"); p_tps+=("$(field "$tmp/p$r.json" output_throughput)")
  printf "%-4s %-8s %12.0f %14.0f %10s\n" "$r" aiohttp "${p_rps[-1]}" "${p_tps[-1]}" "$u"
done
stop_sim
python3 - "${m_rps[*]}" "${m_tps[*]}" "${p_rps[*]}" "${p_tps[*]}" <<'PY'
import statistics, sys
m_r, m_t, p_r, p_t = ([float(x) for x in a.split()] for a in sys.argv[1:5])
ratios = [a / b for a, b in zip(m_t, p_t)]
print(f"median magpie: {statistics.median(m_r):.0f} req/s, {statistics.median(m_t):.0f} tokens/s")
print(f"median aiohttp: {statistics.median(p_r):.0f} req/s, {statistics.median(p_t):.0f} tokens/s")
print(f"ratio magpie/aiohttp (tokens/s, per run): {', '.join(f'{r:.1f}' for r in ratios)}; median {statistics.median(ratios):.1f}x")
PY
echo
echo "== TTFT measurement error vs ground truth (paced simulator: 5 ms decode steps, 50k prefill tokens/s) =="
start_sim "$tmp/paced.jsonl" --decode-step-ms 5 --prefill-tokens-per-s 50000 --max-batch 256
ws=$(magpie_run "$tmp/mp" 512 64 32)
python_run "$tmp/pp.json" 512 64 32
stop_sim
echo "magpie:  $(python3 "$root/bench/serve/compare.py" "$tmp/paced.jsonl" "$ws/requests.jsonl" magpie)"
echo "aiohttp: $(python3 "$root/bench/serve/compare.py" "$tmp/paced.jsonl" "$tmp/pp.json" python)"
