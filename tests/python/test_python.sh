#!/usr/bin/env bash
# The Python package (python/cxla) under pytest, over this build's libcxla.so. Skipped
# (77) when pytest or NumPy is missing (Debian: python3-pytest, python3-numpy).
cxla=${1:?usage: test_python.sh CXLA}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -c "import pytest, numpy" 2>/dev/null || { echo "SKIP: pytest or numpy missing"; exit 77; }
src=${CXLA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${CXLA_BINARY_DIR:-$(dirname "$cxla")}
[ -f "$bin/libcxla.so" ] || { echo "SKIP: no libcxla.so in $bin (CXLA_BUILD_SHARED=OFF)"; exit 77; }
export CXLA_LIBRARY="$bin/libcxla.so" PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
export CXLA_TOOL="$cxla" CXLA_SOURCE_DIR="$src"
exec "$py" -m pytest -q -p no:cacheprovider "$src/tests/python"
