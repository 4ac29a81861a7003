#!/usr/bin/env bash
# One leg of a fuzz campaign on another machine (the H200 host, docs/parsers.md "Runs"): runs
# the 3 parser fuzzers (parallel) and the trace-reader fuzzer for SECS seconds,
# continuing the corpora in $D/corpus_*.tgz (if any; the previous leg's $OUT files).
# Binaries in $D/bin (built here, see bench/fuzz/run.sh). Usage: [D=dir] bench/fuzz/legs.sh LEG SECS
# (D defaults to .device/fuzz, the folder carried to the device); results, corpora and logs go to $OUT.
set -u
D=${D:-$PWD/.device/fuzz} leg=$1 secs=$2
export LD_LIBRARY_PATH=$D/lib
W=/tmp/fw T=/tmp/ft
mkdir -p $W $T
for f in $D/corpus_*.tgz; do [ -f "$f" ] && tar xzf "$f" -C /tmp; done
echo "cores $(nproc); leg $leg; $secs s; corpora: $(for c in $W/corpus_* $T/corpus; do [ -d $c ] && echo -n "$(basename $c)=$(ls $c | wc -l) "; done)"
PARALLEL=1 PREBUILT=$D/bin bash bench/fuzz/run.sh $secs $W > $OUT/fuzz_$leg.txt 2>&1 & p1=$!
PREBUILT=$D/bin bash bench/trace/fuzz.sh $secs $T > $OUT/trace_$leg.txt 2>&1 & p2=$!
wait $p1; r1=$?; wait $p2; r2=$?
echo "rc parsers=$r1 trace=$r2"
cat $OUT/fuzz_$leg.txt; tail -22 $OUT/trace_$leg.txt
for t in config json csv; do tar czf $OUT/corpus_$t.tgz -C /tmp fw/corpus_$t; done
tar czf $OUT/corpus_trace.tgz -C /tmp ft/corpus
(cd /tmp && tar czf $OUT/logs_$leg.tgz fw/*.log $(ls -d fw/crash-* fw/leak-* fw/timeout-* fw/oom-* fw/slow-unit-* ft/crash-* ft/leak-* ft/timeout-* ft/oom-* 2>/dev/null))
ls -la $OUT
