#!/usr/bin/env bash
# The cxla command line: run, check, fmt, help, and their errors.
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"

cat >"$dir/add.hlo" <<'HLO'
HloModule add
ENTRY main {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  ROOT s = f32[3] add(x, y)
}
HLO
cat >"$dir/tuple.hlo" <<'HLO'
HloModule tuple_param
ENTRY main {
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  n = f32[2] negate(a)
  ROOT t = (s32[], f32[2]) tuple(b, n)
}
HLO
cat >"$dir/bad.hlo" <<'HLO'
HloModule bad
ENTRY main {
  x = f32[3] parameter(0)
  ROOT s = f32[3] frobnicate(x)
}
HLO
cat >"$dir/badshape.hlo" <<'HLO'
HloModule badshape
ENTRY main {
  x = f32[3] parameter(0)
  ROOT s = f32[4] negate(x)
}
HLO
cat >"$dir/nan.hlo" <<'HLO'
HloModule nan
ENTRY main {
  x = f32[2] parameter(0)
  ROOT l = f32[2] log(x)
}
HLO
cat >"$dir/dyn.hlo" <<'HLO'
HloModule dyn
ENTRY main {
  x = f32[<=2000] parameter(0)
  ROOT n = f32[<=2000] negate(x)
}
HLO

expect "help" 0 "commands:" -- "$cxla" --help
expect "help run" 0 "--repeat N" -- "$cxla" help run
expect "run --help" 0 "INPUT is a .npy file" -- "$cxla" run --help
expect "unknown command" 2 "unknown command 'frob'" -- "$cxla" frob
expect "version" 0 "^cxla [0-9]+\.[0-9]+" -- "$cxla" version

expect "run literals" 0 "^f32\[3\] \{11, 22, 33\}$" -- "$cxla" run "$dir/add.hlo" 'f32[3] {1, 2, 3}' 'f32[3] {10, 20, 30}'
expect "run tuple leaves" 0 "^s32\[\] 7" -- "$cxla" run "$dir/tuple.hlo" 'f32[2] {1, -2}' 's32[] 7'
expect "run tuple leaves 2" 0 "^f32\[2\] \{-1, 2\}$" -- "$cxla" run "$dir/tuple.hlo" 'f32[2] {1, -2}' 's32[] 7'
expect "too few inputs" 1 "takes 2 input arrays.*got 1" -- "$cxla" run "$dir/add.hlo" 'f32[3] {1, 2, 3}'
expect "wrong shape" 1 "input 1 .* has shape f32\[2\], but the parameter needs f32\[3\]" -- "$cxla" run "$dir/add.hlo" 'f32[3] {1, 2, 3}' 'f32[2] {1, 2}'
expect "bad literal" 1 "input 0" -- "$cxla" run "$dir/add.hlo" 'f32[3] {1, 2' 'f32[3] {1, 2, 3}'
expect "missing npy" 1 "nope.npy" -- "$cxla" run "$dir/add.hlo" "$dir/nope.npy" 'f32[3] {1, 2, 3}'
expect "unknown backend" 1 "unknown backend 'gpu'" -- "$cxla" run "$dir/add.hlo" --backend gpu
expect "missing module" 1 "cannot open" -- "$cxla" run "$dir/none.hlo"

# Dynamic parameters take inputs of any size up to the bound; results print their sizes
# (summarized ones too) and .npy files hold the value.
printf 'HloModule r\nENTRY main {\n  ROOT i = f32[1500] iota(), iota_dimension=0\n}\n' >"$dir/ramp.hlo"
printf 'HloModule b\nENTRY main {\n  ROOT i = f32[2001] iota(), iota_dimension=0\n}\n' >"$dir/big.hlo"
"$cxla" run "$dir/ramp.hlo" -o "$dir/ramp" >/dev/null && mv "$dir/ramp/out0.npy" "$dir/ramp.npy"
"$cxla" run "$dir/big.hlo" -o "$dir/big" >/dev/null && mv "$dir/big/out0.npy" "$dir/big.npy"
expect "dynamic input" 0 "^f32\[<=2000\]\(2\) \{-1, -2\}$" -- "$cxla" run "$dir/dyn.hlo" 'f32[2] {1, 2}'
expect "dynamic too large" 1 "argument 0 \(f32\[2001\]\) does not fit parameter shape f32\[<=2000\]" -- "$cxla" run "$dir/dyn.hlo" "$dir/big.npy"
expect "dynamic summary" 0 "^f32\[<=2000\]\(1500\) \{-0, -1, -2, \.\.\., -1497, -1498, -1499\}$" -- "$cxla" run "$dir/dyn.hlo" "$dir/ramp.npy"
expect "dynamic -o" 0 "f32" -- "$cxla" run "$dir/dyn.hlo" 'f32[3] {1, 2, 3}' -o "$dir/dout"
expect "dynamic npy back" 0 "^f32\[<=2000\]\(3\) \{1, 2, 3\}$" -- "$cxla" run "$dir/dyn.hlo" "$dir/dout/out0.npy"

