#!/bin/bash
# src/cpu/cxla_math.h as generated code uses it: a source with one loop per function (in
# the shape the C emitter writes: blocks of 64 over restrict pointers) must compile without
# a warning under -Wall -Wextra -Wpedantic -Werror with the C compiler (CXLA_CC) and, when
# installed, with gcc and clang (also with -fno-math-errno, which changes sqrt); and gcc
# (12 or later, on a machine with AVX2) must vectorize every loop at -O2 -march=native,
# the flags of generated code, with and without -fno-math-errno.
set -euo pipefail
src_dir="${CXLA_SOURCE_DIR:?}"
work="$(mktemp -d "${TMPDIR:-/tmp}/cxla_math_XXXXXX")"
trap 'rm -rf "$work"' EXIT
c="$work/loops.c"
{
    echo '#include "cpu/cxla_math.h"'
    for f in exp expm1 log log1p tanh logistic erf sin cos tan rsqrt sqrt cbrt; do
        echo "void loop_$f(const float *restrict x, float *restrict o, long n);"
        echo "void loop_$f(const float *restrict x, float *restrict o, long n) {"
        echo "    for (long i0 = 0; i0 + 64 <= n; i0 += 64)"
        echo "        for (int k = 0; k < 64; k++) o[i0 + k] = cxla_f32_$f(x[i0 + k]);"
        echo "}"
    done
    for f in atan2 pow; do
        echo "void loop_$f(const float *restrict x, const float *restrict y, float *restrict o, long n);"
        echo "void loop_$f(const float *restrict x, const float *restrict y, float *restrict o, long n) {"
        echo "    for (long i0 = 0; i0 + 64 <= n; i0 += 64)"
        echo "        for (int k = 0; k < 64; k++) o[i0 + k] = cxla_f32_$f(x[i0 + k], y[i0 + k]);"
        echo "}"
    done
} > "$c"
warn="-std=c11 -O2 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
seen=" "
for cc in "${CXLA_CC:-cc}" gcc clang; do
    command -v "$cc" > /dev/null || continue
    case "$seen" in *" $cc "*) continue ;; esac
    seen="$seen$cc "
    "$cc" $warn -I"$src_dir/src" -c "$c" -o "$work/loops.o"
    "$cc" $warn -fno-math-errno -I"$src_dir/src" -c "$c" -o "$work/loops.o"
    echo "compiles cleanly with $cc"
done
if ! command -v gcc > /dev/null || ! grep -qw avx2 /proc/cpuinfo 2> /dev/null; then
    echo "vectorization not checked (needs gcc and an AVX2 machine)"
    exit 0
fi
major="$(gcc -dumpversion | cut -d. -f1)"
if [ "$major" -lt 12 ]; then
    echo "vectorization not checked (gcc $major: -O2 vectorizes from gcc 12)"
    exit 0
fi
# Both ways sqrt and rsqrt are written: Newton steps, and the instruction that
# -fno-math-errno (the flag generated code should have) allows.
for errno_flag in "" -fno-math-errno; do
    report="$(gcc -std=c11 -O2 -march=native $errno_flag -I"$src_dir/src" -fopt-info-vec-optimized \
        -c "$c" -o "$work/loops.o" 2>&1)"
    missing=""
    for f in exp expm1 log log1p tanh logistic erf sin cos tan rsqrt sqrt cbrt atan2 pow; do
        line="$(grep -n "^void loop_$f(.*{$" "$c" | cut -d: -f1)"
        # the inner loop is two lines below the function's opening line
        grep -q "loops.c:$((line + 2)):.*loop vectorized" <<<"$report" || missing="$missing $f"
    done
    if [ -n "$missing" ]; then
        echo "gcc -O2 -march=native $errno_flag did not vectorize the loops of:$missing"
        echo "$report"
        exit 1
    fi
    echo "gcc $major vectorizes all 15 loops at -O2 -march=native $errno_flag"
    # The float-only forms must fill a whole AVX-512 register (16 floats): a double or a
    # 64-bit integer anywhere in them would halve the lanes.
    if grep -qw avx512f /proc/cpuinfo 2> /dev/null; then
        narrow=""
        for f in exp expm1 log log1p tanh logistic erf; do
            line="$(grep -n "^void loop_$f(.*{$" "$c" | cut -d: -f1)"
            grep -q "loops.c:$((line + 2)):.*using 64 byte vectors" <<<"$report" ||
                narrow="$narrow $f"
        done
        if [ -n "$narrow" ]; then
            echo "gcc -O2 -march=native $errno_flag did not use 16 float lanes for:$narrow"
            echo "$report"
            exit 1
        fi
        echo "the seven float-only functions use 16 float lanes (AVX-512)"
    fi
done
