#!/usr/bin/env python3
"""Times reading HLO text: `cxla check` (parse + verify) and `cxla fmt` (parse + print)
on a generated module of about 5 MB in the style of XLA's dumps (long names, metadata,
layouts, fusions) and on the largest programs of ../shared/models/.

    /usr/bin/python3 bench/parse_bench.py [--cxla PATH] [--mb N] [--repeat N] [--shared DIR]

Each time is the best of --repeat runs of the whole process (start-up included), shown
with the throughput in MB/s. The issue that built the parser asks for well under a second
on a 5 MB module; nothing here is asserted, the table is for reading.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

BODY = """%fused_computation.{i} (param_0.{i}: f32[64,128], param_1.{i}: f32[128]) -> f32[64,128] {{
  %param_0.{i} = f32[64,128]{{1,0}} parameter(0)
  %param_1.{i} = f32[128]{{0}} parameter(1)
  %broadcast.{i} = f32[64,128]{{1,0}} broadcast(f32[128]{{0}} %param_1.{i}), dimensions={{1}}, metadata={{op_name="jit(step)/jit(main)/add" source_file="model.py" source_line={i}}}
  %add.{i} = f32[64,128]{{1,0}} add(f32[64,128]{{1,0}} %param_0.{i}, f32[64,128]{{1,0}} %broadcast.{i}), metadata={{op_name="jit(step)/jit(main)/add" source_file="model.py" source_line={i}}}
  ROOT %tanh.{i} = f32[64,128]{{1,0}} tanh(f32[64,128]{{1,0}} %add.{i}), metadata={{op_name="jit(step)/jit(main)/tanh" source_file="model.py" source_line={i}}}
}}

"""

STEP = """  %dot.{i} = f32[64,128]{{1,0}} dot(f32[64,128]{{1,0}} %h.{p}, f32[128,128]{{1,0}} %w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, metadata={{op_name="jit(step)/jit(main)/dot_general" source_file="model.py" source_line={i}}}
  %h.{i} = f32[64,128]{{1,0}} fusion(f32[64,128]{{1,0}} %dot.{i}, f32[128]{{0}} %b), kind=kLoop, calls=%fused_computation.{i}, metadata={{op_name="jit(step)/jit(main)/tanh" source_file="model.py" source_line={i}}}
"""


def generate(mb):
    """An HLO module of at least |mb| megabytes: a chain of dot + fusion layers."""
    parts, steps, n = [], [], 0
    size = 0
    while size < mb * 1e6:
        n += 1
        parts.append(BODY.format(i=n))
        steps.append(STEP.format(i=n, p=n - 1))
        size += len(parts[-1]) + len(steps[-1])
    head = "HloModule bench_parse, entry_computation_layout={(f32[64,128]{1,0}, f32[128,128]{1,0}, f32[128]{0})->f32[64,128]{1,0}}\n\n"
    entry = (
        "ENTRY %main (h.0: f32[64,128], w: f32[128,128], b: f32[128]) -> f32[64,128] {\n"
        "  %h.0 = f32[64,128]{1,0} parameter(0)\n"
        "  %w = f32[128,128]{1,0} parameter(1)\n"
        "  %b = f32[128]{0} parameter(2)\n"
        + "".join(steps)
        + f"  ROOT %out = f32[64,128]{{1,0}} copy(f32[64,128]{{1,0}} %h.{n})\n}}\n"
    )
    return head + "".join(parts) + entry


def best_time(cmd, repeat):
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        dt = time.perf_counter() - t0
        if r.returncode != 0:
            return None, r.stderr.strip().splitlines()[-1] if r.stderr else "failed"
        best = dt if best is None else min(best, dt)
    return best, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxla", default="build/cxla")
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--shared", default=os.environ.get("CXLA_SHARED_DIR", "../shared"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        gen = os.path.join(tmp, "bench_parse.hlo")
        with open(gen, "w") as f:
            f.write(generate(args.mb))
        files = [gen]
        models = os.path.join(args.shared, "models")
        if os.path.isdir(models):
            files += sorted(glob.glob(os.path.join(models, "*.hlo")), key=os.path.getsize)[-3:]
        else:
            print(f"(no {models}: the models are skipped)")
        print(f"{'module':44s} {'MB':>6s} {'check s':>8s} {'MB/s':>7s} {'fmt s':>8s} {'MB/s':>7s}")
        for path in files:
            mb = os.path.getsize(path) / 1e6
            row = f"{os.path.basename(path)[:44]:44s} {mb:6.2f}"
            for cmd in ([args.cxla, "check", path], [args.cxla, "fmt", path]):
                t, err = best_time(cmd, args.repeat)
                row += f" {'error':>8s} {'':>7s}" if t is None else f" {t:8.3f} {mb / t:7.1f}"
                if err:
                    print(f"  {cmd[1]} {path}: {err}", file=sys.stderr)
            print(row)


if __name__ == "__main__":
    main()
