#!/usr/bin/env bash
# Installs everything cclc needs to build and test on Debian 12, from Debian's own packages.
# lit comes from llvm-14-tools (the build finds it under /usr/lib/llvm-14/build/utils/lit).
# Open MPI and Gloo are what cclc-allreduce-bench compares with; iproute2 makes the network
# namespaces of the two-host runtime test.
set -euo pipefail
packages=(
  cmake ninja-build g++ python3
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
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
