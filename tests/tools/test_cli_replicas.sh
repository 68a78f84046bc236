#!/usr/bin/env bash
# cxla run on several devices: --replicas with --input-dir and with shared inputs, the -o
# layout, --partitions, the seeds' all-reduce / all-gather on 2-4 replicas checked with
# NumPy, a failing replica's message, a time limit, and bad options.
set -u
cxla=${1:?path to the cxla tool}
python=/usr/bin/python3
if ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "SKIP: $python has no NumPy (Debian: python3-numpy)"
  exit 77
fi
# shellcheck source=testlib.sh
. "$(dirname "$0")/testlib.sh"
# check NAME PYTHON...: runs a NumPy check in $dir; it prints what is wrong and exits 1.
check() {
  local name=$1
  shift
  local out
  if out=$(cd "$dir" && "$python" -c "$*" 2>&1); then ok; else fail "$name: $out"; fi
}

cat >"$dir/collectives.hlo" <<'HLO'
HloModule collectives
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p = f32[2,3] parameter(0)
  q = s32[] parameter(1)
  ar = f32[2,3] all-reduce(p), replica_groups={}, to_apply=add
  ag = f32[REPLICAS_TIMES_2,3] all-gather(p), replica_groups={}, dimensions={0}
  id = u32[] replica-id()
  ROOT t = (f32[2,3], f32[REPLICAS_TIMES_2,3], u32[], s32[]) tuple(ar, ag, id, q)
}
HLO

for n in 2 3 4; do
  sed "s/REPLICAS_TIMES_2/$((2 * n))/g" "$dir/collectives.hlo" >"$dir/c$n.hlo"
  # Per-replica inputs: replica r holds r * 10 + arange(6), and the scalar r + 100.
  "$python" -c "
import numpy as np, os
for r in range($n):
    d = os.path.join('$dir', 'in$n', 'replica%d' % r)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, 'in0.npy'), (r * 10 + np.arange(6, dtype=np.float32)).reshape(2, 3))
    np.save(os.path.join(d, 'in1.npy'), np.int32(r + 100))
"
  expect "input-dir n=$n" 0 "^replica $((n - 1)):" -- \
    "$cxla" run --replicas "$n" --input-dir "$dir/in$n" -o "$dir/out$n" "$dir/c$n.hlo"
  check "all-reduce/all-gather n=$n" "
import numpy as np, os
n = $n
xs = [(r * 10 + np.arange(6, dtype=np.float32)).reshape(2, 3) for r in range(n)]
for r in range(n):
    d = os.path.join('out$n', 'replica%d' % r)
    files = sorted(os.listdir(d))
    assert files == ['out0.npy', 'out1.npy', 'out2.npy', 'out3.npy'], files
    ar, ag, rid, q = (np.load(os.path.join(d, 'out%d.npy' % j)) for j in range(4))
    assert ar.dtype == np.float32 and np.array_equal(ar, sum(xs)), (r, ar)
    assert np.array_equal(ag, np.concatenate(xs, axis=0)), (r, ag)
    assert rid == r and rid.dtype == np.uint32, (r, rid)
    assert q == r + 100, (r, q)
assert not os.path.exists(os.path.join('out$n', 'replica%d' % n))
"
done

# Printed results: one labelled block per replica, in order.
out=$("$cxla" run --replicas 2 --input-dir "$dir/in2" "$dir/c2.hlo" 2>&1)
if [ "$(grep -c '^replica [01]:$' <<<"$out")" -eq 2 ] && grep -q "f32\[2,3\] { { 10, 12, 14 }, { 16, 18, 20 } }" <<<"$out" &&
  grep -q "^u32\[\] 1$" <<<"$out"; then ok; else fail "printed blocks: $out"; fi

# Shared inputs on the command line: every replica gets the same values.
expect "shared inputs" 0 "f32\[2,3\] \{ \{ 0, 3, 6 \}, \{ 9, 12, 15 \} \}" -- \
  "$cxla" run --replicas 3 "$dir/c3.hlo" 'f32[2,3] {{0, 1, 2}, {3, 4, 5}}' 's32[] 7'