# .npy out and back in.
expect "run -o" 0 "f32\[3\]" -- "$cxla" run "$dir/add.hlo" 'f32[3] {1, 2, 3}' 'f32[3] {0.5, 0, -1}' -o "$dir/out"
if [ -f "$dir/out/out0.npy" ]; then ok; else fail "run -o wrote no out0.npy"; fi
expect "npy input" 0 "^f32\[3\] \{2.5, 4, 4\}$" -- "$cxla" run "$dir/add.hlo" "$dir/out/out0.npy" 'f32[3] {1, 2, 2}'
expect "tuple -o" 0 "s32" -- "$cxla" run "$dir/tuple.hlo" 'f32[2] {1, -2}' 's32[] 7' -o "$dir/tout"
if [ -f "$dir/tout/out0.npy" ] && [ -f "$dir/tout/out1.npy" ]; then ok; else fail "tuple result not written leaf by leaf"; fi

# Generated inputs are deterministic for a seed, and differ between seeds.
a=$("$cxla" run "$dir/add.hlo" --seed 1)
b=$("$cxla" run "$dir/add.hlo" --seed 1)
c=$("$cxla" run "$dir/add.hlo" --seed 2)
if [ "$a" = "$b" ] && [ "$a" != "$c" ]; then ok; else fail "generated inputs: '$a' '$b' '$c'"; fi
# Summarized arrays (more than 1000 elements) use the braces of full ones.
cat >"$dir/big.hlo" <<'HLO'
HloModule big
ENTRY main {
  a = f32[40,40] iota(), iota_dimension=1
  b = f32[2000] iota(), iota_dimension=0
  ROOT t = (f32[40,40], f32[2000]) tuple(a, b)
}
HLO
expect "summary rank 2" 0 '^f32\[40,40\] \{ \{ 0, 1, 2, \.\.\., 37, 38, 39 \}, \{ 0, 1, 2, \.\.\., 37, 38, 39 \}, \{ 0, 1, 2, \.\.\., 37, 38, 39 \}, \.\.\., \{' -- "$cxla" run "$dir/big.hlo"
expect "summary rank 1" 0 '^f32\[2000\] \{0, 1, 2, \.\.\., 1997, 1998, 1999\}$' -- "$cxla" run "$dir/big.hlo"
expect "repeat" 0 "run +median" -- "$cxla" run "$dir/add.hlo" --repeat 3
# --repeat runs into buffers kept across the runs (the cpu backend writes the result
# leaves there): the result of the last run, a tuple, and the cold first run reported.
for b in interpreter cpu; do
  expect "repeat tuple $b" 0 "^f32\[2\] \{-1, 2\}$" -- \
    "$cxla" run --backend $b "$dir/tuple.hlo" 'f32[2] {1, -2}' 's32[] 7' --repeat 3
  expect "repeat tuple $b s32" 0 "^s32\[\] 7" -- \
    "$cxla" run --backend $b "$dir/tuple.hlo" 'f32[2] {1, -2}' 's32[] 7' --repeat 3
  expect "repeat first $b" 0 "run +median .* first +[0-9.]+ ms" -- \
    "$cxla" run --backend $b "$dir/add.hlo" --repeat 3
done
expect "repeat bad" 1 "positive count" -- "$cxla" run "$dir/add.hlo" --repeat 0
# --repeat shows a progress line only when stderr is a terminal: none in a file ...
"$cxla" run "$dir/add.hlo" --repeat 3 >/dev/null 2>"$dir/repeat.err"
if grep -q $'\r' "$dir/repeat.err" || grep -q "3/3" "$dir/repeat.err"; then
  fail "progress written to a non-terminal: $(od -c "$dir/repeat.err" | head -3)"
else
  ok
