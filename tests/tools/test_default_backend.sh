#!/usr/bin/env bash
# The default backend (docs/runtime.md, "The backend"): a run that names no backend gets
# $CXLA_BACKEND, else cpu when a C compiler runs, else the interpreter with one line on
# stderr (once per process; --quiet or CXLA_QUIET_FALLBACK=1 silence it). A named backend
# (--backend, CXLA_BACKEND) is used as named: cpu without a compiler is an error, never a
# fallback. CTest gives the build's compiler in CXLA_CC; /nonexistent hides it.
set -u
cxla=${1:?path to the cxla tool}
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
unset CXLA_BACKEND CXLA_QUIET_FALLBACK
nocc=/nonexistent/cc
notice='cxla: no C compiler found (set CXLA_CC or install build-essential): using the interpreter'

cat >"$dir/add.hlo" <<'HLO'
HloModule add
ENTRY main {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  ROOT s = f32[3] add(x, y)
}
HLO
args=('f32[3] {1, 2, 3}' 'f32[3] {10, 20, 30}')
sum='^f32\[3\] \{11, 22, 33\}$'

# How a run's backend shows from outside: CXLA_STEP_TIMES=1 makes the cpu backend print
# one line per step on stderr; the interpreter prints none.
ran_on() { # ran_on EXPECTED NAME -- env/command...: the run succeeds on backend EXPECTED
  local expected=$1 name=$2
  shift 3
  local out got=interpreter
  out=$(env CXLA_STEP_TIMES=1 "$@" 2>&1) || {
    fail "$name: exit $?: $out"
    return
  }
  grep -qE "$sum" <<<"$out" || {
    fail "$name: wrong result: $out"
    return
  }
  grep -q '^cxla-step-time ' <<<"$out" && got=cpu
  if [ "$got" = "$expected" ]; then ok; else fail "$name: ran on $got, expected $expected: $out"; fi
}

# With the compiler: cpu, and `cxla version` says so and why.
expect "version, compiler" 0 "^backend: cpu \(the C compiler runs: .+\)$" -- "$cxla" version
ran_on cpu "default, compiler" -- "$cxla" run "$dir/add.hlo" "${args[@]}"
out=$("$cxla" run "$dir/add.hlo" "${args[@]}" 2>&1 >/dev/null)
if [ -z "$out" ]; then ok; else fail "a run on the default cpu backend wrote to stderr: $out"; fi

# CXLA_BACKEND picks each backend; --backend goes before it.
expect "version, CXLA_BACKEND" 0 "^backend: interpreter \(CXLA_BACKEND=interp\)$" -- \
  env CXLA_BACKEND=interp "$cxla" version
ran_on interpreter "CXLA_BACKEND=interpreter" -- CXLA_BACKEND=interpreter "$cxla" run "$dir/add.hlo" "${args[@]}"
ran_on cpu "CXLA_BACKEND=cpu" -- CXLA_BACKEND=cpu "$cxla" run "$dir/add.hlo" "${args[@]}"
ran_on cpu "--backend over CXLA_BACKEND" -- CXLA_BACKEND=interpreter "$cxla" run --backend cpu "$dir/add.hlo" "${args[@]}"
ran_on interpreter "--backend over CXLA_BACKEND 2" -- CXLA_BACKEND=cpu "$cxla" run --backend interpreter "$dir/add.hlo" "${args[@]}"
expect "CXLA_BACKEND unknown" 1 "CXLA_BACKEND names an unknown backend 'gpu' \(available: interpreter, cpu\)" -- \
  env CXLA_BACKEND=gpu "$cxla" run "$dir/add.hlo" "${args[@]}"
expect "CXLA_BACKEND unknown, version" 1 "CXLA_BACKEND names an unknown backend 'gpu'" -- \
  env CXLA_BACKEND=gpu "$cxla" version
ran_on cpu "CXLA_BACKEND empty" -- CXLA_BACKEND= "$cxla" run "$dir/add.hlo" "${args[@]}"