"$python" -c "import numpy as np; np.save('$dir/x.npy', np.ones((2, 3), np.float32))"
expect "shared npy" 0 "f32\[2,3\] \{ \{ 4, 4, 4 \}, \{ 4, 4, 4 \} \}" -- \
  "$cxla" run --replicas 4 "$dir/c4.hlo" "$dir/x.npy" 's32[] 1'
# A device without its folder reads DIR/in<j>.npy.
mkdir -p "$dir/shared"
"$python" -c "
import numpy as np
np.save('$dir/shared/in0.npy', np.full((2, 3), 2, np.float32)); np.save('$dir/shared/in1.npy', np.int32(5))"
expect "input-dir shared files" 0 "f32\[2,3\] \{ \{ 4, 4, 4 \}, \{ 4, 4, 4 \} \}" -- \
  "$cxla" run --replicas 2 --input-dir "$dir/shared" "$dir/c2.hlo"
# Generated inputs are the same on every replica: the all-reduce is twice each value.
"$cxla" run --replicas 2 -o "$dir/gen" "$dir/c2.hlo" >/dev/null 2>&1
check "generated inputs" "
import numpy as np
ag = np.load('gen/replica1/out1.npy'); ar = np.load('gen/replica0/out0.npy')
assert np.array_equal(ag[:2], ag[2:]) and np.allclose(ar, 2 * ag[:2]), (ag, ar)"

# Partitions: devices d = replica * P + partition, their folders nested.
cat >"$dir/parts.hlo" <<'HLO'
HloModule parts, num_partitions=2
ENTRY main {
  p = s32[] parameter(0)
  r = u32[] replica-id()
  q = u32[] partition-id()
  ROOT t = (s32[], u32[], u32[]) tuple(p, r, q)
}
HLO
for r in 0 1; do
  for q in 0 1; do
    mkdir -p "$dir/pin/replica$r/partition$q"
    "$python" -c "import numpy as np; np.save('$dir/pin/replica$r/partition$q/in0.npy', np.int32($((10 * r + q))))"
  done
done
expect "partitions" 0 "^replica 1 partition 1:" -- \
  "$cxla" run --replicas 2 --input-dir "$dir/pin" -o "$dir/pout" "$dir/parts.hlo"
check "partitions layout" "
import numpy as np
for r in range(2):
    for q in range(2):
        d = 'pout/replica%d/partition%d/' % (r, q)
        p, rr, qq = (np.load(d + 'out%d.npy' % j) for j in range(3))
        assert (p, rr, qq) == (10 * r + q, r, q), (r, q, p, rr, qq)"
printf 'HloModule ids\nENTRY main {\n  ROOT q = u32[] partition-id()\n}\n' >"$dir/ids.hlo"
expect "partitions flag" 0 "replica 1 partition 2:.u32\[\] 2" -- \
  bash -c "'$cxla' run --replicas 2 --partitions 3 '$dir/ids.hlo' | tr '\n' '.'"

# A failing replica: the run fails naming it.
cat >"$dir/fails.hlo" <<'HLO'
HloModule fails
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
fails {
  a = s32[2] parameter(0)
  ROOT c = s32[2] custom-call(a), custom_call_target="no_such_target_anywhere"
}
fine {
  ROOT a = s32[2] parameter(0)
}
ENTRY main {
  p = s32[2] parameter(0)
  id = u32[] replica-id()
  two = u32[] constant(2)
  bad = pred[] compare(id, two), direction=EQ
  x = s32[2] conditional(bad, p, p), true_computation=fails, false_computation=fine
  ROOT ar = s32[2] all-reduce(x), replica_groups={}, to_apply=add
}
HLO
expect "failing replica" 1 "replica 2 failed: .*no_such_target_anywhere" -- \
  "$cxla" run --replicas 3 "$dir/fails.hlo" 's32[2] {1, 2}'