fi
# ... and on a terminal (script(1) gives the command one) a line rewritten with \r,
# ending with the line erased before the timings print.
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
  script -qec "'$cxla' run '$dir/add.hlo' --repeat 3" /dev/null >"$dir/tty.out" 2>&1
  if grep -q $'\rrun 0/3 (0%)' "$dir/tty.out" && grep -q $'\rrun 3/3 (100%)' "$dir/tty.out"; then
    ok
  else
    fail "no progress line on a terminal: $(od -c "$dir/tty.out" | head -5)"
  fi
  if grep -q $'\r *\r3 runs of' "$dir/tty.out"; then ok; else fail "progress line not erased: $(od -c "$dir/tty.out" | head -8)"; fi
  # A single run draws "running N.N s" once it has taken CXLA_PROGRESS_AFTER seconds (1
  # by default, so a quick run draws nothing), and erases it before the result prints.
  script -qec "'$cxla' run '$dir/add.hlo'" /dev/null >"$dir/tty1.out" 2>&1
  if grep -q running "$dir/tty1.out"; then fail "a quick run drew a progress line"; else ok; fi
  CXLA_PROGRESS_AFTER=0 script -qec "'$cxla' run '$dir/add.hlo'" /dev/null >"$dir/tty2.out" 2>&1 || true
  if grep -q $'\rrunning  0.0 s' "$dir/tty2.out" && grep -q $'\r *\rf32' "$dir/tty2.out"; then
    ok
  else
    fail "no running line with CXLA_PROGRESS_AFTER=0: $(od -c "$dir/tty2.out" | head -5)"
  fi
else
  echo "note: script(1) cannot open a terminal here; skipped the progress-line check"
fi
expect "check-finite" 0 "l \(log.*first to produce a NaN" -- "$cxla" run --check-finite "$dir/nan.hlo" 'f32[2] {-1, 1}'
expect "check-finite result" 0 "result 0 has 1 non-finite elements of 2" -- "$cxla" run --check-finite "$dir/nan.hlo" 'f32[2] {-1, 1}'

# check and fmt.
expect "check ok" 0 "^$" -- "$cxla" check "$dir/add.hlo"
expect "check unknown opcode" 1 "bad\.hlo:4:[0-9]*: .*frobnicate" -- "$cxla" check "$dir/bad.hlo"
expect "check bad shape" 1 "negate" -- "$cxla" check "$dir/badshape.hlo"
# Verifier errors read as parse errors: FILE:LINE:COL: message, the line, a caret.
expect "check verifier position" 1 "badshape\.hlo:4:3: computation 'main', instruction 's'" -- "$cxla" check "$dir/badshape.hlo"
expect "check verifier caret" 1 "^      \^$" -- "$cxla" check "$dir/badshape.hlo"
cat >"$dir/mixed.hlo" <<'HLO'
HloModule mixed
ENTRY main {
  a = f32[2] parameter(0)
  b = bf16[2] parameter(1)
  ROOT s = f32[2] add(a, b)
}
HLO
expect "check mixed precision" 0 "^$" -- "$cxla" check "$dir/mixed.hlo"
expect "check --strict mixed precision" 1 "mixed\.hlo:5:3: .*add" -- "$cxla" check --strict "$dir/mixed.hlo"
expect "check bad option" 1 "usage: cxla check" -- "$cxla" check --loose "$dir/mixed.hlo"
cat >"$dir/typo.hlo" <<'HLO'
HloModule typo
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contract_dims={1}, rhs_contracting_dims={0}
}
HLO
expect "check did you mean" 1 "'lhs_contract_dims' is unknown and was ignored \(did you mean 'lhs_contracting_dims'\?\)" -- "$cxla" check "$dir/typo.hlo"
printf 'HloModule t\nENTRY main {\n  ROOT a = flt32[5,3] parameter(0)\n}\n' >"$dir/flt.hlo"
expect "check unknown element type" 1 "flt\.hlo:3:12: unknown element type 'flt32' \(did you mean 'f32'\?\)" -- "$cxla" check "$dir/flt.hlo"
cat >"$dir/stablehlo.hlo" <<'MLIR'
module @m {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
MLIR
expect "StableHLO in a .hlo file" 0 "f32\[2\] \{2, 4\}" -- "$cxla" run "$dir/stablehlo.hlo" 'f32[2] {1, 2}'
expect "fmt short" 0 "^  ROOT s = f32\[3\]\{0\} add\(x, y\)$" -- "$cxla" fmt "$dir/add.hlo"
expect "fmt long" 0 "ROOT %s = f32\[3\]\{0\} add\(f32\[3\]\{0\} %x, f32\[3\]\{0\} %y\)" -- "$cxla" fmt --style long "$dir/add.hlo"
expect "fmt bad style" 1 "unknown style" -- "$cxla" fmt --style wide "$dir/add.hlo"
"$cxla" fmt --style long "$dir/add.hlo" >"$dir/long.hlo"
"$cxla" fmt --style long "$dir/long.hlo" >"$dir/long2.hlo"
if cmp -s "$dir/long.hlo" "$dir/long2.hlo"; then ok; else fail "fmt is not idempotent"; fi

finish
