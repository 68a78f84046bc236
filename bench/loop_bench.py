#!/usr/bin/env python3
"""While loops that rewrite a large state every step, on the cpu backend (issue 19, "Time"):
time per step against one body run alone, against the memory floor, and against NumPy and
PyTorch running the same loop, in the same run.

    /usr/bin/python3 bench/loop_bench.py [--cxla PATH] [--base PATH] [--mib 4,64]
                                         [--repeat N] [--threads N] [--markdown] [case ...]

Cases (f32 states of --mib MiB each; each loop runs a fixed number of steps):
- ew: x = x * 0.5 + 1, the state rewritten elementwise (state (i, x)).
- carry: x = x * 0.5 + 1 and s += sum(x) (bench/lowp_programs.py's reduce_loop_1m_carry).
- reduce: s += sum(x * i), x read only (reduce_loop_1m).
- tuple: (i, big, v) with v = v * 0.5 + big: big passes through unchanged, v is rewritten.
- dus: buf[(i + 1) % R] = buf[(7 i) % R] * 0.5 + 1 for rows of 1024 elements of a big
  buffer (a dynamic-slice and a dynamic-update-slice into it per step).
- scan: h = h * 0.5 + 1 over f32[1024] and out[i] = h, out the big buffer (a scan writing
  row i of its output).
- rev: x = reverse(x) * 0.5 + 1: the body reads the state at other positions than it
  writes, so the result cannot be written over the state while it is computed.

Per case: `cxla run --repeat N` (generated inputs, best run; parse and compile excluded)
divided by the steps (dus and scan: the difference between S and 2S steps over S, which
leaves out the one copy of the big buffer into the loop's state; no "body" column);
"body" is the step as a module of its own (its state leaves as parameters, the new ones as
results; `--repeat`, best), the floor of a step that copies nothing; "floor" is the bytes a step must read and write (the state read and written once;
the dus and scan cases their rows) over bench_floors' triad figure at the same thread
count, over arrays of the state's size (measured before each size). NumPy and PyTorch run
the same loop in Python with in-place operations (np.multiply(x, 0.5, out=x);
x.mul_(0.5).add_(1)), best of --repeat. --base PATH also runs each loop on another cxla
binary (a build of main: the "before" column). The machines are shared and noisy: compare
the ratios of one run.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROW = 1024  # the row of the dus and scan cases


def steps_of(case, n):
    """Steps of a loop over n elements: about 0.1-0.3 s a run at memory speed; the dus and
    scan cases, whose steps move a row, as many as the buffer has rows (at most 2000)."""
    if case in ("dus", "scan"):
        return min(n // ROW, 2000) // 2
    return max(20, min(400, (400 << 20) // (8 * n)))


def module(case, n, steps, alone):
    """HLO text of |case| over f32[n] state: the loop (alone False) or one body step."""
    add = "add {\n  l = f32[] parameter(0)\n  r = f32[] parameter(1)\n  ROOT s = f32[] add(l, r)\n}\n"
    rows = n // ROW
    consts = (f"  half = f32[] constant(0.5)\n  onef = f32[] constant(1)\n")
    if case in ("ew", "carry", "reduce", "rev"):
        state = "(s32[], f32[%d], f32[])" % n
        if case == "reduce":
            body = (f"  fi = f32[] convert(i)\n  fb = f32[{n}] broadcast(fi), dimensions={{}}\n"
                    f"  y = f32[{n}] multiply(x, fb)\n  z = f32[] constant(0)\n"
                    f"  r = f32[] reduce(y, z), dimensions={{0}}, to_apply=add\n"
                    f"  acc2 = f32[] add(acc, r)\n")
            nx = "x"
        else:
            src = "x"
            body = consts
            if case == "rev":
                body += f"  xr = f32[{n}] reverse(x), dimensions={{0}}\n"
                src = "xr"
            body += (f"  hb = f32[{n}] broadcast(half), dimensions={{}}\n"
                     f"  ob = f32[{n}] broadcast(onef), dimensions={{}}\n"
                     f"  xh = f32[{n}] multiply({src}, hb)\n  y = f32[{n}] add(xh, ob)\n")
            if case == "carry":
                body += (f"  z = f32[] constant(0)\n"
                         f"  r = f32[] reduce(y, z), dimensions={{0}}, to_apply=add\n"
                         f"  acc2 = f32[] add(acc, r)\n")
            else:
                body += "  acc2 = f32[] add(acc, onef)\n"
            nx = "y"
        if alone:
            return (f"HloModule {case}_step\n\n{add}\nENTRY e {{\n  i = s32[] parameter(0)\n"
                    f"  x = f32[{n}] parameter(1)\n  acc = f32[] parameter(2)\n{body}"
                    f"  ROOT t = (f32[{n}], f32[]) tuple({nx}, acc2)\n}}\n")
        loop_body = (f"  p = {state} parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
                     f"  x = f32[{n}] get-tuple-element(p), index=1\n"
                     f"  acc = f32[] get-tuple-element(p), index=2\n{body}"
                     f"  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
                     f"  ROOT t = {state} tuple(i2, {nx}, acc2)\n")
        entry = (f"  x = f32[{n}] parameter(0)\n  zi = s32[] constant(0)\n"
                 f"  zf = f32[] constant(0)\n  s = {state} tuple(zi, x, zf)\n"
                 f"  w = {state} while(s), condition=cond, body=body\n"
                 f"  ROOT r = f32[] get-tuple-element(w), index=2\n")
    elif case == "tuple":
        state = "(s32[], f32[%d], f32[%d])" % (n, n)
        body = (f"  v2 = f32[{n}] multiply(v, hb)\n  y = f32[{n}] add(v2, big)\n")
        hb = f"  half = f32[] constant(0.5)\n  hb = f32[{n}] broadcast(half), dimensions={{}}\n"
        if alone:
            return (f"HloModule tuple_step\n\nENTRY e {{\n  big = f32[{n}] parameter(0)\n"
                    f"  v = f32[{n}] parameter(1)\n{hb}{body}  ROOT t = (f32[{n}]) tuple(y)\n}}\n")
        loop_body = (f"  p = {state} parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
                     f"  big = f32[{n}] get-tuple-element(p), index=1\n"
                     f"  v = f32[{n}] get-tuple-element(p), index=2\n{hb}{body}"
                     f"  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
                     f"  ROOT t = {state} tuple(i2, big, y)\n")
        entry = (f"  big = f32[{n}] parameter(0)\n  v = f32[{n}] parameter(1)\n"
                 f"  zi = s32[] constant(0)\n  s = {state} tuple(zi, big, v)\n"
                 f"  w = {state} while(s), condition=cond, body=body\n"
                 f"  ROOT r = f32[{n}] get-tuple-element(w), index=2\n")
    elif case in ("dus", "scan"):
        big = f"f32[{rows},{ROW}]"
        if case == "dus":
            state = f"(s32[], {big})"
            body = (f"  seven = s32[] constant(7)\n  nr = s32[] constant({rows})\n"
                    f"  i7 = s32[] multiply(i, seven)\n  from = s32[] remainder(i7, nr)\n"
                    f"  one1 = s32[] constant(1)\n  ip = s32[] add(i, one1)\n"
                    f"  to = s32[] remainder(ip, nr)\n  z = s32[] constant(0)\n"
                    f"  row = f32[1,{ROW}] dynamic-slice(buf, from, z), dynamic_slice_sizes={{1,{ROW}}}\n"
                    f"{consts}  hb = f32[1,{ROW}] broadcast(half), dimensions={{}}\n"
                    f"  ob = f32[1,{ROW}] broadcast(onef), dimensions={{}}\n"
                    f"  rh = f32[1,{ROW}] multiply(row, hb)\n  r2 = f32[1,{ROW}] add(rh, ob)\n"
                    f"  buf2 = {big} dynamic-update-slice(buf, r2, to, z)\n")
            if alone:
                return (f"HloModule dus_step\n\nENTRY e {{\n  i = s32[] parameter(0)\n"
                        f"  buf = {big} parameter(1)\n{body}  ROOT t = ({big}) tuple(buf2)\n}}\n")
            loop_body = (f"  p = {state} parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
                         f"  buf = {big} get-tuple-element(p), index=1\n{body}"
                         f"  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
                         f"  ROOT t = {state} tuple(i2, buf2)\n")
            entry = (f"  buf = {big} parameter(0)\n  zi = s32[] constant(0)\n"
                     f"  s = {state} tuple(zi, buf)\n"
                     f"  w = {state} while(s), condition=cond, body=body\n"
                     f"  ROOT r = {big} get-tuple-element(w), index=1\n")
        else:
            state = f"(s32[], f32[{ROW}], {big})"
            body = (f"{consts}  hb = f32[{ROW}] broadcast(half), dimensions={{}}\n"
                    f"  ob = f32[{ROW}] broadcast(onef), dimensions={{}}\n"
                    f"  hh = f32[{ROW}] multiply(h, hb)\n  h2 = f32[{ROW}] add(hh, ob)\n"
                    f"  hr = f32[1,{ROW}] reshape(h2)\n  z = s32[] constant(0)\n"
                    f"  out2 = {big} dynamic-update-slice(out, hr, i, z)\n")
            if alone:
                return (f"HloModule scan_step\n\nENTRY e {{\n  i = s32[] parameter(0)\n"
                        f"  h = f32[{ROW}] parameter(1)\n  out = {big} parameter(2)\n{body}"
                        f"  ROOT t = (f32[{ROW}], {big}) tuple(h2, out2)\n}}\n")
            loop_body = (f"  p = {state} parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
                         f"  h = f32[{ROW}] get-tuple-element(p), index=1\n"
                         f"  out = {big} get-tuple-element(p), index=2\n{body}"
                         f"  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
                         f"  ROOT t = {state} tuple(i2, h2, out2)\n")
            entry = (f"  h = f32[{ROW}] parameter(0)\n  zi = s32[] constant(0)\n"
                     f"  zo = f32[] constant(0)\n  out = {big} broadcast(zo), dimensions={{}}\n"
                     f"  s = {state} tuple(zi, h, out)\n"
                     f"  w = {state} while(s), condition=cond, body=body\n"
                     f"  ROOT r = {big} get-tuple-element(w), index=2\n")
    else:
        raise ValueError(case)
    cond = (f"cond {{\n  p = {state} parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
            f"  n = s32[] constant({steps})\n  ROOT lt = pred[] compare(i, n), direction=LT\n}}\n")
    return (f"HloModule {case}_loop\n\n{add}\nbody {{\n{loop_body}}}\n\n{cond}\n"
            f"ENTRY e {{\n{entry}}}\n")


def floor_bytes(case, n):
    """Bytes a step must read and write."""
    return {"ew": 8 * n, "carry": 8 * n, "reduce": 4 * n, "tuple": 12 * n, "rev": 8 * n,
            "dus": 8 * ROW, "scan": 12 * ROW}[case]


def cxla_run(cxla, path, repeat, env):
    r = subprocess.run([cxla, "run", "--backend", "cpu", "--repeat", str(repeat), "-q", path],
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["failed"])[-1]
    m = re.search(r"^run\s+median\s+([\d.]+) ms\s+min\s+([\d.]+) ms", r.stdout + r.stderr, re.M)
    return (float(m.group(2)) / 1000.0, None) if m else (None, "no timing")


def triad(floors, threads, mib):
    """bench_floors' triad (GB/s) over arrays of |mib| MiB each: the state's size, so that a
    state that fits in the cache is measured against a stream that fits there too."""
    if not os.path.exists(floors):
        return None
    r = subprocess.run([floors, "--what", "mem", "--mb", str(max(mib, 1)), "--threads",
                        str(threads)], capture_output=True, text=True)
    m = re.search(r"triad_GBps_%dt ([\d.]+)" % threads, r.stdout)
    return float(m.group(1)) if m else None


def best(fn, repeat):
    fn()
    t = None
    for _ in range(repeat):
        a = time.perf_counter()
        fn()
        d = time.perf_counter() - a
        t = d if t is None or d < t else t
    return t


def peer_loop(lib, case, n, steps, repeat):
    """The loop in NumPy (lib "np") or PyTorch ("torch"), in-place where the library can."""
    if lib == "np":
        import numpy as np
        mk = lambda k: np.random.default_rng(1).random(k, dtype=np.float32)  # noqa: E731
        mul = lambda a, s: np.multiply(a, s, out=a)  # noqa: E731
        add = lambda a, s: np.add(a, s, out=a)  # noqa: E731
        ssum = np.sum
        flip = np.flip
    else:
        import torch
        mk = lambda k: torch.rand(k, dtype=torch.float32)  # noqa: E731
        mul = lambda a, s: a.mul_(s)  # noqa: E731
        add = lambda a, s: a.add_(s)  # noqa: E731
        ssum = torch.sum
        flip = lambda a: torch.flip(a, [0])  # noqa: E731
    rows = n // ROW
    x, big = mk(n), mk(n)

    def run():
        nonlocal x
        s = 0.0
        if case in ("ew", "carry"):
            for _ in range(steps):
                add(mul(x, 0.5), 1.0)
                if case == "carry":
                    s += float(ssum(x))
        elif case == "reduce":
            for i in range(steps):
                s += float(ssum(x * i))
        elif case == "rev":
            for _ in range(steps):
                x = add(mul(flip(x) * 1.0, 0.5), 1.0)  # flip is a view: materialized
        elif case == "tuple":
            for _ in range(steps):
                add(mul(x, 0.5), big)
        elif case == "dus":
            b = big.reshape(rows, ROW)
            for i in range(steps):
                b[(i + 1) % rows] = b[(7 * i) % rows] * 0.5 + 1.0
        elif case == "scan":
            out, h = big.reshape(rows, ROW), mk(ROW)
            for i in range(steps):
                add(mul(h, 0.5), 1.0)
                out[i % rows] = h
        return s

    return best(run, repeat)


def fmt(t):
    if t is None:
        return "-"
    return "%.1f us" % (t * 1e6) if t < 1e-2 else "%.2f ms" % (t * 1e3)


def ratio(a, b):
    return "%.2f" % (a / b) if a is not None and b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cxla", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "..", "build", "cxla"))
    ap.add_argument("--mib", default="4,64", help="state sizes in MiB (comma-separated)")
    ap.add_argument("--floors", help="bench_floors (default: beside --cxla)")
    ap.add_argument("--base", help="another cxla binary to time the loops on (main's)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    cases = args.cases or ["ew", "carry", "reduce", "tuple", "dus", "scan", "rev"]
    env = dict(os.environ, CXLA_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads))
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    try:
        import torch
        torch.set_num_threads(args.threads)
        have_torch = True
    except ImportError:
        have_torch = False
    floors = args.floors or os.path.join(os.path.dirname(args.cxla), "bench_floors")
    print("# %s, %d threads; load %s" %
          (args.cxla, args.threads, " ".join(open("/proc/loadavg").read().split()[:3])))
    head = ["case", "MiB", "steps", "per step", "body", "step/body", "floor", "step/floor",
            "numpy", "step/np", "torch", "step/torch"]
    if args.base:
        head += ["base", "step/base"]
    print(("| " + " | ".join(head) + " |") if args.markdown else "  ".join(head))
    if args.markdown:
        print("|" + " --- |" * len(head))
    with tempfile.TemporaryDirectory() as tmp:
        for mib in [int(v) for v in args.mib.split(",")]:
            n = (mib << 20) // 4
            gbps = triad(floors, args.threads, mib)
            print("# triad over %d MiB arrays: %s GB/s" % (mib, gbps), flush=True)
            for case in cases:
                steps = steps_of(case, n)
                paths = []
                for alone in (False, True):
                    p = os.path.join(tmp, "%s_%d_%d.hlo" % (case, mib, alone))
                    with open(p, "w") as f:
                        f.write(module(case, n, steps, alone))
                    paths.append(p)
                marginal = case in ("dus", "scan")
                if marginal:
                    p2 = os.path.join(tmp, "%s_%d_twice.hlo" % (case, mib))
                    with open(p2, "w") as f:
                        f.write(module(case, n, 2 * steps, False))
                    paths.append(p2)

                def per_step(exe):
                    t, why = cxla_run(exe, paths[0], args.repeat + 1, env)
                    if t is None or not marginal:
                        return (t / steps if t is not None else None), why
                    t2, why = cxla_run(exe, paths[2], args.repeat + 1, env)
                    return ((t2 - t) / steps if t2 is not None else None), why

                step, why = per_step(args.cxla)
                tb, _ = (None, None) if marginal else \
                    cxla_run(args.cxla, paths[1], 4 * args.repeat + 1, env)
                fl = floor_bytes(case, n) / (gbps * 1e9) if gbps else None
                tn = peer_loop("np", case, n, steps, args.repeat) / steps
                tt = peer_loop("torch", case, n, steps, args.repeat) / steps if have_torch \
                    else None
                row = [case, str(mib), str(steps), fmt(step) if step else why, fmt(tb),
                       ratio(step, tb), fmt(fl), ratio(step, fl), fmt(tn), ratio(step, tn),
                       fmt(tt), ratio(step, tt)]
                if args.base:
                    s0, why0 = per_step(args.base)
                    row += [fmt(s0) if s0 else why0, ratio(step, s0)]
                print(("| " + " | ".join(row) + " |") if args.markdown else "  ".join(row),
                      flush=True)


if __name__ == "__main__":
    sys.exit(main())
