#!/usr/bin/env bash
# Installs magpie's build and test dependencies from Debian 12 (bookworm) packages.
# Usage: scripts/install-deps.sh   (as root, or with sudo available)
set -euo pipefail
PKGS=(
  cmake ninja-build g++ make git ca-certificates ccache
  libgtest-dev libgmock-dev
  nlohmann-json3-dev rapidjson-dev libyaml-cpp-dev libsqlite3-dev zlib1g-dev
  libboost1.81-dev
  libiberty-dev   # source/demangle_iberty.cpp: binutils' C++ demangler (reads DF16b/DF16_ of ROCm bf16/fp16 kernels)
  python3 python3-numpy python3-aiohttp
  python3-jsonschema   # tests/golden/dropin_mcp_client: MCP output schemas (Draft 2020-12)
  slurm-wlm munge slurmdbd mariadb-server   # tests/slurm: a real single-node Slurm (with sacct)
  python3-venv iproute2                     # tests/ray: Ray's virtualenv; loopback in a private netns
  libxlsxwriter-dev chromium   # trace: Excel export (loaded at run time); report.html screenshot test
)
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
