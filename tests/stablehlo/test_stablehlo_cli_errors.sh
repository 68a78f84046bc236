#!/usr/bin/env bash
# StableHLO errors from the command line: `cxla check` and `cxla run` print a verifier
# error on the converted module as FILE:LINE:COL: with the user's function, op and %value,
# then the source line and a caret under the column, as for HLO text; no name of the
# converted module leaks.
cxla=${1:?usage: test_stablehlo_cli_errors.sh CXLA}
source "$(dirname "$0")/../tools/testlib.sh"

cat >"$dir/bad.mlir" <<'MLIR'
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  %c = stablehlo.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %c : tensor<2xf32>
}
MLIR
want="cxla: $dir/bad.mlir:2:8: in function 'main', operation 'stablehlo.add' (%c): operands must have the same dimensions, got tensor<2xf32> and tensor<3xf32>
      %c = stablehlo.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
           ^"
for cmd in check run; do
  out=$("$cxla" $cmd "$dir/bad.mlir" 2>&1)
  rc=$?
  if [ $rc -ne 1 ]; then fail "$cmd: exit $rc: $out"; continue; fi
  if [ "$out" != "$want" ]; then fail "$cmd: got:
$out
wanted:
$want"; continue; fi
  if grep -qE "main\.1|add\.[0-9]|converted|f32\[" <<<"$out"; then fail "$cmd: internal names: $out"; continue; fi
  ok
done

# the converter's own errors have the same form and caret
printf 'func.func @main(%%a: tensor<2xf32>) -> tensor<2xf32> {\n  %%c = stablehlo.frobnicate %%a : tensor<2xf32>\n  return %%c : tensor<2xf32>\n}\n' >"$dir/unk.mlir"
expect unknown-op 1 "unk.mlir:2:8: in function 'main', operation 'stablehlo.frobnicate' \(%c\): unknown operation" -- "$cxla" check "$dir/unk.mlir"
expect unknown-op-caret 1 "^           \^$" -- "$cxla" check "$dir/unk.mlir"
finish
