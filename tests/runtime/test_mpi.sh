#!/usr/bin/env bash
# Collectives across processes: tests/runtime/mpi_check.py runs `cxla run --mpi` under
# mpirun on 1 to 4 ranks and checks the results against NumPy and against the same runs
# in threads (`cxla run --replicas N`). Skipped, saying why, when cxla was built without
# MPI, or mpirun or NumPy is missing.
# Usage: test_mpi.sh PATH/TO/cxla
set -u
here=$(cd "$(dirname "$0")" && pwd)
cxla=${1:?path to the cxla tool}
if ! "$cxla" version | grep -q '^mpi: yes$'; then
  echo "SKIP: $cxla was built without MPI (install libopenmpi-dev and openmpi-bin, then run cmake again)"
  exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIP: mpirun is not installed (Debian: openmpi-bin)"
  exit 77
fi
python=/usr/bin/python3
if ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $python has no NumPy (Debian: python3-numpy)"
  exit 77
fi
# Up to 4 ranks on however many cores there are; root in CI containers.
mpirun=(mpirun --oversubscribe)
if [ "$(id -u)" -eq 0 ]; then mpirun+=(--allow-run-as-root); fi
# Open MPI keeps some memory until exit: not cxla's leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# Single-host runs: shared memory and loopback only, no network probing.
export OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
exec "$python" "$here/mpi_check.py" "$cxla" "${mpirun[@]}"
