#!/usr/bin/env bash
# cxla compile: the optimized module on stdout (it parses, verifies and runs to the same
# result as the input), --dump-after PASS|all on stderr, and its errors.
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

cat >"$dir/m.hlo" <<'HLO'
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  a = f32[4,8] parameter(0)
  one = f32[] constant(1)
  bo = f32[4,8] broadcast(one), dimensions={}
  x = f32[4,8] multiply(a, bo)
  t = f32[4,8] tanh(x)
  dead = f32[4,8] negate(a)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(t, z), dimensions={1}, to_apply=add
}
HLO

expect "compile prints a fused module" 0 "fusion\(a\), kind=kInput, calls=fused_computation" -- "$cxla" compile "$dir/m.hlo"
"$cxla" compile "$dir/m.hlo" >"$dir/out.hlo" 2>"$dir/err"
if grep -qE 'negate|multiply' "$dir/out.hlo"; then fail "dead code or x*1 left: $(cat "$dir/out.hlo")"; else ok; fi
expect "the output verifies" 0 "" -- "$cxla" check "$dir/out.hlo"
if [ -s "$dir/err" ]; then fail "stderr without --dump-after: $(cat "$dir/err")"; else ok; fi
input='f32[4,8] {{1,2,3,4,5,6,7,8},{0,-0,1,2,3,4,5,6},{-1,-2,-3,-4,-5,-6,-7,-8},{0.5,0.25,0.125,1,2,3,4,5}}'
before=$("$cxla" run "$dir/m.hlo" "$input" 2>&1)
after=$("$cxla" run "$dir/out.hlo" "$input" 2>&1)
if [ "$before" = "$after" ]; then ok; else fail "results differ: $before vs $after"; fi
expect "emit-hlo" 0 "kind=kInput" -- "$cxla" compile --emit-hlo "$dir/m.hlo"

"$cxla" compile --dump-after dce "$dir/m.hlo" >/dev/null 2>"$dir/dump"
n=$(grep -c '^// after dce (pipeline cpu' "$dir/dump")
if [ "$n" -eq 2 ]; then ok; else fail "--dump-after dce: $n dumps, expected 2"; fi
"$cxla" compile --dump-after all "$dir/m.hlo" >/dev/null 2>"$dir/dump"
n=$(grep -c '^// after ' "$dir/dump")
if [ "$n" -eq 11 ]; then ok; else fail "--dump-after all: $n dumps, expected 11"; fi

expect "unknown pass" 1 "no pass named 'nope'; the cpu pipeline has: inline simplify" -- "$cxla" compile --dump-after nope "$dir/m.hlo"
expect "missing value" 1 "needs a pass name" -- "$cxla" compile "$dir/m.hlo" --dump-after
expect "no module" 1 "usage: cxla compile" -- "$cxla" compile
expect "unknown option" 1 "unknown option '--bogus'" -- "$cxla" compile --bogus "$dir/m.hlo"
expect "help" 0 "--dump-after PASS" -- "$cxla" help compile
printf 'HloModule m\nENTRY e {\n  ROOT a = f32[] bogus()\n}\n' >"$dir/bad.hlo"
expect "parse error" 1 "bad\.hlo:3:18: Unknown opcode" -- "$cxla" compile "$dir/bad.hlo"

# --emit-c: the kernels the cpu backend compiles, readable, and valid C.
expect "emit-c" 0 "void k[0-9]+_fusion" -- "$cxla" compile --emit-c "$dir/m.hlo"
"$cxla" compile --emit-c "$dir/m.hlo" >"$dir/m.c"
if grep -qE '^/\* ---- k[0-9]+_fusion' "$dir/m.c" && grep -qE '/\* .* reduce\(' "$dir/m.c"; then ok; else fail "no HLO comments in the C"; fi
if ${CXLA_CC:-cc} -std=c11 -Wall -Wextra -Werror -O2 -c "$dir/m.c" -o "$dir/m.o" 2>"$dir/cc.err"; then ok; else fail "the emitted C does not compile: $(head -5 "$dir/cc.err")"; fi
expect "emit-hlo and emit-c" 1 "not both" -- "$cxla" compile --emit-hlo --emit-c "$dir/m.hlo"

# The compile cache: a module compiles once; `cxla cache clear` empties the cache.
export CXLA_CACHE_DIR="$dir/cache"
expect "cache dir" 0 "$dir/cache" -- "$cxla" cache dir
"$cxla" run --backend cpu "$dir/m.hlo" "$input" >/dev/null 2>&1
n=$(ls "$dir/cache"/*.so 2>/dev/null | wc -l)
if [ "$n" -ge 1 ]; then ok; else fail "no compiled object in the cache after a cpu run"; fi
expect "cache clear" 0 "removed [0-9]+ compiled objects" -- "$cxla" cache clear
n=$(ls "$dir/cache"/*.so 2>/dev/null | wc -l)
if [ "$n" -eq 0 ]; then ok; else fail "cache clear left $n objects"; fi
expect "cache usage" 1 "usage: cxla cache" -- "$cxla" cache bogus

finish
