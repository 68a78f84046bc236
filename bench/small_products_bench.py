#!/usr/bin/env python3
"""Small products on two threads: the cpu backend's oneDNN calls under 1 Mi multiply-adds run on
one thread (src/cpu/onednn.c, small_macs), since waking OpenMP's passive worker costs more than
the second thread saves. This measures where the line lies, in the same run as NumPy and PyTorch.

    /usr/bin/python3 bench/small_products_bench.py [--cxla PATH] [--repeat N] [--program PATH]...

For each product [M,K] x [K,N] (bf16 and f32, from 32 Ki to 64 Mi multiply-adds) the median run
time of `cxla run --repeat N` (parse and compile excluded) in three settings: the default (two
threads, small products on one), CXLA_ONEDNN_SMALL=0 (every product on OpenMP's two threads, as
before), and CXLA_NUM_THREADS=1; then torch.matmul on two threads and NumPy's matmul (f32; NumPy
has no bf16), median of N calls after a warm-up. The column "2t/1t" is the all-threads time over
the one-thread time: above 1, the second thread costs more than it saves. --program adds whole
modules (e.g. XLA's graphsage_tf.hlo) in the three cxla settings. The machines are shared and
noisy: compare the ratios of one run, and say the load average (printed first).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SIZES = [(1, 256, 128), (10, 50, 128), (16, 128, 256), (8, 256, 512), (16, 256, 256),
         (32, 256, 256), (64, 256, 256), (64, 512, 512), (256, 512, 512)]
SETTINGS = [("default", {}), ("all threads", {"CXLA_ONEDNN_SMALL": "0"}),
            ("1 thread", {"CXLA_NUM_THREADS": "1"})]


def module(m, k, n, ty):
    return ("HloModule small\nENTRY e {\n  a = %s[%d,%d] parameter(0)\n  b = %s[%d,%d] parameter(1)\n"
            "  ROOT d = %s[%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"
            % (ty, m, k, ty, k, n, ty, m, n))


def cxla_median(cxla, path, repeat, extra):
    env = dict(os.environ)
    env.update(extra)
    r = subprocess.run([cxla, "run", "--repeat", str(repeat), "-q", path], capture_output=True,
                       text=True, env=env, timeout=600)
    if r.returncode != 0:
        return None
    m = re.search(r"^run\s+median\s+([\d.]+) ms", r.stdout + r.stderr, re.M)
    return float(m.group(1)) * 1e3 if m else None  # us


def peer_median(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6  # us


def fmt(v):
    return "-" if v is None else "%.1f" % v


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--cxla", default=os.path.join(HERE, "..", "build", "cxla"))
    p.add_argument("--repeat", type=int, default=300)
    p.add_argument("--program", action="append", default=[])
    args = p.parse_args()
    print("load average: %.2f %.2f %.2f" % os.getloadavg())
    try:
        import numpy as np
        from ops_bench import Blas
        for line in Blas().describe():
            print(line)
    except ImportError:
        np = None
    try:
        import torch
        torch.set_num_threads(2)
    except ImportError:
        torch = None
    print("times in us (median of %d runs)" % args.repeat)
    print("| product | MACs | cxla default | all threads | 1 thread | 2t/1t | default/1t | torch 2t "
          "| numpy |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for ty in ("bf16", "f32"):
            for m, k, n in SIZES:
                path = os.path.join(tmp, "d_%d_%d_%d_%s.hlo" % (m, k, n, ty))
                with open(path, "w") as f:
                    f.write(module(m, k, n, ty))
                t = [cxla_median(args.cxla, path, args.repeat, e) for _, e in SETTINGS]
                tt = nn = None
                if torch is not None:
                    dt = torch.bfloat16 if ty == "bf16" else torch.float32
                    a, b = torch.rand(m, k, dtype=dt), torch.rand(k, n, dtype=dt)
                    tt = peer_median(lambda: torch.matmul(a, b), args.repeat)
                if np is not None and ty == "f32":
                    a, b = np.random.rand(m, k).astype(np.float32), np.random.rand(k, n).astype(
                        np.float32)
                    nn = peer_median(lambda: a @ b, args.repeat)
                r1 = t[1] / t[2] if t[1] and t[2] else None
                r2 = t[0] / t[2] if t[0] and t[2] else None
                print("| %s[%d,%d]x[%d,%d] | %d | %s | %s | %s | %s | %s | %s | %s |" % (
                    ty, m, k, k, n, m * k * n, fmt(t[0]), fmt(t[1]), fmt(t[2]),
                    "-" if r1 is None else "%.2f" % r1, "-" if r2 is None else "%.2f" % r2,
                    fmt(tt), fmt(nn)))
                sys.stdout.flush()
    for prog in args.program:
        t = [cxla_median(args.cxla, prog, args.repeat, e) for _, e in SETTINGS]
        print("| %s | - | %s | %s | %s | %s | %s | - | - |" % (
            os.path.basename(prog), fmt(t[0]), fmt(t[1]), fmt(t[2]),
            "%.2f" % (t[1] / t[2]) if t[1] and t[2] else "-",
            "%.2f" % (t[0] / t[2]) if t[0] and t[2] else "-"))


if __name__ == "__main__":
    main()
