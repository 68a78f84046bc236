#!/usr/bin/env bash
# The benchmarks still work: bench_floors prints its figures, ops_bench.py's cases compute
# what their NumPy peers compute (--check, small sizes, every backend of this build) and
# its tables print. Nothing here is timed: numbers are only checked to be numbers.
set -u
cxla=${1:?path to the cxla tool}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../tools/testlib.sh
. "$here/../tools/testlib.sh"
bench=$here/../../bench
floors=${CXLA_BINARY_DIR:-$(dirname "$cxla")}/bench_floors
python=/usr/bin/python3
if [ ! -x "$python" ] || ! "$python" -c "import numpy" 2>/dev/null; then
  echo "skipped: no /usr/bin/python3 with NumPy"
  exit 77
fi

if [ -x "$floors" ]; then
  "$floors" --mb 8 --reps 1 --threads 1,2 >"$dir/floors.txt" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ]; then fail "bench_floors: exit $rc: $(cat "$dir/floors.txt")"; else ok; fi
  for name in triad_GBps_1t triad_GBps_2t copy_GBps_1t fma_GFLOPs_1t fma_GFLOPs_2t; do
    if grep -qE "^$name [0-9]+(\.[0-9]+)?$" "$dir/floors.txt"; then ok; else
      fail "bench_floors: no line '$name NUMBER' in $(cat "$dir/floors.txt")"
    fi
  done
  # Each memory figure's spread over its runs, as a note.
  if grep -qE "^# spread copy_GBps_1t best [0-9.]+ median [0-9.]+ worst [0-9.]+ over 1 runs$" \
    "$dir/floors.txt"; then ok; else fail "bench_floors: no spread note in $(cat "$dir/floors.txt")"; fi
  expect "bench_floors bad option" 2 "usage" -- "$floors" --mb 0
  expect "bench_floors bad --what" 2 "--what needs all, mem or fma" -- "$floors" --what disk
  # --what mem: the memory figures alone (what ops_bench.py measures between its cases).
  "$floors" --mb 8 --reps 2 --threads 1 --what mem >"$dir/mem.txt" 2>&1
  if grep -qE "^read_GBps_1t [0-9.]+$" "$dir/mem.txt" && ! grep -q "^fma_" "$dir/mem.txt"; then
    ok
  else
    fail "bench_floors --what mem: $(cat "$dir/mem.txt")"
  fi
else
  fail "bench_floors not built at $floors"
fi

# Every case, on every backend, against NumPy on the same inputs.
expect "ops_bench --check" 0 "ok +tiny_adds_100" -- \
  "$python" "$bench/ops_bench.py" --cxla "$cxla" --small --check --no-models
# The tables, text and Markdown, including the models section (two small models).
expect "ops_bench table" 0 "^softmax_4096x4096 +[0-9.]+ mem +[0-9]+/[0-9]+ " -- \
  "$python" "$bench/ops_bench.py" --cxla "$cxla" --small --repeat 1 --threads 1 --no-models \
  softmax_4096x4096 tiny_adds_100
# The floors measured around the cases: their range over the session closes the table.
expect "ops_bench floor spread" 0 "^memory floor triad_GBps_1t [0-9.]+-[0-9.]+ GB/s over 3 " -- \
  "$python" "$bench/ops_bench.py" --cxla "$cxla" --small --repeat 1 --threads 1 --no-models \
  softmax_4096x4096 tiny_adds_100
models=${CXLA_SHARED_DIR:-$here/../../../shared}/models
if [ -f "$models/mha_block_1x12x128x64_bf16.hlo" ]; then
  expect "ops_bench markdown" 0 "^\| mha_block_1x12x128x64_bf16 \| [0-9.]+ \|" -- \
    "$python" "$bench/ops_bench.py" --cxla "$cxla" --small --repeat 1 --threads 1 --markdown \
    --no-conformance --shared "$models/.." matmul_2048 mha_block_1x12x128x64_bf16
fi
expect "ops_bench unknown backend" 1 "backend 'nonsense' is not in" -- \
  "$python" "$bench/ops_bench.py" --cxla "$cxla" --backends nonsense --no-models
# compile_bench.py: one round of a small loop module, this binary against itself.
cat >"$dir/tiny_loop.hlo" <<'EOF'
HloModule tiny_loop
cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[2] get-tuple-element(p), index=1
  y = f32[2] add(x, x)
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  ROOT t = (s32[], f32[2]) tuple(ni, y)
}
ENTRY main {
  x = f32[2] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[2]) tuple(z, x)
  ROOT w = (s32[], f32[2]) while(t), condition=cond, body=body
}
EOF
num='[0-9.,]+ / [0-9.,]+'
# Per binary: cold, cached, cold CPU; then the three ratios.
expect "compile_bench" 0 "^tiny_loop +$num +$num +$num +$num +$num +$num +[0-9.]+ +[0-9.]+ +[0-9.]+" -- \
  "$python" "$bench/compile_bench.py" --cxla "$cxla" --baseline "$cxla" --rounds 1 \
  "$dir/tiny_loop.hlo"
expect "compile_bench unknown module" 2 "no module named nonsense" -- \
  "$python" "$bench/compile_bench.py" --cxla "$cxla" nonsense
finish
