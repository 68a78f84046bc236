#!/usr/bin/env bash
# cxla compile -o (ahead-of-time output): the options' errors, the files it writes, the
# error for an operation without an ahead-of-time form, and examples/aot built by CMake
# with no cxla library, its results compared with the interpreter's (cxla run) to the
# last printed digit (9 significant digits: every f32 bit).
set -u
cxla=${1:?path to the cxla tool}
src=${CXLA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/tools/testlib.sh"

expect "-o needs a value" 1 "-o needs a value" -- "$cxla" compile "$src/examples/predict.hlo" -o
expect "bad target" 1 "portable or native" -- \
  "$cxla" compile "$src/examples/predict.hlo" -o "$dir/p" --target fancy
expect "--prefix alone" 1 "go with -o" -- "$cxla" compile "$src/examples/predict.hlo" --prefix x
expect "bad blas" 1 "onednn or none" -- \
  "$cxla" compile "$src/examples/predict.hlo" -o "$dir/p" --blas mkl
expect "--blas alone" 1 "go with -o" -- "$cxla" compile "$src/examples/predict.hlo" --blas onednn
expect "--blas none" 0 "" -- "$cxla" compile "$src/examples/predict.hlo" -o "$dir/pn" --blas none
grep -q "dnnl" "$dir/pn.c" && fail "--blas none wrote a oneDNN call" || ok
expect "--blas onednn" 0 "" -- "$cxla" compile "$src/examples/predict.hlo" -o "$dir/pb" \
  --blas onednn
grep -q "dnnl_matmul_desc_init" "$dir/pb.c" && ok || fail "--blas onednn wrote no oneDNN call"
expect "-o and --emit-c" 1 "does not go with" -- \
  "$cxla" compile "$src/examples/predict.hlo" -o "$dir/p" --emit-c
expect "writes the files" 0 "" -- "$cxla" compile "$src/examples/predict.hlo" -o "$dir/p" \
  --prefix my_pred
[ -f "$dir/p.h" ] && [ -f "$dir/p.c" ] && ok || fail "p.h and p.c were not written"
grep -q "int my_pred_run(const void \*const \*args" "$dir/p.h" && ok || fail "no my_pred_run"
# The complex exponential compiles through C99's <complex.h>, as the interpreter computes it,
# with an #error naming it for compilers that lack <complex.h> (tcc).
cat >"$dir/cexp.hlo" <<'HLO'
HloModule r
ENTRY e {
  a = c64[4] parameter(0)
  ROOT the_exp = c64[4] exponential(a)
}
HLO
expect "complex exp" 0 "" -- "$cxla" compile "$dir/cexp.hlo" -o "$dir/cx"
grep -q 'error "cxla: kernel .* computes exponential of c64 with C99.s <complex.h> (cexp)' \
  "$dir/cx.c" && ok || fail "no #error naming cexp in cx.c"
if command -v tcc >/dev/null 2>&1; then
  if tcc -std=c11 -I"$dir" -c "$dir/cx.c" -o "$dir/cx.o" 2>"$dir/tcc.err"; then
    fail "tcc compiled a kernel that needs <complex.h>"
  else
    grep -q "computes exponential of c64 with C99.s <complex.h>" "$dir/tcc.err" && ok ||
      fail "tcc did not stop at the #error: $(head -3 "$dir/tcc.err")"
  fi
fi
# A scan whose body is not computed position by position (a reduce inside) has no
# ahead-of-time form (src/cpu/emit_scan.c takes the others).
cat >"$dir/scan.hlo" <<'HLO'
HloModule r
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
step {
  x = f32[3] parameter(0)
  c = f32[] parameter(1)
  z = f32[] constant(0)
  r = f32[] reduce(x, z), dimensions={0}, to_apply=add
  s = f32[] add(r, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY e {
  a = f32[4,3] parameter(0)
  c0 = f32[] parameter(1)
  ROOT the_scan = (f32[4], f32[]) scan(a, c0), dimensions={0}, num_carries=1, to_apply=step
}
HLO
expect "no ahead-of-time form" 1 "the_scan \(scan\).*ahead-of-time" -- \
  "$cxla" compile "$dir/scan.hlo" -o "$dir/s"
# rng compiles ahead of time: the seed and the state are NAME_options' (docs/aot.md).
cat >"$dir/rng.hlo" <<'HLO'
HloModule r
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT the_rng = f32[4] rng(a, b), distribution=rng_uniform
}
HLO
expect "rng compiles" 0 "" -- "$cxla" compile "$dir/rng.hlo" -o "$dir/r"
grep -q "uint64_t \*rng_state;" "$dir/r.h" && ok || fail "no rng_state in r.h's options"

# A dot whose columns are whole register blocks (N = 512) has no leftover-columns loop:
# the never-run loop made gcc -O2 warn, an error under -Werror.
cat >"$dir/dot512.hlo" <<'HLO'
HloModule d
ENTRY e {
  a = f32[64,512] parameter(0)
  b = f32[512,512] parameter(1)
  ROOT d = f32[64,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
expect "dot 64x512x512" 0 "" -- "$cxla" compile "$dir/dot512.hlo" -o "$dir/dot512"
for cc in gcc clang; do
  command -v $cc >/dev/null || continue
  $cc -std=c11 -O2 -Wall -Wextra -Werror -c -o "$dir/dot512.o" "$dir/dot512.c" && ok ||
    fail "the dot 64x512x512 does not compile warning-free with $cc"
done

# The example's softmax calls exp: the interpreter's own expression, so that the comparison
# with the interpreter below can be exact (docs/aot.md).
export CXLA_CPU_EXACT_MATH=1
if command -v cmake >/dev/null && command -v cc >/dev/null; then
  if cmake -S "$src/examples/aot" -B "$dir/build" -DCXLA="$cxla" >"$dir/cmake.txt" 2>&1 &&
    cmake --build "$dir/build" >>"$dir/cmake.txt" 2>&1; then
    ok
    # The prelude's static helpers are named cxla_*; the library's entry points must be absent.
    if nm "$dir/build/predict_aot" | grep -qE "cxla_(status|hlo|literal|client)"; then
      fail "the example links cxla's library"
    fi
    "$dir/build/predict_aot" >"$dir/aot.txt" || fail "predict_aot failed"
    if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
      (cd "$dir" && /usr/bin/python3 -c "
import numpy as np
w = np.array([[(i - j) * 0.25 for j in range(3)] for i in range(4)], np.float32)
b = np.array([0.1, -0.2, 0.3], np.float32)
x = np.array([[(r * 4 + i) / 16.0 - 1.0 for i in range(4)] for r in range(8)], np.float32)
np.save('w.npy', w); np.save('b.npy', b); np.save('x.npy', x)")
      "$cxla" run "$src/examples/predict.hlo" "$dir/w.npy" "$dir/b.npy" "$dir/x.npy" \
        -o "$dir/out" --backend interpreter >/dev/null || fail "cxla run failed"
      /usr/bin/python3 -c "
import numpy as np
p = np.load('$dir/out/out0.npy')
for r in range(8): print('row %d: %.9g %.9g %.9g' % (r, p[r][0], p[r][1], p[r][2]))" >"$dir/want.txt"
      if diff "$dir/want.txt" "$dir/aot.txt"; then ok; else fail "the example differs"; fi
    fi
  else
    fail "examples/aot does not build:"
    cat "$dir/cmake.txt"
  fi
fi
finish
