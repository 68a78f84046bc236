#!/usr/bin/env bash
# `cxla run --check-finite` names the instruction inside a called computation that first
# makes a NaN or Inf from finite operands, not the instruction that calls it: a call, a
# fusion, a while body, a conditional branch, the to_apply of reduce, reduce-window and
# scatter (whose recognized reducer runs without calling the computation: its root is
# named, with the instruction it serves), and a map's computation. The cpu backend names
# the same, except a map whose computation is more than one recognized operation: it is
# compiled into the map's kernel, and the map is named (docs/cli.md).
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=../tools/testlib.sh
. "$(dirname "$0")/../tools/testlib.sh"
backends=interpreter
"$cxla" version 2>/dev/null | grep -q "^backend: cpu" && backends="interpreter cpu"

# check NAME BACKEND PATTERN -- command...: the run succeeds and its first-culprit line
# matches PATTERN (grep -E) as a whole line.
check() {
  local name=$1 backend=$2 pattern=$3
  shift 4
  local out line
  out=$(CXLA_BACKEND=$backend "$@" 2>&1)
  local got=$?
  line=$(grep "is the first to produce" <<<"$out")
  if [ "$got" -ne 0 ]; then fail "$name ($backend): exit $got: $out"; return; fi
  if ! grep -qxE -- "$pattern" <<<"$line"; then fail "$name ($backend): got '$line', want /$pattern/"; return; fi
  ok
}
tail="is the first to produce a NaN or Inf from finite operands"

cat >"$dir/call.hlo" <<'HLO'
HloModule call
callee {
  p = f32[4] parameter(0)
  l = f32[4] log(p)
  ROOT n = f32[4] negate(l)
}
ENTRY main {
  x = f32[4] parameter(0)
  c = f32[4] call(x), to_apply=callee
  ROOT t = f32[4] add(c, x)
}
HLO
for b in $backends; do
  check "call" "$b" "cxla: l \(log, computation callee, line 4(, fused into [a-z0-9.]+)?\) $tail" -- \
    "$cxla" run -q --check-finite "$dir/call.hlo" "f32[4] {1, 0, 2, 3}"
done

cat >"$dir/fusion.hlo" <<'HLO'
HloModule fusion
fused {
  p = f32[4] parameter(0)
  z = f32[4] constant({0, 0, 0, 0})
  d = f32[4] divide(p, z)
  ROOT a = f32[4] abs(d)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused
}
HLO
for b in $backends; do
  check "fusion" "$b" "cxla: d \(divide, computation fused, line 5(, fused into f)?\) $tail" -- \
    "$cxla" run -q --check-finite "$dir/fusion.hlo" "f32[4] {1, 0, 2, 3}"
done

cat >"$dir/while.hlo" <<'HLO'
HloModule while
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(40)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  m = f32[4] multiply(v, v)
  ROOT t = (s32[], f32[4]) tuple(i1, m)
}
ENTRY main {
  z = s32[] constant(0)
  x = f32[4] parameter(0)
  t = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
HLO
for b in $backends; do
  check "while body" "$b" "cxla: m \(multiply, computation body, line 14\) $tail" -- \
    "$cxla" run -q --check-finite "$dir/while.hlo" "f32[4] {1, 2, 1.5, 1.1}"
done

cat >"$dir/cond.hlo" <<'HLO'
HloModule cond
b0 {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
b1 {
  p = f32[4] parameter(0)
  ROOT l = f32[4] log(p)
}
ENTRY main {
  x = f32[4] parameter(0)
  i = s32[] parameter(1)
  ROOT c = f32[4] conditional(i, x, x), branch_computations={b0, b1}
}
HLO
for b in $backends; do
  check "conditional branch" "$b" "cxla: l \(log, computation b1, line 8\) $tail" -- \
    "$cxla" run -q --check-finite "$dir/cond.hlo" "f32[4] {1, 0, 2, 3}" "s32[] 1"
done

cat >"$dir/reduce.hlo" <<'HLO'
HloModule reduce
mul {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] multiply(a, b)
}
add {
  c = f32[] parameter(0)
  d = f32[] parameter(1)
  ROOT q = f32[] add(c, d)
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  one = f32[] constant(1)
  zero = f32[] constant(0)
  r = f32[] reduce(x, one), dimensions={0}, to_apply=mul
  w = f32[3] reduce-window(y, zero), window={size=2}, to_apply=add
  ROOT t = (f32[], f32[3]) tuple(r, w)
}
HLO
for b in $backends; do
  check "reduce's to_apply" "$b" "cxla: s \(multiply, computation mul, line 5, the to_apply of r \(reduce, computation main, line 17\)\) $tail" -- \
    "$cxla" run -q --check-finite "$dir/reduce.hlo" "f32[4] {1e30, 1e30, 1, 1}" "f32[4] {0, 0, 0, 0}"
  check "reduce-window's to_apply" "$b" "cxla: q \(add, computation add, line 10, the to_apply of w \(reduce-window, computation main, line 18\)\) $tail" -- \
    "$cxla" run -q --check-finite "$dir/reduce.hlo" "f32[4] {1, 1, 1, 1}" "f32[4] {1, 3e38, 3e38, 0}"
done

cat >"$dir/scatter.hlo" <<'HLO'
HloModule scatter
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  i = s32[2,1] constant({{1}, {1}})
  u = f32[2] parameter(1)
  ROOT r = f32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
HLO
for b in $backends; do
  check "scatter's to_apply" "$b" "cxla: s \(add, computation add, line 5, the to_apply of r \(scatter, computation main, line 11\)\) $tail" -- \
    "$cxla" run -q --check-finite "$dir/scatter.hlo" "f32[4] {1, 3e38, 1, 1}" "f32[2] {3e38, 1}"
done

cat >"$dir/map.hlo" <<'HLO'
HloModule map
sq {
  a = f32[] parameter(0)
  e = f32[] exponential(a)
  ROOT s = f32[] multiply(e, e)
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] map(x), dimensions={0}, to_apply=sq
}
HLO
check "map's computation" interpreter "cxla: s \(multiply, computation sq, line 5\) $tail" -- \
  "$cxla" run -q --check-finite "$dir/map.hlo" "f32[4] {1, 2, 50, 3}"
case " $backends " in
*" cpu "*)
  # Compiled into the map's kernel: the map is named (docs/cli.md says so).
  check "map's computation" cpu "cxla: r \(map, computation main, line 9\) $tail" -- \
    "$cxla" run -q --check-finite "$dir/map.hlo" "f32[4] {1, 2, 50, 3}"
  ;;
esac

finish
