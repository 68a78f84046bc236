#!/usr/bin/env bash
# cxla run with host effects: --infeed / --outfeed-dir, custom calls from a library
# loaded with LD_PRELOAD, and the example program examples/run_hlo.c (built next to the
# tool, in build/examples/).
set -u
cxla=${1:?path to the cxla tool}
run_hlo=$(dirname "$cxla")/examples/run_hlo
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

# Reads two infeed values (f32[3], then s32[2]), outfeeds -first and then the second.
cat >"$dir/feed.hlo" <<'HLO'
HloModule feed
ENTRY main {
  t0 = token[] after-all()
  in = (f32[3], token[]) infeed(t0)
  d = f32[3] get-tuple-element(in), index=0
  t1 = token[] get-tuple-element(in), index=1
  n = f32[3] negate(d)
  t2 = token[] outfeed(n, t1)
  in2 = (s32[2], token[]) infeed(t2)
  d2 = s32[2] get-tuple-element(in2), index=0
  t3 = token[] get-tuple-element(in2), index=1
  t4 = token[] outfeed(d2, t3)
  ROOT r = f32[3] add(d, d)
}
HLO
cat >"$dir/id_f32.hlo" <<'HLO'
HloModule id
ENTRY main {
  ROOT x = f32[3] parameter(0)
}
HLO
cat >"$dir/id_s32.hlo" <<'HLO'
HloModule id
ENTRY main {
  ROOT x = s32[2] parameter(0)
}
HLO

# .npy inputs made by cxla itself (no NumPy needed).
"$cxla" run "$dir/id_f32.hlo" 'f32[3] {1, 2.5, -3}' -o "$dir/a" >/dev/null || fail "make a.npy"
"$cxla" run "$dir/id_s32.hlo" 's32[2] {7, -8}' -o "$dir/b" >/dev/null || fail "make b.npy"

expect "infeed npy" 0 "f32\[3\] \{2, 5, -6\}" -- \
  "$cxla" run "$dir/feed.hlo" --infeed "$dir/a/out0.npy" --infeed "$dir/b/out0.npy" \
  --outfeed-dir "$dir/of"
[ -f "$dir/of/outfeed0.npy" ] && [ -f "$dir/of/outfeed1.npy" ] && ok || fail "outfeed files"
[ -f "$dir/of/outfeed2.npy" ] && fail "an extra outfeed file" || ok
expect "outfeed0 in order" 0 "f32\[3\] \{-1, -2.5, 3\}" -- "$cxla" run "$dir/id_f32.hlo" "$dir/of/outfeed0.npy"
expect "outfeed1 in order" 0 "s32\[2\] \{7, -8\}" -- "$cxla" run "$dir/id_s32.hlo" "$dir/of/outfeed1.npy"
expect "infeed text" 0 "f32\[3\] \{0, 2, 4\}" -- \
  "$cxla" run "$dir/feed.hlo" --infeed 'f32[3] {0, 1, 2}' --infeed 's32[2] {1, 2}'
expect "outfeed not saved" 0 "outfed 2 value" -- \
  "$cxla" run "$dir/feed.hlo" --infeed 'f32[3] {0, 1, 2}' --infeed 's32[2] {1, 2}'
expect "infeed left" 0 "1 infeed value\(s\) were not read" -- \
  "$cxla" run "$dir/feed.hlo" --infeed 'f32[3] {0, 1, 2}' --infeed 's32[2] {1, 2}' \
  --infeed 's32[2] {3, 4}'
expect "infeed repeat" 0 "run +median" -- \
  "$cxla" run "$dir/feed.hlo" --infeed 'f32[3] {0, 1, 2}' --infeed 's32[2] {1, 2}' --repeat 3
expect "infeed missing" 1 "in2 \(infeed, line 9\): the infeed queue is empty" -- \
  "$cxla" run "$dir/feed.hlo" --infeed 'f32[3] {0, 1, 2}'
expect "infeed none" 1 "in \(infeed, line 4\): the infeed queue is empty" -- \
  "$cxla" run "$dir/feed.hlo"
expect "infeed wrong shape" 1 "has shape s32\[2\], but the instruction reads f32\[3\]" -- \
  "$cxla" run "$dir/feed.hlo" --infeed 's32[2] {1, 2}'
expect "infeed bad file" 1 "--infeed .*nope.npy" -- \
  "$cxla" run "$dir/feed.hlo" --infeed "$dir/nope.npy"
expect "infeed needs a value" 1 "--infeed needs a value" -- "$cxla" run "$dir/feed.hlo" --infeed
expect "outfeed-dir needs a value" 1 "--outfeed-dir needs a value" -- \
  "$cxla" run "$dir/feed.hlo" --outfeed-dir
expect "help run" 0 "--outfeed-dir DIR" -- "$cxla" help run
expect "backend interpreter" 0 "f32\[3\] \{0, 2, 4\}" -- \
  "$cxla" run "$dir/feed.hlo" --backend interpreter --infeed 'f32[3] {0, 1, 2}' \
  --infeed 's32[2] {1, 2}'

# A custom-call target from a shared library (when a C compiler is at hand). A
# sanitizer build's runtime must come first in the library list; tell it not to mind.
cat >"$dir/cc.hlo" <<'HLO'
HloModule cc
ENTRY main {
  x = f32[3] parameter(0)
  ROOT t = f32[3] custom-call(x), custom_call_target="cxla_cli_test_triple"
}
HLO
cat >"$dir/lib.c" <<'C'
void cxla_cli_test_triple(void *out, const void **in) {
    const float *a = in[0];
    float *o = out;
    for (int i = 0; i < 3; i++) o[i] = 3 * a[i];
}
C
if command -v cc >/dev/null && cc -shared -fPIC -o "$dir/lib.so" "$dir/lib.c" 2>/dev/null; then
  expect "custom call from LD_PRELOAD" 0 "f32\[3\] \{3, -6, 1.5\}" -- \
    env LD_PRELOAD="$dir/lib.so" ASAN_OPTIONS=verify_asan_link_order=0 \
    "$cxla" run "$dir/cc.hlo" 'f32[3] {1, -2, 0.5}'
fi
expect "custom call missing" 1 "t \(custom-call, line 4\): custom-call target 'cxla_cli_test_triple'" -- \
  "$cxla" run "$dir/cc.hlo" 'f32[3] {1, -2, 0.5}'

# The example program.
if [ -x "$run_hlo" ]; then
  cat >"$dir/add.hlo" <<'HLO'
HloModule add
ENTRY main {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  ROOT s = (f32[3], f32[3]) tuple(x, y)
}
HLO
  expect "example run_hlo" 0 "\( f32\[3\] \{1, 2.5, -3\}, f32\[3\] \{-1, -2.5, 3\} \)" -- \
    "$run_hlo" "$dir/add.hlo" "$dir/a/out0.npy" "$dir/of/outfeed0.npy"
  expect "example usage" 2 "usage: run_hlo" -- "$run_hlo"
  expect "example error" 1 "run_hlo: .*takes 2 arguments, got 1" -- \
    "$run_hlo" "$dir/add.hlo" "$dir/a/out0.npy"
else
  fail "the example program $run_hlo was not built"
fi

finish
