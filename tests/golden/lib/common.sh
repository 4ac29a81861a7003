# Shared helpers for golden tests (sourced). Needs MAGPIE_BIN and MAGPIE_SOURCE_DIR.
set -euo pipefail
: "${MAGPIE_BIN:?MAGPIE_BIN is not set}"
: "${MAGPIE_SOURCE_DIR:?MAGPIE_SOURCE_DIR is not set}"
export MAGPIE_NO_PROGRESS=1
GOLDEN_TMP=$(mktemp -d "${TMPDIR:-/tmp}/magpie_golden.XXXXXX")
trap 'rm -rf "$GOLDEN_TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# newest workspace matching a prefix under a results dir
workspace_of() { ls -d "$1"/"$2"_* 2>/dev/null | sort | tail -n 1 || true; }
# python3 -c with the report path as argv[1]
check_json() { python3 - "$@"; }