expect "missing replica input" 1 "the inputs of replica 2: .*in2/in0.npy" -- \
  "$cxla" run --replicas 3 --input-dir "$dir/in2" "$dir/c3.hlo"
expect "module count" 1 "written for 2 partitions" -- \
  "$cxla" run --replicas 2 --partitions 3 "$dir/parts.hlo" 's32[] 1'
expect "group size" 1 "replica [0-2] failed: .*does not match f32\[6,3\]" -- \
  "$cxla" run --replicas 3 "$dir/c2.hlo" 'f32[2,3] {{0,0,0},{0,0,0}}' 's32[] 1'
# A replica that never comes: the time limit ends the run, listing who was missing.
cat >"$dir/hang.hlo" <<'HLO'
HloModule hang
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
reduces {
  a = s32[2] parameter(0)
  ROOT r = s32[2] all-reduce(a), replica_groups={}, to_apply=add
}
skips {
  ROOT a = s32[2] parameter(0)
}
ENTRY main {
  p = s32[2] parameter(0)
  id = u32[] replica-id()
  one = u32[] constant(1)
  skip = pred[] compare(id, one), direction=EQ
  ROOT x = s32[2] conditional(skip, p, p), true_computation=skips, false_computation=reduces
}
HLO
expect "timeout" 1 "replica 0 failed: .*(timed out|ended its program)" -- \
  timeout 60 "$cxla" run --replicas 2 --collective-timeout 0.5 "$dir/hang.hlo" 's32[2] {1, 2}'

# Bad options.
expect "unknown option" 1 "unknown option '--bogus'" -- "$cxla" run --bogus "$dir/c2.hlo"
expect "unknown short option" 1 "unknown option '-x'" -- "$cxla" run "$dir/c2.hlo" -x
expect "replicas not a number" 1 "--replicas needs a positive count, got 'two'" -- \
  "$cxla" run --replicas two "$dir/c2.hlo"
expect "replicas zero" 1 "--replicas needs a positive count" -- "$cxla" run --replicas 0 "$dir/c2.hlo"
expect "partitions trailing" 1 "--partitions needs a positive count, got '2x'" -- \
  "$cxla" run --partitions 2x "$dir/c2.hlo"
expect "seed not a number" 1 "--seed needs a whole number" -- "$cxla" run --seed abc "$dir/c2.hlo"
expect "repeat not a number" 1 "--repeat needs a positive count, got '3.5'" -- \
  "$cxla" run --repeat 3.5 "$dir/c2.hlo"
expect "timeout not a number" 1 "--collective-timeout needs a positive number of seconds" -- \
  "$cxla" run --replicas 2 --collective-timeout soon "$dir/c2.hlo"
expect "replicas needs a value" 1 "--replicas needs a value" -- "$cxla" run "$dir/c2.hlo" --replicas
expect "infeed with replicas" 1 "take runs on one device" -- \
  "$cxla" run --replicas 2 --infeed 's32[] 1' "$dir/c2.hlo"
expect "input-dir and inputs" 1 "not both" -- \
  "$cxla" run --replicas 2 --input-dir "$dir/in2" "$dir/c2.hlo" 'f32[2,3] {{0,0,0},{0,0,0}}' 's32[] 1'
expect "repeat with replicas" 0 "runs of .* on 2 devices" -- \
  "$cxla" run --replicas 2 --repeat 2 --input-dir "$dir/in2" "$dir/c2.hlo"
expect "version says mpi" 0 "^mpi: (yes|no)$" -- "$cxla" version
expect "version says onednn" 0 "^onednn: (yes|no)$" -- "$cxla" version
expect "help run" 0 "--replicas N" -- "$cxla" help run
expect "help run mpi" 0 "mpirun -np N cxla run --mpi" -- "$cxla" help run
# Without MPI built in, --mpi says so.
if "$cxla" version | grep -q "^mpi: no$"; then
  expect "no mpi" 1 "built without MPI" -- "$cxla" run --mpi "$dir/c2.hlo"
fi

finish
