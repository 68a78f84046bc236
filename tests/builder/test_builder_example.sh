#!/bin/bash
# The MLP example (examples/mlp.c) builds a training loop with the builder API, runs it on
# the interpreter and exits non-zero unless the loss falls. $1 is the cxla tool; the
# example sits next to it in examples/.
set -euo pipefail
exe="$(dirname "$1")/examples/mlp"
[ -x "$exe" ] || { echo "skipped: $exe not built"; exit 77; }
out="$("$exe")"
echo "$out"
grep -q "the loss fell by" <<<"$out"
# The --hlo text parses and verifies with the command-line tool.
"$exe" --hlo | sed -n '/^HloModule/,$p' | sed '/^training a/,$d' > "${TMPDIR:-/tmp}/cxla_mlp_$$.hlo"
"$1" check "${TMPDIR:-/tmp}/cxla_mlp_$$.hlo"
rm -f "${TMPDIR:-/tmp}/cxla_mlp_$$.hlo"
