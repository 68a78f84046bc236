#!/usr/bin/env python3
"""Times the anchor workloads of bench/ops_bench.py compiled ahead of time (`cxla compile
-o`, docs/aot.md) beside the JIT running the same module, in the same run, on one thread.

    /usr/bin/python3 bench/aot_bench.py [--cxla PATH] [--repeat N] [--small] [case ...]

For each case: the module ops_bench builds, `cxla compile MODULE -o DIR/m` with --target
portable (the default: no builtins) and native (the JIT's builtins: __builtin_fmaf in the
fast math functions, always_inline), and for the cases with a dot or a convolution native
with `--blas onednn`; each built with
`gcc -std=c11 -O2 -march=native -fno-math-errno` (the JIT's flags; docs/aot.md, "Speed")
into a program that loads ops_bench's inputs and times N calls of m_run; then
`CXLA_NUM_THREADS=1 cxla run --backend cpu --repeat N MODULE inputs...` on the same
inputs. Both report their best run (ms): the library starts no threads, so the JIT runs
on one thread too (and oneDNN, OMP_NUM_THREADS=1, on both sides). --rounds R does it all R
times and keeps each figure's minimum. Ratio AOT / JIT: above 1, the library is slower. Prints Markdown.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import ops_bench  # noqa: E402

DRIVER = r"""
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "m.h"

static void *load(const char *path, size_t n) {
    FILE *f = fopen(path, "rb");
    void *q = aligned_alloc(64, (n + 63) / 64 * 64 + 64);
    size_t got = f && q ? fread(q, 1, n, f) : 0;
    if (f) fclose(f);
    return got == n ? q : NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    int reps = atoi(argv[1]);
    const void *args[m_arg_count + 1];
    void *res[m_result_count + 1];
    for (int i = 0; i < m_arg_count; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/in%d.bin", argv[2], i);
        args[i] = load(path, m_arg_bytes[i]);
        if (!args[i]) return 3;
    }
    for (int k = 0; k < m_result_count; k++)
        res[k] = aligned_alloc(64, (m_result_bytes[k] + 63) / 64 * 64 + 64);
    void *scratch = aligned_alloc(64, m_scratch_size() / 64 * 64 + 64);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int rc = m_run(args, res, scratch);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (rc) {
            fprintf(stderr, "m_run: %s\n", m_error_string(rc));
            return 4;
        }
        double t = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (t < best) best = t;
    }
    printf("%.6f\n", best * 1e3);
    return 0;
}
"""


def aot_time(cxla, hlo_path, inputs_dir, d, repeat, blas, target="portable"):
    out = os.path.join(d, "m")
    cmd = ([cxla, "compile", hlo_path, "-o", out, "--target", target]
           + (["--blas", "onednn"] if blas else []))
    subprocess.run(cmd, check=True, capture_output=True)
    with open(os.path.join(d, "driver.c"), "w") as f:
        f.write(DRIVER)
    srcs = [os.path.join(d, "driver.c"), out + ".c"]
    if os.path.exists(out + "_data.c"):
        srcs.append(out + "_data.c")
    prog = os.path.join(d, "prog")
    subprocess.run(["gcc", "-std=c11", "-O2", "-march=native", "-fno-math-errno", "-I", d]
                   + srcs + ["-lm"] + (["-ldnnl"] if blas else []) + ["-o", prog],
                   check=True, capture_output=True)
    # oneDNN (--blas onednn) would start its own OpenMP threads: one, as the JIT gets.
    r = subprocess.run([prog, str(repeat), inputs_dir], check=True, capture_output=True,
                       text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    return float(r.stdout.strip())


def jit_time(cxla, hlo_path, npys, repeat):
    env = dict(os.environ, CXLA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    r = subprocess.run([cxla, "run", "--backend", "cpu", "--repeat", str(repeat), "-q",
                        hlo_path] + npys, capture_output=True, text=True, env=env)
    m = re.search(r"^run\s+median\s+[0-9.]+ ms\s+min\s+([0-9.]+) ms", r.stderr, re.M)
    if r.returncode != 0 or not m:
        raise RuntimeError("cxla run: %s" % r.stderr.strip()[-300:])
    return float(m.group(1))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--cxla", default=os.path.join(root, "build", "cxla"))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--small", action="store_true", help="every case at its small size")
    p.add_argument("--rounds", type=int, default=1, help="rounds; each figure's minimum")
    p.add_argument("cases", nargs="*", help="anchor cases (default: all)")
    args = p.parse_args()
    ops_bench.np = np  # ops_bench imports NumPy in its main(); its builders use the module's
    np.random.seed(0)
    names = args.cases or [n for n, (g, _, _) in ops_bench.CASES.items() if g == "anchors"]
    print("AOT beside the JIT (one thread), commit %s, load %.1f; best of %d runs x %d "
          "rounds, ms\n" % (ops_bench.commit(root), os.getloadavg()[0], args.repeat, args.rounds))
    print("| case | AOT portable | AOT native | AOT native, --blas onednn | JIT, 1 thread "
          "| portable / JIT | native / JIT | best AOT / JIT |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        group, big, small = ops_bench.CASES[name]
        work = (small if args.small else big)()
        with tempfile.TemporaryDirectory() as d:
            hlo_path = os.path.join(d, "case.hlo")
            with open(hlo_path, "w") as f:
                f.write(work.hlo)
            npys = []
            for i, x in enumerate(work.inputs):
                x = np.ascontiguousarray(x)
                x.tofile(os.path.join(d, "in%d.bin" % i))
                npys.append(os.path.join(d, "in%d.npy" % i))
                np.save(npys[-1], x)
            try:
                aot = native = jit = float("inf")
                blas = None
                for _ in range(args.rounds):
                    with tempfile.TemporaryDirectory() as a:
                        aot = min(aot, aot_time(args.cxla, hlo_path, d, a, args.repeat, False))
                    with tempfile.TemporaryDirectory() as a:
                        native = min(native, aot_time(args.cxla, hlo_path, d, a, args.repeat,
                                                      False, "native"))
                    if re.search(r"\b(dot|convolution)\(", work.hlo):
                        with tempfile.TemporaryDirectory() as a:
                            t = aot_time(args.cxla, hlo_path, d, a, args.repeat, True, "native")
                            blas = t if blas is None else min(blas, t)
                    jit = min(jit, jit_time(args.cxla, hlo_path, npys, args.repeat))
            except (subprocess.CalledProcessError, RuntimeError) as e:
                err = getattr(e, "stderr", None) or str(e)
                print("| %s | failed: %s | | | | | | |" % (name, str(err).strip()[-120:]))
                continue
        best = min(aot, native, blas if blas is not None else aot)
        print("| %s | %.3f | %.3f | %s | %.3f | %.2f | %.2f | %.2f |"
              % (name, aot, native, "%.3f" % blas if blas is not None else "-", jit, aot / jit,
                 native / jit, best / jit))
        sys.stdout.flush()
    print("\nload after: %.1f" % os.getloadavg()[0])


if __name__ == "__main__":
    main()
