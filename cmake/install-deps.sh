#!/usr/bin/env bash
# Installs everything cclc needs to build and test on Debian 12: the build's packages from
# Debian's own registry, then a Python virtual environment at .venv in the repository root
# holding torch, pytest and numpy from PyPI, into which the build installs the PyTorch backend.
# lit comes from llvm-14-tools (the build finds it under /usr/lib/llvm-14/build/utils/lit).
# Open MPI and Gloo are what cclc-allreduce-bench compares with; iproute2 makes the network
# namespaces of the two-host runtime test.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
packages=(
  cmake ninja-build g++ python3 python3-venv python3-dev pkg-config
  nlohmann-json3-dev libpugixml-dev libcli11-dev libgtest-dev
  llvm-14-dev llvm-14-tools clang-14 libclang-14-dev libclang-cpp14-dev
  openmpi-bin libopenmpi-dev libgloo-dev iproute2
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

venv="$root/.venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
echo "install-deps: Python packages in $venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "torch>=2.4" numpy pytest setuptools wheel
