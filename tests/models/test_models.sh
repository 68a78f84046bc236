#!/usr/bin/env bash
# Runs every real program in ../shared/models/ end to end on the interpreter (named: the
# oracle; tests/cpu/test_cpu_models.sh runs them on the cpu backend next to it) with
# generated inputs (cxla run, as XLA's run_hlo_module does) and checks that it succeeds
# and that its results are finite. Skipped (exit 77) when ../shared is absent.
#
# One program gives non-finite results with generated inputs for reasons that lie in the
# inputs, not in cxla, and is only required to run: resnet50_keras_jax_f32, whose random
# batch-norm variances (drawn non-negative, as every float that reaches rsqrt) can be
# near 0, so that rsqrt scales each of its 50 layers up until the activations overflow.
# The DLRM programs are finite: their indices are drawn in range and AdamW's
# second-moment state non-negative (docs/cli.md).
set -u
cxla=${1:?path to the cxla tool}
shared=${CXLA_SHARED_DIR:-}
if [ -z "$shared" ] || [ ! -d "$shared/models" ]; then
  echo "SKIPPED: ../shared/models not found"
  exit 77
fi
non_finite_ok=" resnet50_keras_jax_f32 "
passed=0
failed=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# ctest keeps a test's output until it ends, and this one takes minutes: on the terminal
# that runs `make test` (or ctest) each program is announced as it starts. Nothing
# without a controlling terminal (CI logs get the summary below).
tty=
if { : >/dev/tty; } 2>/dev/null; then tty=/dev/tty; fi
total=$(ls "$shared"/models/*.hlo | wc -l)
index=0
for f in "$shared"/models/*.hlo; do
  name=$(basename "$f" .hlo)
  index=$((index + 1))
  [ -n "$tty" ] && echo "    models $index/$total: $name" >"$tty" 2>/dev/null
  start=$(date +%s)
  if ! "$cxla" run --backend interpreter --check-finite "$f" -o "$out/$name" >"$out/$name.txt" 2>"$out/$name.err"; then
    echo "FAIL $name: cxla run failed"
    tail -n 5 "$out/$name.err"
    failed=$((failed + 1))
    continue
  fi
  secs=$(($(date +%s) - start))
  if grep -q "non-finite elements" "$out/$name.err"; then
    case "$non_finite_ok" in
      *" $name "*) echo "ok   $name (${secs}s; non-finite results expected with generated inputs)" ;;
      *) echo "FAIL $name: non-finite results"; cat "$out/$name.err"; failed=$((failed + 1)); continue ;;
    esac
  else
    echo "ok   $name (${secs}s)"
  fi
  passed=$((passed + 1))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
