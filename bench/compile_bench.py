#!/usr/bin/env python3
"""Compile time of the cpu backend, cold and cached, for one cxla binary or two back to back.

Usage: compile_bench.py [--cxla BIN] [--baseline BIN] [--rounds N] [--shared DIR]
                        [--markdown] [MODEL ...]

For each module, each binary compiles it `--rounds` times (3 by default) in turns (this
binary, then the baseline, then this one again, ...), each time cold (CXLA_CACHE_DIR an
empty temporary folder) and then cached (a second process on the same folder), read from
`cxla run --repeat 1`'s `compile` line (parse excluded, run excluded). "cold cpu" is the
CPU time (user + system) of the whole cold process with the compilers it ran: on a loaded
machine the compile's wall time is mostly waiting for a core, its CPU time is not. It
prints the minimum and median of each, and with a baseline the ratios this / baseline of
the minima. The machine is shared: compare the ratios of one run, not times across runs.

Modules (MODEL picks some by name; a path to a .hlo file adds it):
- generated_1000_instructions: the module of ops_bench.py (elementwise chains with row
  reductions and broadcasts: issue 13's goal, 1,000 instructions compile cold in under
  2 s and load cached in under 20 ms);
- generated_loop_200: a while loop whose body holds 200 instructions of small kernels on
  scalars and u32[2] (the shape of in_place_dynamic_update_slice_fusion's loops), which
  the cpu backend compiles as one generated function (src/cpu/cpu_loop.c);
- the loop models of ../shared/models (--shared, or $CXLA_SHARED_DIR):
  in_place_dynamic_update_slice_fusion, bench_scan_N2000_M3, and
  dynamic_slice_loop_1x2048x768_bf16 (no while loop: 64 slices, straight-line).
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops_bench import generated_module  # noqa: E402  (the same module as ops_bench's)

SHARED_LOOPS = ["in_place_dynamic_update_slice_fusion", "bench_scan_N2000_M3",
                "dynamic_slice_loop_1x2048x768_bf16"]


def generated_loop(count):
    """A while loop over (s32[], u32[], u32[2]) whose body is |count| instructions of
    scalar and u32[2] arithmetic, 100 iterations."""
    body = ["  p = (s32[], u32[], u32[2]) parameter(0)",
            "  i = s32[] get-tuple-element(p), index=0",
            "  x = u32[] get-tuple-element(p), index=1",
            "  v = u32[2] get-tuple-element(p), index=2",
            "  one = s32[] constant(1)", "  k = u32[] constant(2654435761)",
            "  s = u32[] constant(13)"]
    prev, vec, n = "x", "v", 0
    while n < count:
        body += [f"  a{n} = u32[] multiply({prev}, k)",
                 f"  b{n} = u32[] shift-right-logical(a{n}, s)",
                 f"  c{n} = u32[] xor(a{n}, b{n})",
                 f"  w{n} = u32[2] broadcast(c{n}), dimensions={{}}",
                 f"  y{n} = u32[2] add({vec}, w{n})"]
        prev, vec, n = f"c{n}", f"y{n}", n + 5
    body += ["  ni = s32[] add(i, one)",
             f"  ROOT t = (s32[], u32[], u32[2]) tuple(ni, {prev}, {vec})"]
    return "\n".join(
        [f"HloModule generated_loop_{count}", "body {"] + body + ["}",
         "cond {", "  p = (s32[], u32[], u32[2]) parameter(0)",
         "  i = s32[] get-tuple-element(p), index=0", "  n = s32[] constant(100)",
         "  ROOT lt = pred[] compare(i, n), direction=LT", "}",
         "ENTRY main {", "  x = u32[] parameter(0)", "  v = u32[2] parameter(1)",
         "  z = s32[] constant(0)", "  t = (s32[], u32[], u32[2]) tuple(z, x, v)",
         "  ROOT w = (s32[], u32[], u32[2]) while(t), condition=cond, body=body", "}"])


def compile_ms(cxla, path, cache):
    """One process: the `compile` line of `cxla run --repeat 1` (ms) and the CPU time of the
    whole process with the compilers it ran (user + system, ms), or (None, None)."""
    env = dict(os.environ, CXLA_CACHE_DIR=cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([cxla, "run", path, "--backend", "cpu", "--repeat", "1"],
                       capture_output=True, text=True, env=env, timeout=600)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = 1000 * ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    m = re.search(r"^compile\s+median\s+([0-9.]+) ms", p.stdout + p.stderr, re.M)
    if p.returncode != 0 or not m:
        sys.stderr.write(f"{cxla} run {path}: exit {p.returncode}\n{p.stderr[-2000:]}\n")
        return None, None
    return float(m.group(1)), cpu


def cold_and_cached(cxla, path):
    """(cold ms, cached ms, cold process CPU ms)."""
    cache = tempfile.mkdtemp(prefix="cxla-compile-bench-")
    try:
        cold, cold_cpu = compile_ms(cxla, path, cache)
        cached, _ = compile_ms(cxla, path, cache)
        return cold, cached, cold_cpu
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def summary(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), statistics.median(xs)) if xs else (None, None)


def fmt(x):
    return "-" if x is None else f"{x:,.1f}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cxla", default=os.path.join(here, "..", "build", "cxla"))
    ap.add_argument("--baseline", help="a second cxla binary, timed in turns with --cxla")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shared", default=os.environ.get(
        "CXLA_SHARED_DIR", os.path.join(here, "..", "..", "shared")))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    tmp = tempfile.mkdtemp(prefix="cxla-compile-bench-src-")
    try:
        mods = {}
        for name, text in [("generated_1000_instructions", generated_module(1000)),
                           ("generated_loop_200", generated_loop(200))]:
            path = os.path.join(tmp, name + ".hlo")
            with open(path, "w") as f:
                f.write(text + "\n")
            mods[name] = path
        for name in SHARED_LOOPS:
            path = os.path.join(a.shared, "models", name + ".hlo")
            if os.path.exists(path):
                mods[name] = path
        for m in a.models:
            if m.endswith(".hlo"):
                mods[os.path.basename(m)[:-4]] = m
        want = [m if not m.endswith(".hlo") else os.path.basename(m)[:-4] for m in a.models]
        unknown = [m for m in want if m not in mods]
        if unknown:
            ap.error("no module named " + ", ".join(unknown) + " (known: " +
                     ", ".join(mods) + ")")
        names = want or list(mods)
        bins = [("this", a.cxla)] + ([("baseline", a.baseline)] if a.baseline else [])
        kinds = ("cold", "cached", "cold cpu")
        head = ["module"] + [f"{b} {k} (min/med ms)" for b, _ in bins for k in kinds]
        if a.baseline:
            head += [f"{k} this/base" for k in kinds]
        rows = []
        for name in names:
            times = {b: ([], [], []) for b, _ in bins}
            for _ in range(a.rounds):
                for b, exe in bins:
                    for k, x in enumerate(cold_and_cached(exe, mods[name])):
                        times[b][k].append(x)
            row, mins = [name], {}
            for b, _ in bins:
                for k, xs in zip(kinds, times[b]):
                    lo, med = summary(xs)
                    mins[(b, k)] = lo
                    row.append(f"{fmt(lo)} / {fmt(med)}")
            if a.baseline:
                for k in kinds:
                    t, base = mins[("this", k)], mins[("baseline", k)]
                    row.append(f"{t / base:.2f}" if t and base else "-")
            rows.append(row)
            sys.stderr.write(f"{name} done\n")
        if a.markdown:
            print("| " + " | ".join(head) + " |")
            print("|" + "---|" * len(head))
            for r in rows:
                print("| " + " | ".join(r) + " |")
        else:
            widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
            for r in [head] + rows:
                print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
