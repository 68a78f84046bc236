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
if [ "$n" -eq 14 ]; then ok; else fail "--dump-after all: $n dumps, expected 14"; fi

expect "unknown pass" 1 "no pass named 'nope'; the cpu pipeline has: async-desugar builder-calls inline topk-decompose simplify" -- "$cxla" compile --dump-after nope "$dir/m.hlo"
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
expect "emit-hlo and emit-c" 1 "one of --emit-hlo, --emit-c and --explain" -- "$cxla" compile --emit-hlo --emit-c "$dir/m.hlo"

# --explain: how the cpu backend runs each instruction of the computations that run in
# sequence. The loop's dynamic-update-slice writes into the state's buffer ("in place"),
# get-tuple-element only names a buffer ("alias"); the sort is whatever runs it on main.
cat >"$dir/loop.hlo" <<'HLO'
HloModule loop

cond {
  p = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[8,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[8,4] get-tuple-element(p), index=1
  x = f32[] convert(i)
  row = f32[1,4] broadcast(x), dimensions={}
  z = s32[] constant(0)
  upd = f32[8,4] dynamic-update-slice(buf, row, i, z)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[8,4]) tuple(next, upd)
}

less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}

ENTRY e {
  s = f32[] parameter(0)
  init = f32[8,4] broadcast(s), dimensions={}
  zero = s32[] constant(0)
  t0 = (s32[], f32[8,4]) tuple(zero, init)
  w = (s32[], f32[8,4]) while(t0), condition=cond, body=body
  r = f32[8,4] get-tuple-element(w), index=1
  ROOT srt = f32[8,4] sort(r), dimensions={1}, to_apply=less
}
HLO
CXLA_CACHE_DIR="$dir/cache-explain" "$cxla" compile --explain "$dir/loop.hlo" >"$dir/explain" 2>&1
rc=$?
line() { grep -E "^  $1 " "$dir/explain"; }
if [ $rc -eq 0 ]; then ok; else fail "--explain: exit $rc: $(cat "$dir/explain")"; fi
if line upd | grep -qE 'dynamic-update-slice +in place$'; then ok; else fail "--explain upd: $(line upd)"; fi
if line w | grep -qE 'while +step$'; then ok; else fail "--explain w: $(line w)"; fi
if line r | grep -qE 'get-tuple-element +alias$'; then ok; else fail "--explain r: $(line r)"; fi
if line s | grep -qE 'parameter +argument, read where it lies$'; then ok; else fail "--explain s: $(line s)"; fi
if line srt | grep -qE 'sort +kernel k[0-9]+_srt$'; then ok; else fail "--explain srt: $(line srt)"; fi
if line lt | grep -qE 'compare +kernel k[0-9]+_lt$'; then ok; else fail "--explain lt: $(line lt)"; fi
if grep -qE '^(body|cond):$' "$dir/explain" && grep -qE '^e \(entry\):$' "$dir/explain"; then ok; else fail "--explain headings: $(cat "$dir/explain")"; fi
sum=$(grep -E '^summary: ' "$dir/explain")
if grep -qE '[:,] in place 1[,;]' <<<"$sum" && ! grep -qE 'interpreter handler' <<<"$sum" &&
  grep -qE '[:,] kernel 5[,;]' <<<"$sum" && grep -qE '; arena [1-9][0-9]* bytes; copy steps [0-9]+ ' <<<"$sum"; then ok; else fail "--explain summary: $sum"; fi
if grep -qE '^  less ' "$dir/explain" || grep -qE '^less:' "$dir/explain"; then fail "--explain lists the comparator"; else ok; fi
expect "explain and -o" 1 "does not go with" -- "$cxla" compile --explain "$dir/loop.hlo" -o "$dir/x"
expect "explain and dump-after" 1 "--dump-after goes with" -- "$cxla" compile --explain --dump-after dce "$dir/loop.hlo"
# Bounded dynamic shapes run as steps over buffers at their bounds: set-dimension-size as
# a step over the run-time sizes, a reverse as a move by those sizes (no kernel at the
# bounds, no handler: src/cpu/cpu_dynamic.c, docs/semantics.md); unbounded ones ('?') are specialized per run
# to their arguments' sizes (no step sequence of their own), and the modules that cannot
# be say why.
printf 'HloModule d\nENTRY e {\n  v = f32[4] parameter(0)\n  n = s32[] constant(2)\n  d = f32[<=4] set-dimension-size(v, n), dimensions={0}\n  ROOT r = f32[<=4] reverse(d), dimensions={0}\n}\n' >"$dir/dyn.hlo"
expect "explain dynamic" 0 "summary: sizes 1, dynamic move 1; arena " -- env CXLA_CACHE_DIR="$dir/cache-explain" "$cxla" compile --explain "$dir/dyn.hlo"
printf 'HloModule u\nENTRY e {\n  v = f32[?] parameter(0)\n  ROOT n = f32[?] negate(v)\n}\n' >"$dir/unbounded.hlo"
expect "explain unbounded" 0 "summary: interpreter handler 1; no step sequence: unbounded dynamic shapes are specialized per argument sizes" -- env CXLA_CACHE_DIR="$dir/cache-explain" "$cxla" compile --explain "$dir/unbounded.hlo"
printf 'HloModule i\nENTRY e {\n  x = s32[?] parameter(0)\n  i = s32[?] iota(), iota_dimension=0\n  ROOT a = s32[?] add(x, i)\n}\n' >"$dir/iota_unbounded.hlo"
expect "explain not specialized" 0 "not specialized per argument sizes: i \\(iota" -- env CXLA_CACHE_DIR="$dir/cache-explain" "$cxla" compile --explain "$dir/iota_unbounded.hlo"

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
