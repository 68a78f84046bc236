#!/usr/bin/env bash
# The builder's examples and the replica tests again, on the cpu backend
# (CXLA_TEST_BACKEND=cpu): every built module's result must equal the interpreter's bit
# for bit (with the interpreter's own math functions: CXLA_CPU_EXACT_MATH=1), and every
# replicated run must give the results the tests expect.
set -u
bin=${CXLA_BINARY_DIR:?the build folder}
failed=0
ran=0
for t in test_builder_elementwise test_builder_host test_builder_linalg test_builder_reduce \
         test_replicas; do
  if [ ! -x "$bin/$t" ]; then
    echo "missing $bin/$t"
    failed=$((failed + 1))
    continue
  fi
  ran=$((ran + 1))
  if CXLA_TEST_BACKEND=cpu CXLA_CPU_EXACT_MATH=1 "$bin/$t" >"$bin/$t.cpu.log" 2>&1; then
    echo "ok   $t on the cpu backend"
  else
    echo "FAIL $t on the cpu backend"
    grep -v '^ok' "$bin/$t.cpu.log" | tail -n 20
    failed=$((failed + 1))
  fi
done
echo "$((ran - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
