#!/usr/bin/env bash
# Installs magpie's build and test dependencies from Debian 12 (bookworm) packages.
# Usage: scripts/install-deps.sh   (as root, or with sudo available)
set -euo pipefail
PKGS=(
  cmake ninja-build g++ make git ca-certificates ccache
  libgtest-dev libgmock-dev
  nlohmann-json3-dev rapidjson-dev libyaml-cpp-dev libsqlite3-dev zlib1g-dev
  libboost1.81-dev
  python3 python3-numpy python3-aiohttp
  python3-jsonschema   # tests/golden/dropin_mcp_client: MCP output schemas (Draft 2020-12)
  slurm-wlm munge slurmdbd mariadb-server   # tests/slurm: a real single-node Slurm (with sacct)
)
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages already installed" >&2
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
