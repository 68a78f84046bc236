#!/usr/bin/env bash
# Installs the system packages cxla needs, from Debian (12, bookworm).
# As root it runs apt-get; otherwise it prints the command to run and fails.
# Optional packages are installed along with the others when the script can install,
# but their absence alone never fails it.
# Each package and why it is here is listed in README.md ("Dependencies").
# With BENCH=1 (`make bench-deps`) it also installs the benchmarks' optional peer,
# PyTorch (python3-torch, several hundred MB with its dependencies), which `make test`
# never needs.
set -euo pipefail

packages=(
  cmake              # the build
  make gcc libc6-dev # the compiler and C library (the library is plain C11)
  clang              # libFuzzer targets (clang's -fsanitize=fuzzer)
  libclang-rt-14-dev # clang's sanitizer and libFuzzer runtimes
  python3-numpy      # tests cross-check .npy files against NumPy's own reader
  python3-pytest     # the Python package's tests (tests/python)
  pkgconf            # tests/install builds a program against the installed cxla.pc
)
optional=(
  graphviz           # `cxla graph -o x.svg` runs its dot program; tests validate DOT with it
  libdnnl-dev        # oneDNN: the cpu backend's dot and convolution (else its own loops)
  tcc                # ahead-of-time output is also compiled with a third C compiler
  libc6-i386         # ahead-of-time output is also run as real 32-bit (i386) code
  qemu-user gcc-s390x-linux-gnu libc6-dev-s390x-cross
                     # ... and as big-endian s390x code, cross-compiled, under qemu-s390x
)
if [ "${BENCH:-0}" = 1 ]; then
  packages+=(python3-torch) # bench/: PyTorch's times next to NumPy's and cxla's
fi
# Optional: replicas across processes (MPI) and their tests. CXLA_NO_MPI=1 leaves them
# out; the build then says that MPI is missing and the MPI test is skipped.
if [ "${CXLA_NO_MPI:-0}" != 1 ]; then
  packages+=(
    libopenmpi-dev   # MPI headers and library (Open MPI, BSD-licensed)
    openmpi-bin      # mpirun, which the MPI test uses
  )
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
missing_optional=()
for p in "${optional[@]}"; do
  installed "$p" || missing_optional+=("$p")
done
can_install=false
if [ "$(id -u)" -eq 0 ] || { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; }; then
  can_install=true
fi

if [ ${#missing[@]} -eq 0 ] && { [ ${#missing_optional[@]} -eq 0 ] || ! $can_install; }; then
  if [ ${#missing_optional[@]} -gt 0 ]; then
    echo "cxla: optional packages not installed: ${missing_optional[*]} (see README.md)"
  fi
  exit 0
fi
if $can_install; then
  missing+=("${missing_optional[@]}")
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
  if [ ${#missing_optional[@]} -gt 0 ]; then
    echo "cxla: optional (graphs; oneDNN for dot and convolution): ${missing_optional[*]}"
  fi
  exit 1
fi
