#!/usr/bin/env bash
# The StableHLO conformance suite on the cpu backend: it must pass every case the
# interpreter passes (tests/conformance/expected-pass.txt).
here=$(cd "$(dirname "$0")" && pwd)
CXLA_BACKEND=cpu exec bash "$here/../conformance/test_conformance.sh" "$@"
