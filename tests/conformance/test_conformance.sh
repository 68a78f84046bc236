#!/usr/bin/env bash
# The external StableHLO conformance suite (../shared/conformance/stablehlo/, see its
# README): runs every case with `cxla conformance` and compares the passing cases with
# tests/conformance/expected-pass.txt. A case that passed before and fails now fails
# this test; cases that pass now but are not listed yet are reported (add them with
# UPDATE=1, which rewrites the list). Skipped (exit 77) when the suite is absent.
# The cases run on the interpreter, named (the oracle, whatever the default backend is);
# CXLA_BACKEND=NAME runs them on that backend (tests/cpu/test_cpu_conformance.sh): every
# backend must pass what the interpreter passes.
set -u
cxla=${1:?path to the cxla tool}
here=$(cd "$(dirname "$0")" && pwd)
shared=${CXLA_SHARED_DIR:-$here/../../../shared}
suite=$shared/conformance/stablehlo
expected=$here/expected-pass.txt
if [ ! -d "$suite" ]; then
  echo "SKIP: no conformance suite at $suite"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
backend=(--backend "${CXLA_BACKEND:-interpreter}")
(cd "$suite" && "$cxla" conformance -j 2 --timeout 60 "${backend[@]}" --report "$dir/report" .) \
  >"$dir/out" 2>&1
tail -n 1 "$dir/out"
grep '^PASS ' "$dir/report" | sed 's/^PASS \.\///' | sort >"$dir/pass"
if [ "${UPDATE:-0}" = 1 ] && [ -z "${CXLA_BACKEND:-}" ]; then
  cp "$dir/pass" "$expected"
  echo "wrote $(wc -l <"$expected") passing cases to $expected"
  exit 0
fi
sort "$expected" >"$dir/expected"
regressed=$(comm -23 "$dir/expected" "$dir/pass")
improved=$(comm -13 "$dir/expected" "$dir/pass")
if [ -n "$improved" ]; then
  echo "newly passing (not yet in expected-pass.txt; run with UPDATE=1):"
  echo "$improved" | sed 's/^/  /'
fi
if [ -n "$regressed" ]; then
  echo "FAIL: cases that passed before fail now:"
  for c in $regressed; do
    grep -F " ./$c:" "$dir/out" | sed 's/^/  /' || echo "  $c"
  done
  exit 1
fi
echo "ok: all $(wc -l <"$dir/expected") expected cases pass"
