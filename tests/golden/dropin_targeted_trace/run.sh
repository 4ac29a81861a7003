#!/usr/bin/env bash
# `magpie targeted-trace adapt-torch | postprocess` (Magpie's TargetedKernelTrace CLI) on the real
# trace in examples/traces: shards and manifest written, every envelope's checksum recomputed by
# Python's json.dumps (byte compatibility with Magpie), postprocess valid; corruption, --strict,
# reuse of an output directory, deterministic sampling and missing inputs.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
TRACES="$MAGPIE_SOURCE_DIR/examples/traces"
T="$GOLDEN_TMP"
# the most frequent GPU kernel of the trace becomes the target (a glob on its prefix)
kernel=$(python3 - "$TRACES" <<'PY'
import collections, glob, gzip, json, sys
ev = json.load(gzip.open(glob.glob(sys.argv[1] + "/*.json.gz")[0]))["traceEvents"]
c = collections.Counter(e["name"] for e in ev if e.get("cat") == "kernel")
print(c.most_common(1)[0][0])
PY
)
prefix=${kernel:0:12}
cat > "$T/targets.yaml" <<YAML
targeted_trace:
  enabled: true
  backend: torch_profiler
  run_seed: golden-seed
  sample_rate: 1.0
  max_records_per_shard: 100000
  targets:
    - target_id: hot_kernel
      name_patterns: ["${prefix}*"]
      package: golden
      source: {path: kernels/hot.py, line: 12, function: hot}
      source_hashes: {file: "0000"}
    - id: never_matches
      names: "no_such_kernel_*"
YAML
"$MAGPIE_BIN" targeted-trace adapt-torch --trace-dir "$TRACES" --target-config "$T/targets.yaml" -o "$T/tt" \
  --run-id run-1 --framework vllm --framework-version 0.19.1 --image img > "$T/manifest.out" || fail "adapt-torch failed"
python3 - "$T/tt" "$T/manifest.out" "$kernel" <<'PY'
import glob, hashlib, json, os, sys
d, printed, kernel = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
m = json.load(open(os.path.join(d, "manifest.json")))
assert m == printed, "printed manifest differs from manifest.json"
assert m["schema_name"] == "magpie.targeted-kernel-trace" and m["schema_version"] == "1.0.0"
assert m["pass_kind"] == "diagnostic" and m["reward_eligible"] is False
assert m["coverage"]["written"] > 0 and m["coverage"]["dropped"] == 0, m["coverage"]
canon = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
raw = open(os.path.join(d, "manifest.json"), "rb").read()
assert raw == (canon(m) + "\n").encode(), "manifest.json is not Python-canonical JSON"
for rc in m["shards"]:
    data = open(rc["path"], "rb").read()
    assert hashlib.sha256(data).hexdigest() == rc["file_sha256"] and len(data) == rc["byte_count"]
    prev, n = "0" * 64, 0
    for i, line in enumerate(data.decode().splitlines(keepends=True)):
        e = json.loads(line)
        assert line == canon(e) + "\n", "line %d is not canonical" % i
        body = dict(e); body.pop("checksum")
        assert hashlib.sha256(canon(body).encode()).hexdigest() == e["checksum"], "checksum of line %d" % i
        assert e["previous_checksum"] == prev and e["sequence"] == i
        prev = e["checksum"]
        if e["record_type"] == "event":
            p = e["payload"]; n += 1
            assert p["identity"]["target_id"] == "hot_kernel" and p["runtime"]["gpu_symbol"].startswith(kernel[:12])
            assert p["semantics"]["source"] == {"path": "kernels/hot.py", "line": 12, "function": "hot", "sha256": None}
            assert p["context"]["framework"] == "vllm" and p["identity"]["image"] == "img"
            assert isinstance(p["runtime"]["duration_us"], float)
    assert prev == rc["chain_checksum"] and n == rc["counters"]["written"]
PY
[ $? -eq 0 ] || fail "shard / manifest check"
"$MAGPIE_BIN" targeted-trace postprocess --trace-dir "$T/tt" -o "$T/summary.json" > "$T/summary.out" || fail "postprocess of valid shards"
check_json "$T/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["valid"] is True and s["issues"] == [] and s["streaming"] is True, s["issues"]
assert s["events"]["by_target"]["hot_kernel"] == s["coverage"]["written"]
assert s["evidence_quality"]["evidence_class"] == "diagnostic_only"
PY
# the same output directory cannot be reused (append-once evidence)
if "$MAGPIE_BIN" targeted-trace adapt-torch --trace-dir "$TRACES" --target-config "$T/targets.yaml" -o "$T/tt" \
    --run-id run-1 --framework vllm > "$T/again.out" 2>&1; then fail "reused output directory accepted"; fi
grep -q "fresh output directory" "$T/again.out" || fail "unclear reuse error: $(cat "$T/again.out")"
# a torn tail is detected; --strict makes any issue an error
shard=$(ls "$T"/tt/shards/*.jsonl | head -1)
head -c -40 "$shard" > "$shard.cut" && mv "$shard.cut" "$shard"
if "$MAGPIE_BIN" targeted-trace postprocess --trace-dir "$T/tt" > "$T/bad.json"; then fail "corrupt shard accepted"; fi
check_json "$T/bad.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["valid"] is False and "corrupt_tail" in s["integrity_failures_by_reason"], s["integrity_failures_by_reason"]
PY
if "$MAGPIE_BIN" targeted-trace postprocess --trace-dir "$T/tt" --strict > "$T/strict.out"; then fail "--strict passed"; fi
grep -q "^Error: " "$T/strict.out" || fail "--strict: no error line"
# deterministic sampling: the same seed keeps the same events
sed -i 's/sample_rate: 1.0/sample_rate: 0.5/' "$T/targets.yaml"
for i in 1 2; do
  "$MAGPIE_BIN" targeted-trace adapt-torch --trace "$(ls "$TRACES"/*.json.gz | head -1)" --target-config "$T/targets.yaml" \
    -o "$T/s$i" --run-id r --framework vllm > /dev/null || fail "sampled run $i"
done
cmp <(cat "$T"/s1/shards/*.jsonl | python3 -c 'import json,sys; [print(json.loads(l)["payload"].get("stable_event_key","")) for l in sys.stdin]') \
    <(cat "$T"/s2/shards/*.jsonl | python3 -c 'import json,sys; [print(json.loads(l)["payload"].get("stable_event_key","")) for l in sys.stdin]') \
  || fail "sampling is not deterministic"
check_json "$T/s1/manifest.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["coverage"]
assert 0 < c["written"] < c["seen"] and c["dropped_by_reason"].get("sampling", 0) == c["seen"] - c["written"], c
PY
# no traces: Magpie's error, exit 1
mkdir -p "$T/empty"
if "$MAGPIE_BIN" targeted-trace adapt-torch --trace-dir "$T/empty" --target-config "$T/targets.yaml" -o "$T/e" \
    --run-id r --framework vllm > "$T/empty.out" 2>/dev/null; then fail "no traces: exit 0"; fi
grep -q "^Error: no Torch profiler trace files were found" "$T/empty.out" || fail "no-trace error: $(cat "$T/empty.out")"
echo "ok: targeted-trace"
