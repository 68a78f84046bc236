#!/usr/bin/env python3
"""Times the stand-ins of issue 19's long programs (bench/lowp_programs.py) on the cpu
backend, against this machine's floors and PyTorch, in the same run.

    /usr/bin/python3 bench/lowp_bench.py [--cxla PATH] [--scale small|full] [--repeat N]
                                         [--threads N] [--interp] [--timeout S] [--markdown]
                                         [name ...]

GEMM loops (fp8_gemm_loop_*, bf16_gemm_loop): `cxla run --repeat N+1` (generated inputs,
the best run after a warm-up run; parse and compile excluded), and the bf16 floor: the
loop's multiply-adds over twice the f32 FMA peak of bench_floors (measured first, with the
same thread count): a vdpbf16ps does two bf16 multiply-adds per f32 lane where an FMA does
one, and the f8 operands are multiplied as bf16. The PyTorch peer of a step is
torch.matmul of the same operands as bf16 (Debian's PyTorch runs it on oneDNN), times the
steps; PyTorch 1.13 has no f8 types, so the peer leaves out the widening. With --interp the
interpreter runs the same file too (minutes at --scale small; hours at full).

Reduce loops (reduce_loop_1m, reduce_loop_1m_carry: 1000 steps over f32[1048576]): the
run time per step, beside one step run alone as its own module (`--repeat 200`, best; the
floor of a step): reduce_1m, the same reduction, and carry_step_1m, the carry loop's body
(x * 0.5 + 1 and its sum); the difference is the loop's own cost per step. The PyTorch peer is the
same Python loop of torch ops (x * i).sum() (x = x * 0.5 + 1; (x).sum() for the carry).

--scale small (the default) runs the GEMM loops at 4096 rows and 5 steps (1/32 of the
work of the full 32768 rows and 20 steps: the full time is about 32 times the small one);
--scale full runs the programs at the issue's size (about 1.3 GiB of memory, a minute or
more each on two cores). The machines are shared and noisy: compare ratios from one run.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lowp_programs  # noqa: E402

GEMMS = ["fp8_gemm_loop_e4m3fn", "fp8_gemm_loop_e5m2", "fp8_gemm_loop_convert",
         "bf16_gemm_loop"]
LOOPS = ["reduce_loop_1m", "reduce_loop_1m_carry"]


def shape_of(scale):
    m, steps = (32768, 20) if scale == "full" else (4096, 5)
    return m, 8192, 1024, steps


def cxla_run(cxla, path, repeat, env, timeout, backend="cpu"):
    """Best run time in seconds of `cxla run --repeat`, or None (with the reason)."""
    try:
        r = subprocess.run([cxla, "run", "--backend", backend, "--repeat", str(repeat), "-q",
                            path], capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "> %ds" % timeout
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["failed"])[-1]
    m = re.search(r"^run\s+median\s+([\d.]+) ms\s+min\s+([\d.]+) ms", r.stdout + r.stderr, re.M)
    if not m:
        return None, "no timing"
    return float(m.group(2)) / 1000.0, None


def fma_gflops(cxla, threads):
    exe = os.path.join(os.path.dirname(cxla), "bench_floors")
    if not os.path.exists(exe):
        return None
    r = subprocess.run([exe, "--what", "fma", "--threads", str(threads)], capture_output=True,
                       text=True)
    m = re.search(r"fma_GFLOPs_%dt ([\d.]+)" % threads, r.stdout)
    return float(m.group(1)) if m else None


def torch_or_none(threads):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    return torch


def best(fn, repeat):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def torch_gemm(torch, m, k, n, steps, repeat):
    a = (torch.rand(m, k) * 0.3 - 0.1).to(torch.bfloat16)
    w = (torch.rand(steps, k, n) * 0.3 - 0.1).to(torch.bfloat16)
    acc = torch.zeros(m, n)

    def run():
        acc.zero_()
        for i in range(steps):
            acc.add_(torch.matmul(a, w[i]).float(), alpha=0.5)
    return best(run, repeat)


def torch_loop(torch, carry, repeat):
    x0 = torch.rand(1 << 20) * 0.3 - 0.1

    def run():
        x, s = x0, torch.zeros(())
        for i in range(1000):
            if carry:
                x = x * 0.5 + 1
                s = s + x.sum()
            else:
                s = s + (x * float(i)).sum()
        return s
    return best(run, repeat)


def fmt(v, unit="s"):
    if v is None:
        return "-"
    if unit == "us":
        return "%.1f us" % (v * 1e6)
    return "%.2f s" % v if v >= 1 else "%.1f ms" % (v * 1e3)


def ratio(a, b):
    return "%.2f" % (a / b) if a and b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cxla", default=os.path.join(HERE, "..", "build", "cxla"))
    ap.add_argument("--scale", choices=["small", "full"], default="small")
    ap.add_argument("--repeat", type=int, default=2, help="timed runs after the warm-up")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--interp", action="store_true", help="time the interpreter too")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per cxla run")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    cxla = os.path.abspath(args.cxla)
    names = args.names or GEMMS + LOOPS
    env = dict(os.environ, CXLA_NUM_THREADS=str(args.threads))
    torch = torch_or_none(args.threads)
    tmp = tempfile.mkdtemp(prefix="lowp_bench_")
    progs = lowp_programs.programs(args.scale)
    for name, text in progs.items():
        with open(os.path.join(tmp, name + ".hlo"), "w") as f:
            f.write(text)
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()
    fma = fma_gflops(cxla, args.threads)
    m, k, n, steps = shape_of(args.scale)
    sep = "|" if args.markdown else " "
    print("# commit %s, %s, %d threads, load average %.1f %.1f %.1f, f32 FMA peak %s GFLOP/s"
          % (commit, args.scale, args.threads, *load, fma))
    print("# GEMM loops: %d steps of %dx%dx%d; floor = multiply-adds / FMA peak in GFLOP/s "
          "(bf16: twice the f32 multiply-adds per lane)"
          % (steps, m, k, n))
    head = ["program", "cpu", "floor", "cpu/floor", "GMAC/s", "torch bf16", "cpu/torch"]
    if args.interp:
        head += ["interpreter", "interp/cpu"]
    print(sep.join(head))
    for name in [x for x in names if x in GEMMS]:
        path = os.path.join(tmp, name + ".hlo")
        t, why = cxla_run(cxla, path, args.repeat + 1, env, args.timeout)
        macs = float(m) * k * n * steps
        floor = macs / (fma * 1e9) if fma else None
        peer = torch_gemm(torch, m, k, n, steps, args.repeat) if torch else None
        row = [name, fmt(t) if t else why, fmt(floor), ratio(t, floor),
               "%.1f" % (macs / t / 1e9) if t else "-", fmt(peer), ratio(t, peer)]
        if args.interp:
            ti, whyi = cxla_run(cxla, path, 1, env, args.timeout, "interpreter")
            row += [fmt(ti) if ti else whyi, ratio(ti, t)]
        print(sep.join(row), flush=True)
    loops = [x for x in names if x in LOOPS]
    if loops:
        alone, why = cxla_run(cxla, os.path.join(tmp, "reduce_1m.hlo"), 201, env, args.timeout)
        body, whyb = cxla_run(cxla, os.path.join(tmp, "carry_step_1m.hlo"), 201, env,
                              args.timeout)
        print("# reduce loops: 1000 steps over f32[1048576]; one step alone (the floor): "
              "reduce_1m %s, carry_step_1m %s" % (fmt(alone, "us") if alone else why,
                                                  fmt(body, "us") if body else whyb))
        print(sep.join(["program", "cpu", "per step", "step alone", "loop's own per step",
                        "step/alone", "torch", "cpu/torch"]))
        for name in loops:
            alone1 = body if name.endswith("carry") else alone
            t, why = cxla_run(cxla, os.path.join(tmp, name + ".hlo"), args.repeat + 3, env,
                              args.timeout)
            peer = torch_loop(torch, name.endswith("carry"), args.repeat) if torch else None
            per = t / 1000 if t else None
            print(sep.join([name, fmt(t) if t else why, fmt(per, "us"), fmt(alone1, "us"),
                            fmt(per - alone1, "us") if per and alone1 else "-",
                            ratio(per, alone1), fmt(peer), ratio(t, peer)]), flush=True)
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
