#!/usr/bin/env bash
# `cxla run --check-finite`: the interpreter names the first instruction that makes a NaN
# or Inf out of finite operands, for every float and complex type (each has its own
# test of the exponent bits), and never an instruction that only moves elements. The cpu
# backend too, with the same names: the instruction inside the fusion it ended up in
# (tests/cpu/test_cpu_messages.sh compares the whole lines).
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=../tools/testlib.sh
. "$(dirname "$0")/../tools/testlib.sh"
backends=interpreter
"$cxla" version 2>/dev/null | grep -q "^backend: cpu" && backends="interpreter cpu"
for backend in $backends; do
export CXLA_BACKEND=$backend
# expect NAME PATTERN INVERT -- command...: the command must succeed and its output match
# PATTERN (grep -E), or not match it when INVERT is "not".
expect() {
  local name=$1 pattern=$2 invert=$3
  shift 4
  local out
  out=$("$@" 2>&1)
  local got=$?
  if [ "$got" -ne 0 ]; then fail "$name: exit $got: $out"; return; fi
  if [ "$invert" = not ]; then
    if grep -qE -- "$pattern" <<<"$out"; then fail "$name: output has /$pattern/: $out"; return; fi
  elif ! grep -qE -- "$pattern" <<<"$out"; then
    fail "$name: output lacks /$pattern/: $out"
    return
  fi
  ok
}

# x * big overflows to Inf in every type (the product of two finite numbers); the
# elements moved around it (slice, reshape, tuple) are finite.
for t in f16 bf16 f32 f64 f8e5m2 f8e4m3fn; do
  case $t in
    f16) big=60000 ;;
    bf16 | f32) big=3e38 ;;
    f64) big=1e308 ;;
    f8e5m2) big=57344 ;;
    f8e4m3fn) big=448 ;;
  esac
  cat >"$dir/$t.hlo" <<HLO
HloModule overflow_$t
ENTRY main {
  x = $t[4] parameter(0)
  c = $t[] constant($big)
  b = $t[4] broadcast(c), dimensions={}
  s = $t[2] slice(x), slice={[0:2]}
  r = $t[2,1] reshape(s)
  m = $t[4] multiply(x, b)
  ROOT t = ($t[2,1], $t[4]) tuple(r, m)
}
HLO
  expect "$backend: $t overflow" "m \(multiply.*first to produce a NaN or Inf" "" -- \
    "$cxla" run --check-finite "$dir/$t.hlo" "$t[4] {1, 0.5, 4, 0}"
  expect "$backend: $t finite" "first to produce" not -- \
    "$cxla" run --check-finite "$dir/$t.hlo" "$t[4] {0, 0, 0, 0}"
done

# Complex types: the real and the imaginary part are both tested.
for t in c64 c128; do
  case $t in
    c64) big=3e38 ;;
    c128) big=1e308 ;;
  esac
  cat >"$dir/$t.hlo" <<HLO
HloModule overflow_$t
ENTRY main {
  x = $t[2] parameter(0)
  c = $t[] constant(($big, 0))
  b = $t[2] broadcast(c), dimensions={}
  ROOT m = $t[2] multiply(x, b)
}
HLO
  expect "$backend: $t overflow (imaginary)" "m \(multiply.*first to produce" "" -- \
    "$cxla" run --check-finite "$dir/$t.hlo" "$t[2] {(0, 0), (0, 4)}"
  expect "$backend: $t overflow (real)" "m \(multiply.*first to produce" "" -- \
    "$cxla" run --check-finite "$dir/$t.hlo" "$t[2] {(4, 0), (0, 0)}"
  expect "$backend: $t finite" "first to produce" not -- \
    "$cxla" run --check-finite "$dir/$t.hlo" "$t[2] {(0.5, 0), (0, 0.25)}"
done

# A NaN that comes in as an argument and is only moved (dynamic-update-slice, select,
# tuple) is nobody's fault; the log of a negative number is.
cat >"$dir/move.hlo" <<'HLO'
HloModule move
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[1] parameter(1)
  i = s32[] constant(2)
  d = f32[4] dynamic-update-slice(x, y, i)
  p = pred[4] constant({1, 0, 1, 0})
  s = f32[4] select(p, d, x)
  l = f32[1] log(y)
  ROOT t = (f32[4], f32[1]) tuple(s, l)
}
HLO
expect "$backend: moved NaN" "first to produce" not -- \
  "$cxla" run --check-finite "$dir/move.hlo" "f32[4] {1, 2, 3, 4}" "f32[1] {nan}"
expect "$backend: computed NaN" "l \(log.*first to produce" "" -- \
  "$cxla" run --check-finite "$dir/move.hlo" "f32[4] {1, 2, 3, 4}" "f32[1] {-1}"

# A NaN argument carried through a while loop and a call, which take over their operands
# (the loop state, the call's last-use arguments) and may free them before the result is
# tested: nobody is blamed, and the check does not read the freed operands.
cat >"$dir/loop.hlo" <<'HLO'
HloModule loop
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[4] negate(x)
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
pass {
  a = f32[4] parameter(0)
  b = f32[4] abs(a)
  ROOT t = (f32[4], f32[4]) tuple(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  t0 = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(t0), condition=cond, body=body
  e = f32[4] get-tuple-element(w), index=1
  ROOT c = (f32[4], f32[4]) call(e), to_apply=pass
}
HLO
expect "$backend: NaN through a loop and a call" "first to produce" not -- \
  "$cxla" run --check-finite "$dir/loop.hlo" "f32[4] {1, nan, 2, 3}"
expect "$backend: loop and call values" "-1, -?nan, -2, -3" "" -- \
  "$cxla" run --check-finite "$dir/loop.hlo" "f32[4] {1, nan, 2, 3}"

done
finish
