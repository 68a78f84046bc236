"""The collectives across processes: `cxla run --mpi` under mpirun, one device per rank.

Run by tests/runtime/test_mpi.sh as: python3 mpi_check.py CXLA MPIRUN...

Each case writes a module and per-replica .npy inputs, runs it under mpirun, and checks
the outputs against values computed here with NumPy, and against the same module run by
`cxla run --replicas N` in threads, byte for byte. Failures: a rank that fails makes every
rank fail naming it; replicas that disagree or deadlock fail with the reason, the latter
listing which replicas arrived. Exit status 0 when every check holds.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

CXLA = sys.argv[1]
MPIRUN = sys.argv[2:]
failures = []
WORK_DIRS = []  # removed at the end


def fail(what):
    failures.append(what)
    print("FAIL: " + what)


def write_inputs(work, per_replica):
    """per_replica[r] is the list of arrays of replica r."""
    for r, arrays in enumerate(per_replica):
        d = os.path.join(work, "replica%d" % r)
        os.makedirs(d, exist_ok=True)
        for j, a in enumerate(arrays):
            np.save(os.path.join(d, "in%d.npy" % j), a)


def outputs(work, n, count):
    return [[np.load(os.path.join(work, "replica%d" % r, "out%d.npy" % j)) for j in range(count)]
            for r in range(n)]


def clear_outputs(work):
    for root, _, files in os.walk(work):
        for f in files:
            if f.startswith("out"):
                os.remove(os.path.join(root, f))


def mpi_cmd(extra, path, work):
    """One rank's command: its inputs from work/replica<r>/, its outputs there too."""
    return [CXLA, "run", "--mpi"] + list(extra) + ["--input-dir", work, "-o", work, path]


def threads_cmd(n, extra, path, work):
    return [CXLA, "run", "--replicas", str(n)] + list(extra) + ["--input-dir", work, "-o", work,
                                                               path]


def run(name, module, per_replica, np_, extra=(), mpi=True):
    """Runs under mpirun (or in threads); returns (returncode, stderr, work dir)."""
    work = tempfile.mkdtemp(prefix="cxla_mpi_%s_" % name)
    WORK_DIRS.append(work)
    path = os.path.join(work, "m.hlo")
    with open(path, "w") as f:
        f.write(module)
    write_inputs(work, per_replica)
    if mpi:
        cmd = MPIRUN + ["-np", str(np_)] + mpi_cmd(extra, path, work)
    else:
        cmd = threads_cmd(np_, extra, path, work)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stderr.decode(errors="replace"), work


