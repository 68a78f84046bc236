#!/usr/bin/env bash
# The new user's journey of docs/getting-started.md, step by step, in a temporary
# directory (`make run` and `make test` themselves are run by .ci/run):
#   1. run a real program of ../shared/models/ with the built cxla (generated inputs),
#      and check its result's shape and that it is finite; skipped, with a message, when
#      ../shared is absent;
#   2. draw it with `cxla graph`: DOT text checked by tests/tools/check_dot.py, and SVG
#      when Graphviz's dot is installed;
#   3. install the build into a temporary prefix (as `make install PREFIX=...`);
#   4. build the installed examples (PREFIX/share/doc/cxla/examples: run_hlo.c, embed.c, mlp.c)
#      with their CMakeLists.txt through find_package(cxla), and run_hlo.c again with
#      pkg-config, with the commands of docs/getting-started.md (no LD_LIBRARY_PATH);
#   5. run examples/predict.hlo (a softmax classifier in the form of a JAX dump) on .npy
#      inputs written by NumPy, with the installed cxla tool (`-o DIR`) and with each
#      run_hlo, and compare each result with NumPy's; and check that a wrong input is
#      an error with a message, not a crash.
# Needs no network; a few seconds.
set -u
source "$(dirname "$0")/common.sh"
shared=${CXLA_SHARED_DIR:-$src/../shared}
case $shared in /*) ;; *) shared=$(pwd)/$shared ;; esac
python=/usr/bin/python3
have_numpy=false
"$python" -c 'import numpy' 2>/dev/null && have_numpy=true
cd "$tmp" || exit 1

# 1. A real program. The multi-head attention block runs in a tenth of a second.
model="$shared/models/mha_block_1x12x128x64_bf16.hlo"
if [ -f "$model" ]; then
  if "$cxla" run --check-finite "$model" -o mha >mha.txt 2>mha.err; then
    grep -q '^bf16\[1,12,128,64\] ' mha.txt || fail "mha_block: unexpected result: $(head -c 200 mha.txt)"
    ! grep -q 'non-finite' mha.err || fail "mha_block: non-finite results: $(cat mha.err)"
    [ -s mha/out0.npy ] || fail "mha_block: -o wrote no mha/out0.npy"
  else
    fail "cxla run $model: $(cat mha.err)"
  fi
else
  echo "note: $shared/models not found: the step that runs a real program is skipped"
  model="$src/examples/predict.hlo"
fi

# 2. Its graph.
name=$(basename "$model" .hlo)
if "$cxla" graph "$model" -o "$name.dot" 2>graph.err; then
  if [ -x "$python" ]; then
    if "$python" "$src/tests/tools/check_dot.py" "$name.dot" >"$name.facts" 2>check.err; then
      grep -q '^node ROOT ' "$name.facts" || fail "cxla graph $name: no ROOT node drawn"
      nodes=$(grep -c '^node ' "$name.facts")
      [ "$nodes" -ge 10 ] || fail "cxla graph $name: only $nodes nodes"
    else
      fail "cxla graph $name: invalid DOT: $(cat check.err)"
    fi
  else
    head -n 1 "$name.dot" | grep -q '^digraph' || fail "cxla graph $name: not DOT text"
  fi
else
  fail "cxla graph $model: $(cat graph.err)"
fi
if command -v dot >/dev/null 2>&1; then
  if "$cxla" graph "$model" -o "$name.svg" 2>svg.err; then
    grep -q '<svg' "$name.svg" || fail "cxla graph -o $name.svg wrote no SVG"
  else
    fail "cxla graph -o $name.svg: $(cat svg.err)"
  fi
else
  echo "note: Graphviz is not installed: the SVG step is skipped (apt-get install graphviz)"
fi

# 3. Install.
prefix="$tmp/prefix"
install_into "$prefix"
docdir="$prefix/share/doc/cxla"
[ -f "$docdir/examples/CMakeLists.txt" ] || fail "the examples' CMakeLists.txt is not installed"

# 4. Build the installed examples against the installed package.
programs=()
if "$cmake" -S "$docdir/examples" -B examples-build -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${cflags[*]}" >cmake.log 2>&1 &&
  "$cmake" --build examples-build >>cmake.log 2>&1; then
  programs+=(examples-build/run_hlo)
  # embed.c's output: 2 * {1, 2, 3} + {10, 20, 30}, then a refused call.
  expected=$'parameters: f32[3] f32[3] -> f32[3]\nliterals: f32[3] {12, 24, 36}\nbuffers: 12 24 36\nerror: INVALID_ARGUMENT'
  out=$(examples-build/embed 2>&1)
  [ "$out" = "$expected" ] || fail "embed (CMake): output '$out', expected '$expected'"
  if out=$(examples-build/mlp 2>&1); then
    grep -q 'the loss fell by' <<<"$out" || fail "mlp (CMake): unexpected output: $out"
  else
    fail "mlp (CMake) failed: $out"
  fi
else
  fail "the installed examples do not build with CMake: $(tail -n 20 cmake.log)"
fi
if command -v pkg-config >/dev/null 2>&1; then
  # As docs/getting-started.md builds it: the rpath finds libcxla.so without
  # LD_LIBRARY_PATH, as CMake's build tree rpath does for the CMake build above.
  export PKG_CONFIG_PATH="$libdir/pkgconfig"
  if "$cc" "${cflags[@]}" -std=c11 "$docdir/examples/run_hlo.c" $(pkg-config --cflags --libs cxla) \
    -Wl,-rpath,"$(pkg-config --variable=libdir cxla)" -o run_hlo_pc 2>cc.err; then
    programs+=(./run_hlo_pc)
  else
    fail "run_hlo.c does not build with pkg-config: $(cat cc.err)"
  fi
else
  echo "note: no pkg-config: its build is skipped (apt-get install pkgconf)"
fi

# 5. .npy inputs from NumPy, results compared with NumPy's.
module="$docdir/examples/predict.hlo"
if ! $have_numpy; then
  echo "note: no NumPy ($python): the runs on .npy inputs are skipped (apt-get install python3-numpy)"
else
  "$python" - <<'PY' || fail "writing the inputs with NumPy"
import numpy as np
rng = np.random.default_rng(0)
w = rng.standard_normal((4, 3)).astype(np.float32)
b = rng.standard_normal(3).astype(np.float32)
x = rng.standard_normal((8, 4)).astype(np.float32)
np.save("w.npy", w); np.save("b.npy", b); np.save("x.npy", x)
z = x.astype(np.float64) @ w + b
e = np.exp(z - z.max(axis=1, keepdims=True))
np.save("expected.npy", e / e.sum(axis=1, keepdims=True))
PY
  # compare FILE: FILE is .npy or the text `run_hlo` prints ("f32[8,3] { { ... } }").
  compare() {
    "$python" - "$1" <<'PY'
import re, sys
import numpy as np
path = sys.argv[1]
if path.endswith(".npy"):
    got = np.load(path)
else:
    text = open(path).read().strip()
    if not text.startswith("f32[8,3] "):
        sys.exit("unexpected result: " + text[:200])
    got = np.array([float(v) for v in re.findall(r"[-+0-9.eE]+|nan|inf", text[9:])])
    got = got.reshape(8, 3)
expected = np.load("expected.npy")
if got.shape != expected.shape or got.dtype != np.float32 and path.endswith(".npy"):
    sys.exit(f"result {got.dtype}{got.shape}, expected float32{expected.shape}")
if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
    sys.exit(f"result differs from NumPy by {np.abs(got - expected).max()}:\n{got}")
PY
  }
  if "$prefix/bin/cxla" run "$module" w.npy b.npy x.npy -o out >cxla.txt 2>cxla.err; then
    compare out/out0.npy || fail "installed cxla run $module -o out: out0.npy differs from NumPy"
  else
    fail "installed cxla run $module w.npy b.npy x.npy: $(cat cxla.err)"
  fi
  for p in "${programs[@]}"; do
    if "$p" "$module" w.npy b.npy x.npy >"$tmp/p.txt" 2>"$tmp/p.err"; then
      compare "$tmp/p.txt" || fail "$p $module: the result differs from NumPy"
      cmp -s "$tmp/p.txt" cxla.txt || fail "$p prints $(cat "$tmp/p.txt"), cxla run $(cat cxla.txt)"
    else
      fail "$p $module w.npy b.npy x.npy: $(cat "$tmp/p.err")"
    fi
    # x and w swapped: a shape error naming the parameter, exit status 1.
    "$p" "$module" x.npy b.npy w.npy >/dev/null 2>"$tmp/p.err"
    rc=$?
    [ "$rc" -eq 1 ] && grep -q 'parameter' "$tmp/p.err" ||
      fail "$p with inputs of the wrong shape: exit $rc, expected 1 with a message: $(cat "$tmp/p.err")"
  done
fi

[ "$failed" -eq 0 ] && echo "ok: the getting-started journey (model run, graph, install, CMake and pkg-config builds, .npy runs)" || exit 1
