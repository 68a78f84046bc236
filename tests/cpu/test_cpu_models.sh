#!/usr/bin/env bash
# Every real program in ../shared/models/ on the cpu backend next to the interpreter, with
# the same generated inputs (cxla run --seed), and their results compared: equal bit for
# bit where the cpu backend computes exactly as the interpreter does; where it does not
# (dot and convolution sum in another order, docs/semantics.md "cpu backend"), every
# element within 1e-2 of the largest magnitude of its result (bf16 programs included) —
# loose enough for a different summation order, tight enough that a wrong kernel fails.
# Skipped (exit 77) when ../shared is absent. Prints each program's time on both backends.
set -u
cxla=${1:?path to the cxla tool}
shared=${CXLA_SHARED_DIR:-}
if [ -z "$shared" ] || [ ! -d "$shared/models" ]; then
  echo "SKIPPED: ../shared/models not found"
  exit 77
fi
python=/usr/bin/python3
passed=0
failed=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for f in "$shared"/models/*.hlo; do
  name=$(basename "$f" .hlo)
  ok=1
  for b in interpreter cpu; do
    start=$(date +%s.%N)
    if ! "$cxla" run --backend "$b" --seed 7 "$f" -o "$out/$name.$b" >/dev/null 2>"$out/$name.$b.err"; then
      echo "FAIL $name: cxla run --backend $b failed"
      tail -n 5 "$out/$name.$b.err"
      ok=0
      break
    fi
    eval "t_$b=\$(echo \"\$(date +%s.%N) - \$start\" | bc)"
  done
  if [ $ok = 1 ]; then
    if verdict=$("$python" - "$out/$name.interpreter" "$out/$name.cpu" <<'PY'
import glob, os, sys
import numpy as np
a_dir, b_dir = sys.argv[1], sys.argv[2]
names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(a_dir, "*.npy")))
if not names or names != sorted(os.path.basename(p) for p in glob.glob(os.path.join(b_dir, "*.npy"))):
    print("different result files"); sys.exit(1)
exact = True
for n in names:
    a = np.load(os.path.join(a_dir, n)); b = np.load(os.path.join(b_dir, n))
    if a.shape != b.shape or a.dtype != b.dtype:
        print(f"{n}: {b.dtype}{b.shape} vs the interpreter's {a.dtype}{a.shape}"); sys.exit(1)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:
        # bf16, written as 2-byte records: its value is the high half of an f32.
        x = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        y = (b.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    elif a.dtype.kind == "V" or a.dtype.kind in "biu":
        if a.tobytes() != b.tobytes():
            print(f"{n}: integer (or 8-bit float) results differ"); sys.exit(1)
        continue
    else:
        x = a.astype(np.float64); y = b.astype(np.float64)
    same = (x == y) | (np.isnan(x) & np.isnan(y))
    if same.all():
        continue
    exact = False
    finite = np.isfinite(x)
    scale = np.abs(x[finite]).max() if finite.any() else 1.0
    bad = ~same & ~(np.abs(x - y) <= 1e-2 * max(scale, 1e-30))
    if bad.any():
        i = np.argwhere(bad)[0]
        print(f"{n}: element {tuple(i)} is {y[tuple(i)]}, the interpreter's {x[tuple(i)]} (scale {scale})")
        sys.exit(1)
print("bit-exact" if exact else "within 1e-2 of each result's scale")
PY
    ); then
      printf "ok   %-45s interpreter %6.1fs  cpu %6.1fs  (%s)\n" "$name" "$t_interpreter" "$t_cpu" "$verdict"
      passed=$((passed + 1))
      continue
    fi
    echo "FAIL $name: $verdict"
  fi
  failed=$((failed + 1))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