def run_ok(name, module, per_replica, np_, count, extra=()):
    """MPI outputs, checked equal (bytes) to the threads run's; None on failure."""
    rc, err, work = run(name, module, per_replica, np_, extra)
    if rc != 0:
        fail("%s on %d ranks: exit %d: %s" % (name, np_, rc, err.strip()))
        return None
    got = outputs(work, np_, count)
    clear_outputs(work)
    path = os.path.join(work, "m.hlo")
    p = subprocess.run(threads_cmd(np_, extra, path, work), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        fail("%s in threads: %s" % (name, p.stderr.decode(errors="replace").strip()))
        return got
    ref = outputs(work, np_, count)
    for r in range(np_):
        for j in range(count):
            if got[r][j].dtype != ref[r][j].dtype or got[r][j].tobytes() != ref[r][j].tobytes():
                fail("%s on %d ranks: replica %d output %d differs from the threads run: %s vs %s"
                     % (name, np_, r, j, got[r][j], ref[r][j]))
    return got


def expect(name, got, want):
    if got.shape != want.shape or not np.array_equal(got, want):
        fail("%s: got %s, expected %s" % (name, got, want))


ADD = "add {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT s = s32[] add(x, y)\n}\n"
ADDF = "addf {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"


def x_of(r):
    return (100 * r + np.arange(12)).astype(np.int32)


def every_collective(n):
    """One module with each collective over all n replicas."""
    ring = ",".join("{%d,%d}" % (k, (k + 1) % n) for k in range(n))
    module = ("HloModule every\n" + ADD + "ENTRY main {\n  p = s32[12] parameter(0)\n"
              "  ar = s32[12] all-reduce(p), replica_groups={}, to_apply=add\n"
              "  ag = s32[%d] all-gather(p), replica_groups={}, dimensions={0}\n"
              "  rs = s32[%d] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add\n"
              "  a2a = s32[12] all-to-all(p), replica_groups={}, dimensions={0}\n"
              "  cp = s32[12] collective-permute(p), source_target_pairs={%s}\n"
              "  cb = s32[12] collective-broadcast(p), replica_groups={}\n"
              "  id = u32[] replica-id()\n"
              "  cr = s32[12] collective-reduce(p), replica_groups={}, to_apply=add\n"
              # ragged-all-to-all: element k of each replica goes to replica k, landing at
              # the sender's replica id there
              "  ids = s32[] convert(id)\n  oo = s32[%d] broadcast(ids), dimensions={}\n"
              "  io = s32[%d] iota(), iota_dimension=0\n  one = s32[] constant(1)\n"
              "  ones = s32[%d] broadcast(one), dimensions={}\n  zero = s32[] constant(0)\n"
              "  out0 = s32[%d] broadcast(zero), dimensions={}\n"
              "  pn = s32[%d] slice(p), slice={[0:%d]}\n"
              "  ra = s32[%d] ragged-all-to-all(pn, out0, io, ones, oo, ones), replica_groups={}\n"
              "  ROOT t = (s32[12], s32[%d], s32[%d], s32[12], s32[12], s32[12], u32[], s32[12], "
              "s32[%d]) tuple(ar, ag, rs, a2a, cp, cb, id, cr, ra)\n}\n") % (
                  12 * n, 12 // n, ring, n, n, n, n, n, n, n, 12 * n, 12 // n, n)
    got = run_ok("every_collective", module, [[x_of(r)] for r in range(n)], n, 9)
    if got is None:
        return
    xs = [x_of(r) for r in range(n)]
    shard = 12 // n
    for r in range(n):
        tag = "n=%d replica %d " % (n, r)
        expect(tag + "all-reduce", got[r][0], sum(xs))
        expect(tag + "all-gather", got[r][1], np.concatenate(xs))
        expect(tag + "reduce-scatter", got[r][2], sum(xs)[r * shard:(r + 1) * shard])
        expect(tag + "all-to-all", got[r][3],
               np.concatenate([xs[k][r * shard:(r + 1) * shard] for k in range(n)]))
        expect(tag + "collective-permute", got[r][4], xs[(r - 1) % n])
        expect(tag + "collective-broadcast", got[r][5], xs[0])
        expect(tag + "replica-id", got[r][6], np.uint32(r))
        # the group's first member gets the sum; cxla leaves the others their operands
        expect(tag + "collective-reduce", got[r][7], sum(xs) if r == 0 else xs[r])
        expect(tag + "ragged-all-to-all", got[r][8], np.array([xs[k][r] for k in range(n)]))


def groups():
    module = ("HloModule groups, replica_count=4\n" + ADD + "ENTRY main {\n"
              "  p = s32[12] parameter(0)\n"
              "  a = s32[12] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add\n"
              "  b = s32[12] all-reduce(p), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add\n"
              "  c = s32[24] all-gather(p), replica_groups={{3,1},{0,2}}, dimensions={0}\n"
              "  d = s32[6] reduce-scatter(p), replica_groups=[2,2]<=[4], dimensions={0}, "
              "to_apply=add\n"
              "  ROOT t = (s32[12], s32[12], s32[24], s32[6]) tuple(a, b, c, d)\n}\n")
    got = run_ok("groups", module, [[x_of(r)] for r in range(4)], 4, 4)
    if got is None:
        return
    xs = [x_of(r) for r in range(4)]
    for r in range(4):
        tag = "groups replica %d " % r
        expect(tag + "{{0,1},{2,3}}", got[r][0], xs[r] + xs[r ^ 1])
        expect(tag + "T(1,0)", got[r][1], xs[r] + xs[r ^ 2])
        order = [3, 1] if r % 2 else [0, 2]
        expect(tag + "all-gather order", got[r][2], np.concatenate([xs[k] for k in order]))
        pos = r % 2
        expect(tag + "reduce-scatter", got[r][3], (xs[r] + xs[r ^ 1])[6 * pos:6 * pos + 6])


def float_order():
    """An order-sensitive f32 sum: the group's order, on every rank, as in threads."""
    v = [1e8, 1.0, -1e8, 1.0]
    module = ("HloModule order\n" + ADDF + "ENTRY main {\n  p = f32[1] parameter(0)\n"
              "  a = f32[1] all-reduce(p), replica_groups={}, to_apply=addf\n"
              "  b = f32[1] all-reduce(p), replica_groups={{1,3,0,2}}, to_apply=addf\n"
              "  ROOT t = (f32[1], f32[1]) tuple(a, b)\n}\n")
    got = run_ok("float_order", module, [[np.array([x], np.float32)] for x in v], 4, 2)
    if got is None:
        return
    f = np.float32
    want_a = ((f(v[0]) + f(v[1])) + f(v[2])) + f(v[3])
    want_b = ((f(v[1]) + f(v[3])) + f(v[0])) + f(v[2])
    for r in range(4):
        expect("order {} replica %d" % r, got[r][0], np.array([want_a], np.float32))
        expect("order {1,3,0,2} replica %d" % r, got[r][1], np.array([want_b], np.float32))


def training():
    """Data-parallel gradient steps: every rank ends with the same parameters, those of one
    replica on the whole batch."""
    rng = np.random.default_rng(7)
    xs = rng.uniform(-1, 1, (8, 4)).astype(np.float32)
    ys = (xs @ np.array([0.5, -1.25, 2.0, 0.75], np.float32) + 0.3).astype(np.float32)
    w0 = np.array([0.1, -0.2, 0.3, 0.0], np.float32)
    b0 = np.float32(0.05)

    def module(shard):
        st = "(s32[], f32[4], f32[], f32[%d,4], f32[%d])" % (shard, shard)
        return ("HloModule train\n" + ADDF +
                "cond {\n  s = %s parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
                "body {\n  s = %s parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                "  w = f32[4] get-tuple-element(s), index=1\n  b = f32[] get-tuple-element(s), index=2\n"
                "  x = f32[%d,4] get-tuple-element(s), index=3\n"
                "  y = f32[%d] get-tuple-element(s), index=4\n"
                "  xw = f32[%d] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                "  bb = f32[%d] broadcast(b), dimensions={}\n  pr = f32[%d] add(xw, bb)\n"
                "  err = f32[%d] subtract(pr, y)\n"
                "  gw = f32[4] dot(err, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                "  zero = f32[] constant(0)\n"
                "  gb = f32[] reduce(err, zero), dimensions={0}, to_apply=addf\n"
                "  g = (f32[4], f32[]) all-reduce(gw, gb), replica_groups={}, to_apply=addf\n"
                "  gwa = f32[4] get-tuple-element(g), index=0\n"
                "  gba = f32[] get-tuple-element(g), index=1\n  k = f32[] constant(0.025)\n"
                "  kw = f32[4] broadcast(k), dimensions={}\n  dw = f32[4] multiply(kw, gwa)\n"
                "  nw = f32[4] subtract(w, dw)\n  db = f32[] multiply(k, gba)\n"
                "  nb = f32[] subtract(b, db)\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
                "  ROOT t = %s tuple(j, nw, nb, x, y)\n}\n"
                "ENTRY main {\n  w = f32[4] parameter(0)\n  b = f32[] parameter(1)\n"
                "  x = f32[%d,4] parameter(2)\n  y = f32[%d] parameter(3)\n  z = s32[] constant(0)\n"
                "  s = %s tuple(z, w, b, x, y)\n  l = %s while(s), condition=cond, body=body\n"
                "  nw = f32[4] get-tuple-element(l), index=1\n"
                "  nb = f32[] get-tuple-element(l), index=2\n"
                "  ROOT r = (f32[4], f32[]) tuple(nw, nb)\n}\n") % (
                    st, st, shard, shard, shard, shard, shard, shard, st, shard, shard, st, st)

    single = run_ok("train_single", module(8), [[w0, b0, xs, ys]], 1, 2)
    # The same steps in NumPy (float64), as a check of the module itself.
    w, b = w0.astype(np.float64), float(b0)
    for _ in range(3):
        err = xs.astype(np.float64) @ w + b - ys
        w, b = w - 0.025 * (err @ xs), b - 0.025 * err.sum()
    if single is not None:
        if not np.allclose(single[0][0], w, rtol=1e-5, atol=1e-6) or \
                not np.isclose(single[0][1], b, rtol=1e-5, atol=1e-6):
            fail("training on one replica: %s %s, NumPy gives %s %s" %
                 (single[0][0], single[0][1], w, b))
    for n in (2, 4):
        shard = 8 // n
        per = [[w0, b0, xs[r * shard:(r + 1) * shard], ys[r * shard:(r + 1) * shard]]
               for r in range(n)]
        got = run_ok("train_%d" % n, module(shard), per, n, 2)
        if got is None or single is None:
            continue
        for r in range(n):
            for j in range(2):
                if got[r][j].tobytes() != got[0][j].tobytes():
                    fail("training on %d ranks: replica %d differs from replica 0" % (n, r))
                if not np.allclose(got[r][j], single[0][j], rtol=1e-5, atol=1e-6):
                    fail("training on %d ranks: %s vs one replica %s" % (n, got[r][j], single[0][j]))


def partitions():
    """2 replicas x 2 partitions: ids and the group modes, as in threads."""
    module = ("HloModule parts, replica_count=2, num_partitions=2\n" + ADD + "ENTRY main {\n"
              "  p = s32[1] parameter(0)\n  r = u32[] replica-id()\n  q = u32[] partition-id()\n"
              "  cr = s32[1] all-reduce(p), replica_groups={}, to_apply=add\n"
              "  crp = s32[1] all-reduce(p), channel_id=1, replica_groups={}, to_apply=add\n"
              "  cp = s32[1] collective-permute(p), channel_id=2, source_target_pairs={{0,1},{1,0}}\n"
              "  ROOT t = (u32[], u32[], s32[1], s32[1], s32[1]) tuple(r, q, cr, crp, cp)\n}\n")
    work = tempfile.mkdtemp(prefix="cxla_mpi_parts_")
    WORK_DIRS.append(work)
    path = os.path.join(work, "m.hlo")
    with open(path, "w") as f:
        f.write(module)
    for d in range(4):
        sub = os.path.join(work, "replica%d" % (d // 2), "partition%d" % (d % 2))
        os.makedirs(sub, exist_ok=True)
        np.save(os.path.join(sub, "in0.npy"), np.array([10 * d + 1], np.int32))
    p = subprocess.run(MPIRUN + ["-np", "4"] + mpi_cmd((), path, work), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        fail("partitions: %s" % p.stderr.decode(errors="replace").strip())
        return
    for d in range(4):
        rep, part = d // 2, d % 2
        sub = os.path.join(work, "replica%d" % rep, "partition%d" % part)
        out = [np.load(os.path.join(sub, "out%d.npy" % j)) for j in range(5)]
        expect("partitions device %d replica-id" % d, out[0], np.uint32(rep))
        expect("partitions device %d partition-id" % d, out[1], np.uint32(part))
        expect("partitions device %d cross-replica" % d, out[2],
               np.array([10 * part + 1 + 10 * (2 + part) + 1], np.int32))
        expect("partitions device %d all devices" % d, out[3], np.array([64], np.int32))
        expect("partitions device %d cross-partition permute" % d, out[4],
               np.array([10 * (2 * rep + 1 - part) + 1], np.int32))


def failures_and_timeouts():
    # Replica 2 fails; every rank reports it.
    module = ("HloModule fails\n" + ADD +
              "ok {\n  a = s32[2] parameter(0)\n  ROOT c = s32[2] copy(a)\n}\n"
              "bad {\n  a = s32[2] parameter(0)\n"
              "  ROOT c = s32[2] custom-call(a), custom_call_target=\"no_such_target\"\n}\n"
              "ENTRY main {\n  p = s32[2] parameter(0)\n  r = u32[] replica-id()\n"
              "  two = u32[] constant(2)\n  is2 = pred[] compare(r, two), direction=EQ\n"
              "  c = s32[2] conditional(is2, p, p), true_computation=bad, false_computation=ok\n"
              "  ROOT ar = s32[2] all-reduce(c), replica_groups={}, to_apply=add\n}\n")
    rc, err, _ = run("fails", module, [[np.array([1, 2], np.int32)]] * 4, 4, ["--collective-timeout", "60"])
    lines = [l for l in err.splitlines() if l.startswith("cxla (rank ")]
    if rc == 0 or len(lines) != 4 or not all("replica 2 failed" in l and "custom-call" in l
                                              for l in lines):
        fail("a failing rank: exit %d, stderr:\n%s" % (rc, err))

    # A rank without its inputs fails before it starts; the others name it.
    rc, err, _ = run("no_inputs", "HloModule m\n" + ADD + "ENTRY main {\n  p = s32[1] parameter(0)\n"
                     "  ROOT ar = s32[1] all-reduce(p), to_apply=add\n}\n",
                     [[np.array([1], np.int32)]] * 2 + [[]], 3)
    if rc == 0 or err.count("replica 2 failed") != 3 or "in0.npy" not in err:
        fail("a rank without inputs: exit %d, stderr:\n%s" % (rc, err))

    # A rank whose module does not even parse (mpirun's MPMD form gives it another file):
    # it takes part as a failed device, so the others stop at once naming it.
    work = tempfile.mkdtemp(prefix="cxla_mpi_bad_module_")
    WORK_DIRS.append(work)
    good, bad = os.path.join(work, "good.hlo"), os.path.join(work, "bad.hlo")
    with open(good, "w") as f:
        f.write("HloModule m\n" + ADD + "ENTRY main {\n  p = s32[1] constant({1})\n"
                "  ROOT ar = s32[1] all-reduce(p), to_apply=add\n}\n")
    with open(bad, "w") as f:
        f.write("HloModule m\nENTRY main {\n  ROOT p = s32[1 constant({1})\n}\n")
    opts = ["--collective-timeout", "120"]
    cmd = (MPIRUN + ["-np", "2", CXLA, "run", "--mpi"] + opts + [good] + [":"] +
           ["-np", "1", CXLA, "run", "--mpi"] + opts + [bad])
    start = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    took = time.time() - start
    err = p.stderr.decode(errors="replace")
    if (p.returncode == 0 or err.count("replica 2 failed") != 3 or "bad.hlo" not in err
            or took > 60):
        fail("a rank whose module does not parse: exit %d after %.0f s, stderr:\n%s" %
             (p.returncode, took, err))

    # A while loop that runs once on replica 0 and twice on replica 1.
    module = ("HloModule disagree\n" + ADD +
              "cond {\n  s = (u32[], s32[1]) parameter(0)\n  i = u32[] get-tuple-element(s), index=0\n"
              "  r = u32[] replica-id()\n  one = u32[] constant(1)\n  n = u32[] add(r, one)\n"
              "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
              "body {\n  s = (u32[], s32[1]) parameter(0)\n  i = u32[] get-tuple-element(s), index=0\n"
              "  v = s32[1] get-tuple-element(s), index=1\n"
              "  ar = s32[1] all-reduce(v), replica_groups={}, to_apply=add\n"
              "  one = u32[] constant(1)\n  j = u32[] add(i, one)\n"
              "  ROOT t = (u32[], s32[1]) tuple(j, ar)\n}\n"
              "ENTRY main {\n  p = s32[1] parameter(0)\n  z = u32[] constant(0)\n"
              "  t = (u32[], s32[1]) tuple(z, p)\n"
              "  w = (u32[], s32[1]) while(t), condition=cond, body=body\n"
              "  ROOT v = s32[1] get-tuple-element(w), index=1\n}\n")
    rc, err, _ = run("disagree", module, [[np.array([1], np.int32)]] * 2, 2, ["--collective-timeout", "60"])
    if rc == 0 or err.count("replica 0 ended its program without taking part in execution 2") != 2:
        fail("replicas that disagree: exit %d, stderr:\n%s" % (rc, err))

    # Replicas 0 and 1 wait in one all-reduce, replica 2 in another: the time limit ends it.
    module = ("HloModule deadlock\n" + ADD +
              "first {\n  a = s32[1] parameter(0)\n"
              "  ROOT ar_first = s32[1] all-reduce(a), replica_groups={}, to_apply=add\n}\n"
              "second {\n  a = s32[1] parameter(0)\n"
              "  ROOT ar_second = s32[1] all-reduce(a), replica_groups={}, to_apply=add\n}\n"
              "ENTRY main {\n  p = s32[1] parameter(0)\n  r = u32[] replica-id()\n"
              "  two = u32[] constant(2)\n  is2 = pred[] compare(r, two), direction=EQ\n"
              "  ROOT c = s32[1] conditional(is2, p, p), true_computation=second, "
              "false_computation=first\n}\n")
    rc, err, _ = run("deadlock", module, [[np.array([1], np.int32)]] * 3, 3, ["--collective-timeout", "0.5"])
    lines = [l for l in err.splitlines() if l.startswith("cxla (rank ")]
    ok = rc != 0 and len(lines) == 3 and all("timed out after 0.5 s" in l for l in lines) and (
        all("arrived: replica 0, replica 1; missing: replica 2" in l for l in lines) or
        all("arrived: replica 2; missing: replica 0, replica 1" in l for l in lines))
    if not ok:
        fail("a deadlock: exit %d, stderr:\n%s" % (rc, err))

    # Replica 1 computes without end and without a collective while replica 0 is done:
    # replica 0 waits for its end-of-run message at most the collective time limit, then
    # fails naming it, and the job ends (mpirun stops the rank that is still running).
    module = ("HloModule silent\n"
              "cond {\n  c = s64[] parameter(0)\n  z = s64[] constant(0)\n"
              "  ROOT ge = pred[] compare(c, z), direction=GE\n}\n"
              "body {\n  b = s64[] parameter(0)\n  one = s64[] constant(1)\n"
              "  ROOT n = s64[] add(b, one)\n}\n"
              "spin {\n  a = s32[1] parameter(0)\n  s = s64[] constant(0)\n"
              "  w = s64[] while(s), condition=cond, body=body\n  wc = s32[] convert(w)\n"
              "  b = s32[1] broadcast(wc), dimensions={}\n  ROOT c = s32[1] add(a, b)\n}\n"
              "pass {\n  a = s32[1] parameter(0)\n  ROOT c = s32[1] copy(a)\n}\n"
              "ENTRY main {\n  p = s32[1] parameter(0)\n  r = u32[] replica-id()\n"
              "  one = u32[] constant(1)\n  is1 = pred[] compare(r, one), direction=EQ\n"
              "  ROOT c = s32[1] conditional(is1, p, p), true_computation=spin, "
              "false_computation=pass\n}\n")
    start = time.time()
    rc, err, _ = run("silent", module, [[np.array([1], np.int32)]] * 2, 2,
                     ["--collective-timeout", "1"])
    took = time.time() - start
    if (rc == 0 or "cxla (rank 0): " not in err or "replica 1 did not tell the end of its run "
            "within the collective time limit of 1 s" not in err or took > 60):
        fail("a rank that does not end: exit %d after %.0f s, stderr:\n%s" % (rc, took, err))


for n in (1, 2, 3, 4):
    every_collective(n)
groups()
float_order()
training()
partitions()
failures_and_timeouts()
for d in WORK_DIRS:
    shutil.rmtree(d, ignore_errors=True)
if failures:
    print("%d MPI check(s) failed" % len(failures))
    sys.exit(1)
print("all MPI checks passed")
