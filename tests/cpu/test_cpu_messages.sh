#!/usr/bin/env bash
# The cpu backend's messages say what the interpreter's say (issue 13, "the message names
# what was wrong and where"): --check-finite names the user's instruction inside the
# fusion it ended up in (the interpreter's line, with ", fused into F" before it closes),
# also one inlined from a called computation (issue 19); out of memory names the
# instruction of the result it could not allocate, or the arena's size and its largest
# buffer's instruction; a run cancelled in a fused while loop names the loop's back-edge
# and iteration (tests/cpu/test_cpu_cancel_messages.c runs the other cancellations).
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=../tools/testlib.sh
. "$(dirname "$0")/../tools/testlib.sh"
"$cxla" version 2>/dev/null | grep -q "^backend: cpu" || {
  echo "SKIP: no C compiler, no cpu backend"
  exit 77
}
unset CXLA_BACKEND
# 400 GB requests: ASan must return NULL instead of aborting.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"

# first_line BACKEND ARGS...: the --check-finite line of a run.
first_line() {
  local backend=$1
  shift
  "$cxla" run --backend "$backend" --check-finite "$@" 2>&1 | grep "first to produce"
}

# same_blame NAME ARGS...: the cpu line is the interpreter's, with what the cpu adds
# (", fused into F", an op_name) before its parenthesis closes.
same_blame() {
  local name=$1
  shift
  local want got
  want=$(first_line interpreter "$@")
  got=$(first_line cpu "$@")
  local prefix=${want%%) is the first*}
  if [ -z "$want" ] || [ "${got#"$prefix"}" = "$got" ] || ! grep -q "fused into" <<<"$got"; then
    fail "$name: cpu says '$got', the interpreter '$want'"
    return
  fi
  ok
}

# ---- --check-finite ----------------------------------------------------------------------
cat >"$dir/fused.hlo" <<'HLO'
HloModule fused
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  c = f32[] constant(3e38)
  b = f32[4] broadcast(c), dimensions={}
  m = f32[4] multiply(x, b), metadata={op_name="jit(f)/mul"}
  e = f32[4] exponential(y)
  ROOT a = f32[4] add(m, e)
}
HLO
same_blame "multiply inside a fusion" "$dir/fused.hlo" "f32[4] {1, 0.5, 4, 0}" "f32[4] {0, 0, 0, 0}"
expect "the fused instruction by its name and op_name" 0 \
  '^cxla: m \(multiply, computation main, line 7, fused into fusion[.0-9]*, op_name "jit\(f\)/mul"\) is the first' -- \
  "$cxla" run --check-finite "$dir/fused.hlo" "f32[4] {1, 0.5, 4, 0}" "f32[4] {0, 0, 0, 0}"
# exp(100) overflows, m does not: the culprit is not the fusion's first instruction.
same_blame "exponential inside a fusion" "$dir/fused.hlo" "f32[4] {0, 0, 0, 0}" "f32[4] {100, 0, 0, 0}"
expect "the second instruction named" 0 "^cxla: e \(exponential, computation main, line 8, fused" -- \
  "$cxla" run --check-finite "$dir/fused.hlo" "f32[4] {0, 0, 0, 0}" "f32[4] {100, 0, 0, 0}"

# An instruction of a called computation, inlined into a while body and fused there.
cat >"$dir/call.hlo" <<'HLO'
HloModule callnan
sq {
  a = f32[4] parameter(0)
  l = f32[4] log(a)
  ROOT n = f32[4] negate(l)
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[4] subtract(x, x)
  z = f32[4] call(y), to_apply=sq
  ROOT t = (s32[], f32[4]) tuple(j, z)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY main {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  t0 = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(t0), condition=cond, body=body
  ROOT e = f32[4] get-tuple-element(w), index=1
}
HLO
same_blame "inside a called computation" "$dir/call.hlo" "f32[4] {1, 2, 3, 4}"
for backend in interpreter cpu; do
  expect "$backend: the callee's instruction, not the call" 0 \
    "^cxla: l \(log, computation sq, line 4[,)].* is the first" -- \
    "$cxla" run --backend $backend --check-finite "$dir/call.hlo" "f32[4] {1, 2, 3, 4}"
done

# A step that writes over its operand (a scatter in place): its operands are tested
# before it runs, so it is blamed, by the root of its to_apply, which its kernel computes
# inline (the interpreter's handler takes the operand over and cannot tell: it blames
# nobody).
cat >"$dir/scatter.hlo" <<'HLO'
HloModule scatter
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8] parameter(0)
  u = f32[2] parameter(1)
  t = f32[8] multiply(x, x)
  idx = s32[2,1] constant({{1},{3}})
  d = f32[2] multiply(u, u)
  r = f32[8] scatter(t, idx, d), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT n = f32[8] negate(r)
}
HLO
expect "an update in place" 0 "^cxla: s \(add, computation add, line 5, the to_apply of r \(scatter, computation main, line 13\)\) is the first" -- \
  "$cxla" run --backend cpu --check-finite "$dir/scatter.hlo" "f32[8] {1,1.4e19,1,1,1,1,1,1}" \
  "f32[2] {1.4e19, 1}"

# ---- out of memory -------------------------------------------------------------------------
cat >"$dir/big.hlo" <<'HLO'
HloModule big
ENTRY main {
  p = f32[] parameter(0)
  b = f32[100000000000] broadcast(p), dimensions={}
  ROOT n = f32[100000000000] negate(b)
}
HLO
expect "a result: its instruction and bytes" 1 \
  "n \(negate, computation main, line 5, fused into fusion[.0-9]* with b\), result 0: out of memory allocating an array of f32\[100000000000\] \(400000000000 bytes\)" -- \
  "$cxla" run --backend cpu "$dir/big.hlo" "f32[] 1"
cat >"$dir/arena.hlo" <<'HLO'
HloModule arena
lt {
  a = f32[] parameter(0)
  c = f32[] parameter(1)
  ROOT l = pred[] compare(a, c), direction=LT
}
ENTRY main {
  p = f32[] parameter(0)
  b = f32[100000000000] broadcast(p), dimensions={}
  s = f32[100000000000] sort(b), dimensions={0}, to_apply=lt
  ROOT r = f32[2] slice(s), slice={[0:2]}
}
HLO
expect "the arena: its bytes and its largest buffer" 1 \
  "out of memory allocating the arena of module 'arena' \([0-9]+ bytes: .*its largest buffer \([0-9]+ bytes\) holds s \(sort, computation main, line 10\)" -- \
  "$cxla" run --backend cpu "$dir/arena.hlo" "f32[] 1"

finish
