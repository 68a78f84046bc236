#!/usr/bin/env bash
# Installs the system packages cxla needs, from Debian (12, bookworm).
# As root it runs apt-get; otherwise it prints the command to run and fails.
# Each package and why it is here is listed in README.md ("Dependencies").
set -euo pipefail

packages=(
  cmake              # the build
  make gcc libc6-dev # the compiler and C library (the library is plain C11)
  clang              # libFuzzer targets (clang's -fsanitize=fuzzer)
  libclang-rt-14-dev # clang's sanitizer and libFuzzer runtimes
  python3-numpy      # tests cross-check .npy files against NumPy's own reader
)
# Optional: replicas across processes (MPI) and their tests. CXLA_NO_MPI=1 leaves them
# out; the build then says that MPI is missing and the MPI test is skipped.
if [ "${CXLA_NO_MPI:-0}" != 1 ]; then
  packages+=(
    libopenmpi-dev   # MPI headers and library (Open MPI, BSD-licensed)
    openmpi-bin      # mpirun, which the MPI test uses
  )
fi

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "cxla: missing system packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "cxla: run this as root, then try again:"
  echo "  apt-get update && apt-get install -y ${missing[*]}"
  exit 1
fi
