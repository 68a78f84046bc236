#!/usr/bin/env bash
# Every run ends (issue 17): a replica stuck in a loop outside the all-reduce that the
# others wait in ends the run after the collective time limit, in threads and under
# mpirun, with exit 1 and the message naming the missing replica; --timeout and SIGINT
# cancel a run naming the instruction; reads from sources without an end stop; writes
# to a full or closed standard output fail; a directory given for a file says so; and a
# module's replica_count is the default replica count.
set -u
cxla=${1:?path to the cxla tool}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=testlib.sh
. "$here/testlib.sh"
stuck=$here/stuck_replica.hlo # replica_count=2; replica 1 loops before the all-reduce

# A loop without end on one device (replica 1's branch with replica 0's id: never ends).
sed -e 's/, replica_count=2//' -e 's/constant(1)$/constant(0)/' \
  -e 's/ROOT ar = f32\[4\] all-reduce(c), replica_groups={}, to_apply=add/ROOT ar = f32[4] copy(c)/' \
  "$stuck" >"$dir/forever.hlo"
cat >"$dir/ok.hlo" <<'HLO'
HloModule ok
ENTRY main {
  ROOT c = f32[2] constant({1, 2})
}
HLO

# ---- a run that cannot finish ends --------------------------------------------------
expect "stuck replica, threads" 1 "timed out after 1 s .*missing: replica 1" -- \
  timeout 60 "$cxla" run "$stuck" --collective-timeout 1
# The replica through which the all-reduce goes is the stuck one: the others say so.
sed 's/constant(1)$/constant(0)/' "$stuck" >"$dir/stuck0.hlo"
expect "stuck leader, threads" 1 "replica 1 failed: .*missing: replica 0" -- \
  timeout 60 "$cxla" run "$dir/stuck0.hlo" --collective-timeout 1 --replicas 2
# The interpreter, named, stops between two instructions of the loop's computations; the
# cpu backend, the default, names the while loop (the line below checks that).
expect "--timeout" 1 "at .*computation (body|cond).*the run was cancelled: it ran longer than --timeout 0.3 s" -- \
  timeout 60 "$cxla" run --backend interpreter "$dir/forever.hlo" --timeout 0.3
expect "--timeout, default backend" 1 "at .*the run was cancelled: it ran longer than --timeout 0.3 s" -- \
  timeout 60 "$cxla" run "$dir/forever.hlo" --timeout 0.3
expect "--timeout, replicas" 1 "the run was cancelled: it ran longer than --timeout 0.3 s" -- \
  timeout 60 "$cxla" run "$stuck" --timeout 0.3
expect "--timeout not reached" 0 "f32\[2\] \{1, 2\}" -- "$cxla" run "$dir/ok.hlo" --timeout 100
expect "--timeout bad" 1 "--timeout needs a positive number" -- "$cxla" run "$dir/ok.hlo" --timeout 0

