#!/usr/bin/env bash
# Installs the Debian packages basild needs when any is missing, then
# configures and builds. Idempotent and quiet when everything is there.
#   scripts/setup.sh [normal|asan|fuzz|tests]...   (default: normal)
# "tests" adds the packages only the tests use (a browser for the machine
# map's page, ip for the example site's own network) and builds nothing: scripts/test asks for it, the main job not.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

packages=(
  g++ cmake ninja-build pkg-config git
  libxml2-dev libxml2-utils
  libboost-dev libboost-program-options-dev
  libssh-dev liblz4-dev libsqlite3-dev sqlite3
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libtomlplusplus-dev libsystemd-dev
  openssh-server openssh-client procps curl
  mariadb-server mariadb-client
  slurmctld slurmd slurm-client libslurm-dev munge libhwloc-dev
  clang-14 libclang-rt-14-dev
  gnuplot-nox
  debhelper dpkg-dev lintian mandoc prometheus systemd util-linux
)
for kind in "$@"; do
  [ "$kind" != tests ] || packages+=(chromium iproute2)
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs=$(nproc 2>/dev/null || echo 2)
build_one() {
  local kind=$1 dir flags=()
  case "$kind" in
    normal) dir=build ;;
    asan)   dir=build-asan; flags=(-DBASIL_SANITIZE=ON -DBASIL_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug) ;;
    fuzz)   dir=build-fuzz; flags=(-DBASIL_FUZZ=ON -DCMAKE_C_COMPILER=clang-14
                                   -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    *) echo "setup: unknown build kind '$kind'" >&2; exit 2 ;;
  esac
  # Warnings are errors in every tree this script builds (and so in CI).
  # Debug information is line tables only (cmake/BasilFootprint.cmake):
  # backtraces and the sanitizers' reports need no more, and it builds
  # faster. A tree configured otherwise before is configured again.
  flags+=(-DBASIL_WERROR=ON -DBASIL_DEBUG_INFO=lines)
  if [ ! -f "$dir/build.ninja" ] || ! grep -q '^BASIL_WERROR:BOOL=ON$' "$dir/CMakeCache.txt" 2>/dev/null ||
     ! grep -q '^BASIL_DEBUG_INFO:STRING=lines$' "$dir/CMakeCache.txt" 2>/dev/null; then
    cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
  fi
  cmake --build "$dir" -j "$jobs" -- --quiet
}

[ $# -gt 0 ] || set -- normal
for kind in "$@"; do
  [ "$kind" = tests ] || build_one "$kind"
done
