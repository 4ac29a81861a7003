#!/usr/bin/env bash
# The agent skill docs cannot drift from the CLI: reference.md must equal the binary's --help
# texts, and every command in examples.md must parse (run with --help appended).
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
cd "$MAGPIE_SOURCE_DIR"
python3 scripts/gen_skill_reference.py "$MAGPIE_BIN" --check || fail "skills/magpie/reference.md is stale"
python3 - "$MAGPIE_BIN" skills/magpie/examples.md <<'PY'
import os, re, shlex, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
text = open(path).read()
blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
commands = []
for b in blocks:
    b = b.replace("\\\n", " ")
    commands += [l.strip() for l in b.splitlines() if l.strip().startswith("magpie")]
assert len(commands) >= 20, "expected the examples to hold at least 20 commands, found %d" % len(commands)
bad = []
for c in commands:
    argv = shlex.split(c)
    argv[0] = binary
    r = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, MAGPIE_NO_PROGRESS="1"))
    if r.returncode != 0 or "usage:" not in r.stdout and "GPU Information" not in r.stdout:
        bad.append("%s -> rc %d: %s" % (c, r.returncode, (r.stderr or r.stdout).strip()[:200]))
if bad:
    sys.exit("commands in examples.md that the CLI rejects:\n  " + "\n  ".join(bad))
print("ok: %d example commands parse" % len(commands))
PY
echo "ok: skill docs match the CLI"
