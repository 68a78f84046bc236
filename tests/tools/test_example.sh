#!/usr/bin/env bash
# The default example (`make run`): examples/train_mlp.hlo trains a small MLP by gradient
# descent inside a while loop and returns the loss before each step. Checks that it runs,
# that the loss falls at every step and by a large factor overall, and (with Debian's
# NumPy) that the losses match a float64 NumPy twin whose gradients are checked by finite
# differences (tests/tools/train_mlp_ref.py). A copy of the module with a wrong backward
# pass must fail that comparison, so the comparison can fail.
set -u
cxla=${1:?path to the cxla tool}
src=${CXLA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
module="$src/examples/train_mlp.hlo"
ref="$src/tests/tools/train_mlp_ref.py"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

if ! "$cxla" run "$module" >"$dir/out.txt" 2>"$dir/err.txt"; then
  echo "FAIL: cxla run $module failed:"
  cat "$dir/err.txt"
  exit 1
fi
# f32[300] {l0, l1, ...}: one loss per line.
tr -d '{},' <"$dir/out.txt" | tr ' ' '\n' | grep -v '^f32' | grep -v '^$' >"$dir/losses.txt"
count=$(wc -l <"$dir/losses.txt")
[ "$count" -eq 300 ] || fail "expected 300 losses, got $count: $(head -c 200 "$dir/out.txt")"
if ! awk 'NR > 1 && !($1 < prev) { print "step " NR - 1 ": " $1 " is not below " prev; bad = 1 }
          { prev = $1 } END { exit bad }' "$dir/losses.txt"; then
  fail "the loss does not fall at every step"
fi
first=$(head -n 1 "$dir/losses.txt")
last=$(tail -n 1 "$dir/losses.txt")
if ! awk -v a="$first" -v b="$last" 'BEGIN { exit !(a > 0.5 && b < a / 50) }'; then
  fail "loss $first -> $last: expected a start above 0.5 and a fall by more than 50x"
fi
echo "loss $first -> $last over $count steps"

if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
  /usr/bin/python3 "$ref" <"$dir/out.txt" || fail "cxla's training differs from NumPy's"
  # The same module with the tanh derivative left out of the backward pass.
  sed 's/dz = f32\[64,16\] multiply(dh, dtanh)/dz = f32[64,16] multiply(dh, oneb)/' \
    "$module" >"$dir/wrong.hlo"
  if cmp -s "$module" "$dir/wrong.hlo"; then
    fail "could not make the wrong-gradient copy of the module"
  elif ! "$cxla" run "$dir/wrong.hlo" >"$dir/wrong.txt" 2>&1; then
    fail "the wrong-gradient copy does not run: $(cat "$dir/wrong.txt")"
  elif /usr/bin/python3 "$ref" <"$dir/wrong.txt" >/dev/null 2>&1; then
    fail "the NumPy comparison accepts a module with a wrong gradient"
  fi
else
  echo "note: /usr/bin/python3 has no numpy; the NumPy comparison is skipped"
fi

[ "$failed" -eq 0 ] && echo "ok" || exit 1
