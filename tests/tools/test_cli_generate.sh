#!/usr/bin/env bash
# cxla run without inputs: generated inputs that respect what they feed (indices in
# range, sort keys without duplicates, reduce init values), the non-finite hint,
# --quiet, and the input-count error that lists the parameters.
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

# A gather index through jnp.take's wrapping (a call, compare, add, select), then a
# bounds check that makes NaN of any index out of [0, 2]: the result must be finite.
cat >"$dir/take.hlo" <<'HLO'
HloModule take
where {
  c = pred[64] parameter(0)
  a = s32[64] parameter(1)
  b = s32[64] parameter(2)
  ROOT s = s32[64] select(c, a, b)
}
ENTRY main {
  table = f32[3,4] parameter(0)
  i = s32[64] parameter(1)
  zero = s32[] constant(0)
  zeros = s32[64] broadcast(zero), dimensions={}
  neg = pred[64] compare(i, zeros), direction=LT
  three = s32[] constant(3)
  threes = s32[64] broadcast(three), dimensions={}
  wrapped = s32[64] add(i, threes)
  w = s32[64] call(neg, wrapped, i), to_apply=where
  idx = s32[64,1] reshape(w)
  g = f32[64,4] gather(table, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  two = s32[] constant(2)
  twos = s32[64] broadcast(two), dimensions={}
  ok = pred[64] compare(w, twos), direction=LE
  okb = pred[64,4] broadcast(ok), dimensions={0}
  nan = f32[] constant(nan)
  nans = f32[64,4] broadcast(nan), dimensions={}
  ROOT r = f32[64,4] select(okb, g, nans)
}
HLO
out=$("$cxla" run "$dir/take.hlo" 2>&1)
if grep -q nan <<<"$out"; then fail "take: generated indices out of range: $out"; else ok; fi
# The hint names --check-finite when a result is not finite.
cat >"$dir/log.hlo" <<'HLO'
HloModule log
ENTRY main {
  x = f32[2] parameter(0)
  ROOT l = f32[2] log(x)
}
HLO
expect "non-finite hint" 0 "note: 1 of the 1 result arrays hold NaN or inf; --check-finite" -- "$cxla" run "$dir/log.hlo" 'f32[2] {-1, 1}'
out=$("$cxla" run "$dir/take.hlo" 2>&1 >/dev/null)
if [ -z "$out" ]; then ok; else fail "a finite result gave a note: $out"; fi

# A dynamic-slice start: in [0, 10 - 4]; checked through the slice's first element.
cat >"$dir/ds.hlo" <<'HLO'
HloModule ds
ENTRY main {
  x = s32[10] iota(), iota_dimension=0
  i = s32[] parameter(0)
  ROOT d = s32[4] dynamic-slice(x, i), dynamic_slice_sizes={4}
}
HLO
seen=""
for seed in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  seen="$seen $("$cxla" run --seed $seed "$dir/ds.hlo" | sed 's/.*{\([0-9]*\),.*/\1/')"
done
bad=$(tr ' ' '\n' <<<"$seen" | grep -vE '^$|^[0-6]$' || true)
distinct=$(tr ' ' '\n' <<<"$seen" | grep -E '^[0-9]+$' | sort -u | wc -l)
if [ -z "$bad" ] && [ "$distinct" -ge 4 ]; then ok; else fail "dynamic-slice starts: $seen"; fi

# Integer keys of a key-value sort: a permutation of 0..n-1.
cat >"$dir/sort.hlo" <<'HLO'
HloModule sort
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY main {
  k = s32[50] parameter(0)
  v = f32[50] parameter(1)
  s = (s32[50], f32[50]) sort(k, v), dimensions={0}, to_apply=cmp
  ROOT keys = s32[50] get-tuple-element(s), index=0
}
HLO
expect "sort keys" 0 "^s32\[50\] \{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, .*, 47, 48, 49\}$" -- "$cxla" run "$dir/sort.hlo"

# An add-reduce's init parameter is 0 (and a multiply's 1): the sum of a pred count.
cat >"$dir/reduce.hlo" <<'HLO'
HloModule reduce
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY main {
  one = s32[] constant(1)
  x = s32[5] broadcast(one), dimensions={}
  init = s32[] parameter(0)
  ROOT r = s32[] reduce(x, init), dimensions={0}, to_apply=add
}
HLO
expect "reduce init" 0 "^s32\[\] 5$" -- "$cxla" run "$dir/reduce.hlo"

# Every float type is generated in [-0.1, 0.2] (rounded to the type: f8 ends at +-0.01).
for t in f32 f64 bf16 f16 f8e4m3fn f8e5m2 c64; do
  cat >"$dir/gen_$t.hlo" <<HLO
HloModule gen
ENTRY main {
  ROOT x = $t[200] parameter(0)
}
HLO
  "$cxla" run "$dir/gen_$t.hlo" -o "$dir/gen_$t" --quiet >"$dir/gen_$t.out" 2>&1
  if [ -s "$dir/gen_$t.out" ] || [ ! -f "$dir/gen_$t/out0.npy" ]; then
    fail "--quiet -o for $t printed: $(cat "$dir/gen_$t.out")"
  else
    ok
  fi
  vals=$("$cxla" run "$dir/gen_$t.hlo" | tr -d '{}(),' | tr ' ' '\n' | grep -E '^-?[0-9.e+-]+$')
  bad=$(awk '$1 < -0.11 || $1 > 0.21' <<<"$vals" | head -3)
  n=$(wc -l <<<"$vals")
  if [ -z "$bad" ] && [ "$n" -ge 7 ]; then ok; else fail "$t generated out of [-0.1, 0.2]: $bad (n=$n)"; fi
done

# The input-count error lists the parameters with their shapes.
cat >"$dir/two.hlo" <<'HLO'
HloModule two
ENTRY main {
  x = f32[3] parameter(0)
  y = (s32[2], pred[]) parameter(1)
  ROOT t = f32[3] negate(x)
}
HLO
expect "input count lists parameters" 1 "parameter 1: \(s32\[2\], pred\[\]\)" -- "$cxla" run "$dir/two.hlo" 'f32[3] {1, 2, 3}'
expect "input count says how many" 1 "takes 3 input arrays \(parameter leaves\), got 1" -- "$cxla" run "$dir/two.hlo" 'f32[3] {1, 2, 3}'
# --quiet keeps errors.
expect "quiet keeps errors" 1 "got 1" -- "$cxla" run --quiet "$dir/two.hlo" 'f32[3] {1, 2, 3}'

finish
