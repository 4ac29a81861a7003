#!/usr/bin/env bash
# A newcomer's first hour (issue 33): bare `magpie` is a usage error; "did you mean" for flags,
# subcommands, actions and YAML keys (the YAML error points at the key); shell completion; the
# per-user results store (XDG / HOME / MAGPIE_RESULTS, shown in --help, never created by a read);
# gpu-info without a GPU; a warning for --type cuda on plain C++; `trace report DIR`.
source "$MAGPIE_SOURCE_DIR/tests/golden/lib/common.sh"
T="$GOLDEN_TMP"
cd "$T"
M="$MAGPIE_BIN"
rc_of() { set +e; "$@" > "$T/out" 2> "$T/err"; echo $? > "$T/rc"; set -e; cat "$T/rc"; }

# Bare magpie: usage on stderr, exit 2; --help: stdout, exit 0.
[ "$(rc_of "$M")" = 2 ] && grep -q "^usage: magpie" "$T/err" && [ ! -s "$T/out" ] || fail "bare magpie: $(cat "$T/rc") $(head -3 "$T/err")"
[ "$(rc_of "$M" --help)" = 0 ] && grep -q "^usage: magpie" "$T/out" || fail "magpie --help"

# Did you mean: subcommand, flag, action.
[ "$(rc_of "$M" compair)" = 2 ] && grep -q "unknown subcommand 'compair' (did you mean 'compare'?)" "$T/err" || fail "subcommand: $(cat "$T/err")"
[ "$(rc_of "$M" compare --basline 1)" = 2 ] && grep -q "unknown option '--basline' (did you mean '--baseline'?)" "$T/err" \
  || fail "flag: $(cat "$T/err")"
[ "$(rc_of "$M" trace reprot x)" = 2 ] && grep -q "unknown action 'reprot' (did you mean 'report'?)" "$T/err" || fail "action: $(cat "$T/err")"
[ "$(rc_of "$M" results lst)" = 2 ] && grep -q "did you mean 'list'" "$T/err" || fail "results action: $(cat "$T/err")"
# Every parse error goes through one preamble: the same form in a subcommand with actions.
[ "$(rc_of "$M" jobs list --shared-dri x)" = 2 ] && grep -q "^magpie jobs list: unknown option '--shared-dri' (did you mean '--shared-dir'?)" "$T/err" \
  || fail "jobs flag: $(cat "$T/err")"

# YAML: a mistyped key, its value on the next line: error at the key's line and column, with a suggestion.
printf 'kernels:\n  - id: a\n    type: host\n    source_files:\n      - %s\n    compile_comand:\n      - make\n' \
  "$MAGPIE_SOURCE_DIR/examples/host/vector_add.cpp" > k.yaml
[ "$(rc_of "$M" analyze -k k.yaml)" != 0 ] || fail "bad YAML accepted"
grep -q "k.yaml:6:5: kernels\[0\].compile_comand: unknown field (did you mean 'compile_command'?)" "$T/err" || fail "YAML key: $(cat "$T/err")"

# Completion: bash script that completes subcommands, actions and a subcommand's flags.
"$M" completion bash > comp.bash
[ "$(rc_of "$M" completion fish)" = 2 ] || fail "completion fish accepted"
"$M" completion zsh | grep -q bashcompinit || fail "zsh completion"
complete_words() {  # complete_words WORD... : the candidates bash offers for the last word
  bash -c 'source ./comp.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _magpie; printf "%s\n" "${COMPREPLY[@]}"' _ "$@"
}
PATH="$(dirname "$M"):$PATH" complete_words magpie comp > c1 && grep -qx compare c1 && grep -qx completion c1 || fail "subcommands: $(cat c1)"
PATH="$(dirname "$M"):$PATH" complete_words magpie results "" > c2 && grep -qx list c2 && grep -qx compare c2 || fail "actions: $(cat c2)"
PATH="$(dirname "$M"):$PATH" complete_words magpie compare --base > c3 && grep -qx -- --baseline c3 || fail "flags: $(cat c3)"
PATH="$(dirname "$M"):$PATH" complete_words magpie trace report --top > c4 && grep -qx -- --top-k c4 || fail "nested flags: $(cat c4)"
for pair in "trace report gap timeline roofline stages sources" "results list show compare register" \
            "jobs list status cancel collect submit" "targeted-trace adapt-torch postprocess"; do
  set -- $pair; sub=$1; shift
  for a in "$@"; do [ "$(rc_of "$M" "$sub" "$a" --help)" = 0 ] || fail "completion lists '$sub $a', which is not accepted"; done
done