# SIGINT: the first cancels (exit 1, the instruction named), a second one kills.
timeout 60 "$cxla" run "$dir/forever.hlo" >"$dir/int.out" 2>&1 &
pid=$!
# Wait until cxla (the child of timeout) catches SIGINT (bit 2 of SigCgt), then a little
# more for the run to start: a fixed 0.5 s was too short under the sanitizers, and an
# early SIGINT meets the default action (exit 130, nothing printed).
for _ in $(seq 100); do
  child=$(pgrep -P "$pid" | head -n 1)
  mask=$( [ -n "$child" ] && sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$child/status" 2>/dev/null)
  [ -n "$mask" ] && [ $((0x$mask & 2)) -ne 0 ] && break
  sleep 0.1
done
sleep 0.5
# To cxla itself: timeout(1) would forward a SIGINT sent to it twice (to its child, then to
# its process group), and a second SIGINT ends cxla by design (exit 130, nothing printed).
kill -INT "${child:-$pid}"
wait "$pid"
rc=$?
if [ "$rc" -eq 1 ] && grep -qE "at .* \((parameter|add|compare|constant|while|tuple|get-tuple-element), computation .*the run was cancelled: interrupted \(SIGINT" "$dir/int.out"; then
  ok
else
  fail "SIGINT: exit $rc: $(cat "$dir/int.out")"
fi

# ---- under MPI ------------------------------------------------------------------------
if "$cxla" version | grep -q '^mpi: yes$' && command -v mpirun >/dev/null 2>&1; then
  mpirun=(mpirun --oversubscribe)
  if [ "$(id -u)" -eq 0 ]; then mpirun+=(--allow-run-as-root); fi
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  expect "stuck replica, MPI" 1 "rank 0.*missing: replica 1" -- \
    timeout 120 "${mpirun[@]}" -np 2 "$cxla" run --mpi "$stuck" --collective-timeout 1
  expect "stuck leader, MPI" 1 "rank 1.*replica 1 failed: .*missing: replica 0" -- \
    timeout 120 "${mpirun[@]}" -np 2 "$cxla" run --mpi "$dir/stuck0.hlo" --collective-timeout 1
else
  echo "note: MPI parts skipped (no MPI in this build, or no mpirun)"
fi

# ---- the module's replica_count --------------------------------------------------------
cat >"$dir/r3.hlo" <<'HLO'
HloModule r3, replica_count=3
ENTRY main {
  ROOT r = u32[] replica-id()
}
HLO
expect "replica_count is the default" 0 "replica 2:" -- "$cxla" run "$dir/r3.hlo"
expect "replica_count against --infeed" 1 "written for 3 replicas x 1 partitions, and --infeed" -- \
  "$cxla" run "$dir/r3.hlo" --infeed "f32[] 1"

# ---- bounded reads, directories -------------------------------------------------------
ln -s /dev/zero "$dir/zero.hlo"
expect "module from /dev/zero" 1 "zero.hlo' is not a regular file and gives more than 100000 bytes" -- \
  env CXLA_READ_LIMIT=100000 timeout 60 "$cxla" check "$dir/zero.hlo"
ln -s /dev/zero "$dir/zero.npy"
expect "input from /dev/zero" 1 "zero.npy" -- \
  env CXLA_READ_LIMIT=100000 timeout 60 "$cxla" run "$dir/forever.hlo" "$dir/zero.npy"
# A pipe that never closes: the limit ends the read (yes writes forever).
expect "module from an endless pipe" 1 "is not a regular file and gives more than 100000 bytes" -- \
  env CXLA_READ_LIMIT=100000 timeout 60 bash -c "yes | '$cxla' check /dev/stdin"
mkdir "$dir/adir"
expect "module is a directory" 1 "adir' is a directory, where a file was expected" -- \
  "$cxla" run "$dir/adir"
cat >"$dir/id.hlo" <<'HLO'
HloModule id
ENTRY main {
  ROOT p = f32[2] parameter(0)
}
HLO
expect "input is a directory" 1 "adir' is a directory, where a file was expected" -- \
  "$cxla" run "$dir/id.hlo" "$dir/adir"
# A .npy header that claims more than the file holds fails before the data is read.
/usr/bin/python3 - "$dir/big.npy" <<'PY' 2>/dev/null || cp /dev/null "$dir/big.npy"
import sys
h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }"
h += b" " * (118 - len(h)) + b"\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + bytes([len(h), 0]) + h + b"\0" * 16)
PY
expect "npy header larger than the file" 1 "truncated data" -- \
  "$cxla" run "$dir/id.hlo" "$dir/big.npy"

# ---- out of memory names what and where ------------------------------------------------
# (400 GB: more than any test machine gives; ASan must return NULL instead of aborting.)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
cat >"$dir/big.hlo" <<'HLO'
HloModule big
ENTRY main {
  p = f32[] parameter(0)
  b = f32[100000000000] broadcast(p), dimensions={}
  ROOT n = f32[100000000000] negate(b)
}
HLO
# The interpreter names the instruction; the cpu backend, the default, the instruction of
# the result it could not allocate, n (fused with b; tests/cpu/test_cpu_messages.sh).
expect "out of memory in an instruction" 1 \
  "b \(broadcast, computation main, line 4\): out of memory allocating an array of f32\[100000000000\] \(400000000000 bytes\)" -- \
  "$cxla" run --backend interpreter "$dir/big.hlo" "f32[] 1"
expect "out of memory, default backend" 1 "(n \(negate, computation main, line 5|b \(broadcast, computation main, line 4).*out of memory allocating an array of f32\[100000000000\] \(400000000000 bytes\)" -- \
  "$cxla" run "$dir/big.hlo" "f32[] 1"
sed -i 's/p = f32\[\] parameter(0)/p = f32[100000000000] parameter(0)/; s/b = .*/b = f32[100000000000] copy(p)/' "$dir/big.hlo"
expect "out of memory for a generated input" 1 \
  "generating the input of parameter 0: out of memory allocating an array of f32\[100000000000\]" -- \
  "$cxla" run "$dir/big.hlo"

# ---- checked writes ---------------------------------------------------------------------
if [ -w /dev/full ]; then
  expect "run > /dev/full" 1 "writing to standard output failed" -- \
    bash -c "'$cxla' run '$dir/ok.hlo' > /dev/full"
  expect "fmt > /dev/full" 1 "writing to standard output failed" -- \
    bash -c "'$cxla' fmt '$dir/ok.hlo' > /dev/full"
fi
expect "run >&-" 1 "writing to standard output failed" -- bash -c "'$cxla' run '$dir/ok.hlo' >&-"
finish