# Without a compiler: the interpreter, the notice once on stderr, the result on stdout.
expect "version, no compiler" 0 "^backend: interpreter \(no C compiler: .*'$nocc'.*CXLA_CC.*build-essential\)\)$" -- \
  env CXLA_CC=$nocc "$cxla" version
ran_on interpreter "default, no compiler" -- CXLA_CC=$nocc "$cxla" run "$dir/add.hlo" "${args[@]}"
CXLA_CC=$nocc "$cxla" run "$dir/add.hlo" "${args[@]}" >"$dir/out" 2>"$dir/err"
if grep -qE "$sum" "$dir/out" && [ "$(cat "$dir/err")" = "$notice" ]; then ok; else
  fail "no compiler: stdout '$(cat "$dir/out")', stderr '$(cat "$dir/err")' (expected the notice once)"
fi
# Several devices, one process: still one line.
CXLA_CC=$nocc "$cxla" run --replicas 3 "$dir/add.hlo" "${args[@]}" >"$dir/out" 2>"$dir/err"
if [ "$(grep -cE "$sum" "$dir/out")" = 3 ] && [ "$(cat "$dir/err")" = "$notice" ]; then ok; else
  fail "no compiler, 3 replicas: stdout '$(cat "$dir/out")', stderr '$(cat "$dir/err")'"
fi
for quiet in "--quiet" "CXLA_QUIET_FALLBACK=1"; do
  if [ "$quiet" = --quiet ]; then
    CXLA_CC=$nocc "$cxla" run --quiet "$dir/add.hlo" "${args[@]}" -o "$dir/q" 2>"$dir/err"
  else
    CXLA_CC=$nocc CXLA_QUIET_FALLBACK=1 "$cxla" run "$dir/add.hlo" "${args[@]}" >/dev/null 2>"$dir/err"
  fi
  if [ $? -eq 0 ] && [ ! -s "$dir/err" ]; then ok; else fail "$quiet: stderr '$(cat "$dir/err")'"; fi
done
# Named, cpu stays cpu: an error naming CXLA_CC and the Debian package, no fallback.
for named in "--backend cpu" "CXLA_BACKEND=cpu"; do
  if [ "$named" = "--backend cpu" ]; then
    out=$(CXLA_CC=$nocc "$cxla" run --backend cpu "$dir/add.hlo" "${args[@]}" 2>&1)
  else
    out=$(CXLA_CC=$nocc CXLA_BACKEND=cpu "$cxla" run "$dir/add.hlo" "${args[@]}" 2>&1)
  fi
  rc=$?
  if [ $rc -eq 1 ] && grep -q "cannot run the C compiler '$nocc'.*CXLA_CC.*build-essential" <<<"$out" &&
    ! grep -q "using the interpreter" <<<"$out"; then ok; else fail "$named, no compiler: exit $rc: $out"; fi
done
ran_on interpreter "CXLA_BACKEND=interpreter, no compiler" -- CXLA_CC=$nocc CXLA_BACKEND=interpreter "$cxla" run "$dir/add.hlo" "${args[@]}"
out=$(CXLA_CC=$nocc CXLA_BACKEND=interpreter "$cxla" run "$dir/add.hlo" "${args[@]}" 2>&1 >/dev/null)
if [ -z "$out" ]; then ok; else fail "CXLA_BACKEND=interpreter, no compiler: stderr '$out'"; fi

# cxla conformance decides once, before its cases' processes: one notice for two cases.
mkdir -p "$dir/conf"
for i in 1 2; do
  cat >"$dir/conf/double$i.mlir" <<'MLIR'
func.func @main() {
  %0 = stablehlo.constant dense<[1.0, 2.5]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  check.expect_eq_const %1, dense<[2.0, 5.0]> : tensor<2xf32>
  func.return
}
MLIR
done
CXLA_CC=$nocc "$cxla" conformance "$dir/conf" >"$dir/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "2 passed, 0 failed" "$dir/out" && [ "$(grep -cF "$notice" "$dir/out")" = 1 ]; then ok; else
  fail "conformance, no compiler: exit $rc: $(cat "$dir/out")"
fi
expect "conformance, default cpu" 0 "2 passed, 0 failed" -- "$cxla" conformance "$dir/conf"

finish
