#!/usr/bin/env bash
# Installs magpie's dependencies from Debian 12 (bookworm) packages.
# Usage: scripts/install-deps.sh [--test-build|--tests] [--print]   (as root, or with sudo available)
#   (default)     what building and running magpie needs: compilers, CMake, the libraries it links,
#                 python3 for the Python harness and the example server.
#   --test-build  also GoogleTest: what building the tests needs (cmake --preset release).
#   --tests       also what running the test suite needs: GoogleTest, jsonschema, a real single-node
#                 Slurm with MariaDB (tests/slurm), Ray in a virtualenv (tests/ray), chromium (the
#                 report.html screenshot test). .ci/run installs --test-build first and the rest
#                 (--tests) in the background while it compiles.
#   --print       print the Debian packages that would be installed, one per line, and exit.
set -euo pipefail
with_tests=0
with_test_build=0
print_only=0
for a in "$@"; do
  case "$a" in
    --tests) with_tests=1; with_test_build=1 ;;
    --test-build) with_test_build=1 ;;
    --print) print_only=1 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: unknown option '$a' (see --help)" >&2; exit 2 ;;
  esac
done
PKGS=(
  cmake ninja-build g++ make git ca-certificates ccache
  nlohmann-json3-dev rapidjson-dev libyaml-cpp-dev libsqlite3-dev zlib1g-dev
  libboost1.81-dev
  libiberty-dev   # source/demangle_iberty.cpp: binutils' C++ demangler (reads DF16b/DF16_ of ROCm bf16/fp16 kernels)
  python3 python3-numpy   # the Python harness (python/magpie_bench) and the numpy examples
  python3-aiohttp         # examples/serving/server.py (the bundled OpenAI-compatible example server)
  libxlsxwriter-dev       # trace: Excel export (loaded at run time)
)
TEST_BUILD_PKGS=(libgtest-dev libgmock-dev)
TEST_PKGS=(
  python3-jsonschema   # tests/golden/dropin_mcp_client: MCP output schemas (Draft 2020-12)
  slurm-wlm munge slurmdbd mariadb-server   # tests/slurm: a real single-node Slurm (with sacct)
  python3-venv iproute2                     # tests/ray: Ray's virtualenv; loopback in a private netns
  chromium                                  # tests/golden/trace_report_html: report.html screenshot test
)
if [ "$with_test_build" = 1 ]; then PKGS+=("${TEST_BUILD_PKGS[@]}"); fi
if [ "$with_tests" = 1 ]; then PKGS+=("${TEST_PKGS[@]}"); fi
if [ "$print_only" = 1 ]; then printf '%s\n' "${PKGS[@]}"; exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages already installed" >&2
else
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "$with_tests" = 1 ] || exit 0

# Ray (docs/ray.md, tests/ray): ray[default] from PyPI, pinned, in its own virtualenv made with
# Debian's python3 (PEP 668 keeps pip out of the system's site-packages). magpie itself talks
# to Ray over HTTP only; the tests start a head with this `ray`. Measured on the 2-core dev
# machine: about 2 minutes (download-bound) and 380 MB. MAGPIE_SKIP_RAY=1 skips it.
RAY_VERSION=2.60.0
RAY_VENV=${MAGPIE_RAY_VENV:-/opt/magpie-ray}
if [ "${MAGPIE_SKIP_RAY:-0}" != 1 ] && ! "$RAY_VENV/bin/ray" --version 2>/dev/null | grep -q "version $RAY_VERSION\$"; then
  echo "install-deps: installing ray[default]==$RAY_VERSION into $RAY_VENV" >&2
  $SUDO /usr/bin/python3 -m venv "$RAY_VENV"
  $SUDO "$RAY_VENV/bin/pip" install -q --disable-pip-version-check "ray[default]==$RAY_VERSION"
fi