# Results store: per user. Reads never create it; --help names it.
unset MAGPIE_RESULTS
export HOME="$T/home" XDG_DATA_HOME=""
mkdir -p "$HOME"
"$M" results list --help > h.txt
grep -q 'the per-user store: $MAGPIE_RESULTS, else $XDG_DATA_HOME/magpie/results.sqlite, else ~/.local/share/magpie/results.sqlite' h.txt \
  || fail "results --help: $(grep -A1 -- --results h.txt)"
[ "$(rc_of "$M" results list)" = 1 ] && grep -q "no results store at $T/home/.local/share/magpie/results.sqlite" "$T/err" \
  || fail "missing store: rc $(cat "$T/rc") $(cat "$T/err")"
[ ! -e "$HOME/.local/share/magpie" ] || fail "results list created the store"
export XDG_DATA_HOME="$T/xdg"
# A run registers in the per-user store (and beside its output dir); list works from elsewhere.
"$M" -q compare "$MAGPIE_SOURCE_DIR/examples/host/vector_add.cpp" "$MAGPIE_SOURCE_DIR/examples/host/vector_add_unrolled.cpp" \
  --type host --no-perf -o "$T/res" > /dev/null 2> reg.err || fail "compare: $(cat reg.err)"
test -f "$T/xdg/magpie/results.sqlite" && test -f "$T/res/magpie_results.sqlite" || fail "not registered in both stores"
mkdir -p elsewhere && (cd elsewhere && "$M" results list --json > ../l.json) || fail "results list from elsewhere"
python3 -c 'import json,sys; r=json.load(open("l.json")); assert len(r)==1 and r[0]["mode"]=="compare" and r[0]["success"], r'
(cd elsewhere && "$M" results list) | grep -qx "Store: $T/xdg/magpie/results.sqlite" || fail "results list does not name the XDG store"
[ ! -e elsewhere/results ] || fail "results list created ./results"
[ "$(rc_of env MAGPIE_RESULTS="$T/other.sqlite" "$M" results list)" = 1 ] && grep -q "no results store at $T/other.sqlite" "$T/err" \
  && [ ! -e "$T/other.sqlite" ] || fail "MAGPIE_RESULTS: $(cat "$T/err")"
[ "$(rc_of "$M" results list --results "$T/res/magpie_results.sqlite" --json)" = 0 ] || fail "--results FILE"

# gpu-info without a GPU (skipped where one exists).
if ! command -v nvidia-smi > /dev/null && ! command -v rocminfo > /dev/null; then
  [ "$(rc_of "$M" gpu-info)" = 0 ] && grep -q "^no GPU found" "$T/out" || fail "gpu-info: $(cat "$T/out")"
  [ "$(rc_of "$M" gpu-info --require)" = 1 ] && grep -q "no GPU found" "$T/err" || fail "gpu-info --require"
  # --type cuda on a plain C++ file: two warnings (no __global__; no GPU), the run itself goes on.
  rc_of "$M" -q analyze "$MAGPIE_SOURCE_DIR/examples/host/vector_add.cpp" --type cuda --no-perf -o "$T/cu" > /dev/null
  grep -q "has type cuda but no __global__ function" "$T/err" || fail "no __global__ warning: $(cat "$T/err")"
  grep -q "no GPU found" "$T/err" || fail "no-GPU warning: $(cat "$T/err")"
fi
rc_of "$M" -q analyze "$MAGPIE_SOURCE_DIR/examples/host/vector_add.cpp" --type host --no-perf -o "$T/h" > /dev/null
! grep -q "__global__" "$T/err" || fail "warning for a host kernel"

# trace report on a directory (the README's form): one report per trace, a top-kernels table with
# a header and distinct names.
[ "$(rc_of "$M" trace report "$MAGPIE_SOURCE_DIR/examples/traces" -o tr)" = 0 ] || fail "trace report DIR: $(cat "$T/err")"
test -f tr/llama_tiny-rank-0_pt_trace/report.html || fail "no report.html: $(ls -R tr | head)"
grep -q "^  kernel  *calls  *total  category$" "$T/out" || fail "top kernels header: $(grep -A3 'Top kernels' "$T/out")"
sed -n '/^Top kernels/,/^$/p' "$T/out" | tail -n +3 | sed '/^$/d' | awk '{print substr($0, 1, 62)}' | sort | uniq -d > dups
[ ! -s dups ] || fail "top kernels rows share a name: $(cat dups)"
mkdir empty && [ "$(rc_of "$M" trace report empty)" = 1 ] && grep -q "no trace files" "$T/err" || fail "empty dir"
echo "ok: cli first hour"
