#!/usr/bin/env bash
# report.html as people read it (issue 16 §6), checked in headless Chromium (Debian's chromium):
# read problems at the top, stage split and top kernels above the fold at 1280x800, roofline
# points coloured by category with a legend, ceiling labels that do not overlap.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${MAGPIE_BIN:?}" "${MAGPIE_SOURCE_DIR:?}"
command -v python3 >/dev/null || { echo "skip: python3 not found"; exit 77; }
chrome="$(command -v chromium || command -v chromium-browser || true)"
[ -n "$chrome" ] || { echo "skip: chromium not installed (scripts/install-deps.sh installs it)"; exit 77; }
export MAGPIE_DATA_DIR="$MAGPIE_SOURCE_DIR/data"
real="$MAGPIE_SOURCE_DIR/examples/traces/llama_tiny-rank-0.pt.trace.json.gz"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"

# A partly read trace, so the problem box is on the page too (exit 3 is expected here).
python3 -c "import gzip,sys; r=open(sys.argv[1],'rb').read(); open('cut.json.gz','wb').write(r[:len(r)*3//4])" "$real"
set +e; "$MAGPIE_BIN" -q trace report cut.json.gz -o rep > /dev/null 2>&1; rc=$?; set -e
test "$rc" -eq 3
{ sed 's#</body></html>##' rep/report.html; echo "<script>"; cat "$here/probe.js"; echo "</script></body></html>"; } > probed.html
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$work/profile"
       --no-first-run --disable-extensions)
timeout 120 "$chrome" "${flags[@]}" --window-size=1280,800 --dump-dom "file://$work/probed.html" > dom.html 2> chrome.log || {
  cat chrome.log; exit 1; }
timeout 120 "$chrome" "${flags[@]}" --window-size=1280,1400 --screenshot="$work/shot.png" "file://$work/rep/report.html" \
  >> chrome.log 2>&1 || { cat chrome.log; exit 1; }
python3 "$here/check_page.py" dom.html shot.png
echo "trace_report_html: ok"
