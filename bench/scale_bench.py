#!/usr/bin/env python3
"""Times what issue 17 asks to scale linearly, through the cxla tool (start-up included):

- threaded collectives: `cxla run --backend interpreter --replicas N` of an all-reduce of
  f32[4], N = 256 ... 4096 (the most a run may have), with the peak memory of the process
  (the interpreter, named: the runs' own cost stays that of the earlier measurements);
- parsing with reused names: `cxla check` of a module of K computations that each call
  their parameter `p` (renamed p.1, p.2, ... as XLA's parser does), next to the same
  module with unique names.

    /usr/bin/python3 bench/scale_bench.py [--cxla PATH] [--replicas N ...] [--computations K]

Nothing is asserted; linear cost shows as time per replica (or per computation) that
stays flat as the count grows.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0  # MiB, max so far
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {r.stderr}")
    return dt, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxla", default=os.path.join(os.path.dirname(__file__), "..", "build", "cxla"))
    ap.add_argument("--replicas", type=int, nargs="*", default=[256, 512, 1024, 2048, 4096])
    ap.add_argument("--computations", type=int, default=16000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        ar = os.path.join(d, "ar.hlo")
        with open(ar, "w") as f:
            f.write("HloModule ar\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                    "  ROOT s = f32[] add(x, y)\n}\nENTRY main {\n  p = f32[4] parameter(0)\n"
                    "  ROOT r = f32[4] all-reduce(p), replica_groups={}, to_apply=add\n}\n")
        print("all-reduce of f32[4] on N replicas (threads)")
        print(f"{'N':>6} {'seconds':>9} {'us/replica':>11} {'peak MiB':>9}")
        for n in a.replicas:
            dt, rss = timed([a.cxla, "run", "--backend", "interpreter", ar, "--replicas", str(n)])
            print(f"{n:>6} {dt:>9.3f} {dt / n * 1e6:>11.1f} {rss:>9.0f}")
        k = a.computations
        for label, fmt in (("reused names (p)", "p"), ("unique names (p<i>)", "p{i}")):
            path = os.path.join(d, "names.hlo")
            with open(path, "w") as f:
                f.write("HloModule names\n")
                for i in range(k):
                    name = fmt.format(i=i)
                    f.write(f"c{i} {{\n  {name} = f32[] parameter(0)\n  ROOT n{i} = f32[] negate({name})\n}}\n")
                f.write("ENTRY main {\n  x = f32[] parameter(0)\n  ROOT r = f32[] call(x), to_apply=c0\n}\n")
            dt, _ = timed([a.cxla, "check", path])
            print(f"cxla check, {k} computations, {label}: {dt:.3f} s")


if __name__ == "__main__":
    main()
