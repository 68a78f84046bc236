#!/usr/bin/env python3
"""Times operations and small programs on cxla next to NumPy and PyTorch, in the same run,
and prints one table with the times and the ratios cxla / NumPy and cxla / PyTorch.

    /usr/bin/python3 bench/ops_bench.py [--cxla PATH] [--threads N] [--repeat N]
                                        [--shared DIR] [--no-models] [case ...]

Each case is an HLO module (written to a temporary file) and the same computation in
NumPy and in PyTorch, on arrays of the same shapes. cxla runs it with
`cxla run --repeat N` (generated inputs; the median run time, parse and compile
excluded); NumPy and PyTorch run it N times, best time kept. Cases: elementwise chains,
softmax, layer norm, reductions, dot, convolution and one training step of a two-layer
MLP (forward, backward by hand in HLO and NumPy, autograd in PyTorch, SGD update).
Then every program of ../shared/models/ (--shared, or $CXLA_SHARED_DIR) runs on cxla alone (`cxla run
--repeat`, generated inputs); they are skipped with a message when the folder is absent.

PyTorch is optional (Debian's python3-torch: `make bench-deps`); without it its columns
say "not installed". NumPy's BLAS and PyTorch are limited to --threads threads (default
1), as the interpreter uses one core. Ratios above 1 mean cxla is slower. The machines
are shared and noisy: compare ratios from one run, not times across runs.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

np = None  # imported in main(), after the BLAS thread limits are set
torch = None  # likewise; stays None when PyTorch is not installed

ADD = """add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}"""
MAX = """max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}"""


def rand(*shape):
    return np.random.rand(*shape).astype(np.float32)


def tt(a):
    """A PyTorch tensor sharing |a|'s memory."""
    return torch.from_numpy(a)


# Each case returns (hlo, numpy function, function making the PyTorch function).


def elementwise(n):
    hlo = f"""HloModule ew_{n}
ENTRY main {{
  x = f32[{n}] parameter(0)
  y = f32[{n}] parameter(1)
  a = f32[{n}] multiply(x, y)
  b = f32[{n}] add(a, x)
  c = f32[{n}] exponential(b)
  ROOT d = f32[{n}] tanh(c)
}}"""
    x, y = rand(n), rand(n)

    def make_torch():
        tx, ty = tt(x), tt(y)
        return lambda: torch.tanh(torch.exp(tx * ty + tx))

    return hlo, lambda: np.tanh(np.exp(x * y + x)), make_torch


def softmax(rows, cols):
    hlo = f"""HloModule softmax_{rows}x{cols}
{MAX}
{ADD}
ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[{rows}] reduce(x, ninf), dimensions={{1}}, to_apply=max
  mb = f32[{rows},{cols}] broadcast(m), dimensions={{0}}
  d = f32[{rows},{cols}] subtract(x, mb)
  e = f32[{rows},{cols}] exponential(d)
  zero = f32[] constant(0)
  s = f32[{rows}] reduce(e, zero), dimensions={{1}}, to_apply=add
  sb = f32[{rows},{cols}] broadcast(s), dimensions={{0}}
  ROOT r = f32[{rows},{cols}] divide(e, sb)
}}"""
    x = rand(rows, cols)

    def run():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def make_torch():
        tx = tt(x)
        return lambda: torch.softmax(tx, dim=1)

    return hlo, run, make_torch


def layer_norm(rows, cols):
    hlo = f"""HloModule layer_norm_{rows}x{cols}
{ADD}
ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  g = f32[{cols}] parameter(1)
  b = f32[{cols}] parameter(2)
  zero = f32[] constant(0)
  inv = f32[] constant({1.0 / cols!r})
  invr = f32[{rows}] broadcast(inv), dimensions={{}}
  s = f32[{rows}] reduce(x, zero), dimensions={{1}}, to_apply=add
  mean = f32[{rows}] multiply(s, invr)
  meanb = f32[{rows},{cols}] broadcast(mean), dimensions={{0}}
  d = f32[{rows},{cols}] subtract(x, meanb)
  d2 = f32[{rows},{cols}] multiply(d, d)
  s2 = f32[{rows}] reduce(d2, zero), dimensions={{1}}, to_apply=add
  var = f32[{rows}] multiply(s2, invr)
  eps = f32[] constant(1e-05)
  epsr = f32[{rows}] broadcast(eps), dimensions={{}}
  ve = f32[{rows}] add(var, epsr)
  r = f32[{rows}] rsqrt(ve)
  rb = f32[{rows},{cols}] broadcast(r), dimensions={{0}}
  n = f32[{rows},{cols}] multiply(d, rb)
  gb = f32[{rows},{cols}] broadcast(g), dimensions={{1}}
  bb = f32[{rows},{cols}] broadcast(b), dimensions={{1}}
  ng = f32[{rows},{cols}] multiply(n, gb)
  ROOT y = f32[{rows},{cols}] add(ng, bb)
}}"""
    x, g, b = rand(rows, cols), rand(cols), rand(cols)

    def run():
        d = x - x.mean(axis=1, keepdims=True)
        var = (d * d).mean(axis=1, keepdims=True)
        return d / np.sqrt(var + np.float32(1e-5)) * g + b

    def make_torch():
        tx, tg, tb = tt(x), tt(g), tt(b)
        return lambda: torch.nn.functional.layer_norm(tx, (cols,), tg, tb, 1e-5)

    return hlo, run, make_torch


def reduce_sum(rows, cols, axis):
    hlo = f"""HloModule reduce_{rows}x{cols}_axis{axis}
{ADD}
ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[{cols if axis == 0 else rows}] reduce(x, zero), dimensions={{{axis}}}, to_apply=add
}}"""
    x = rand(rows, cols)

    def make_torch():
        tx = tt(x)
        return lambda: tx.sum(dim=axis)

    return hlo, lambda: x.sum(axis=axis), make_torch


def dot(n):
    hlo = f"""HloModule dot_{n}
ENTRY main {{
  a = f32[{n},{n}] parameter(0)
  b = f32[{n},{n}] parameter(1)
  ROOT d = f32[{n},{n}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}"""
    a, b = rand(n, n), rand(n, n)

    def make_torch():
        ta, tb = tt(a), tt(b)
        return lambda: ta @ tb

    return hlo, lambda: a @ b, make_torch


def conv(h, c):
    hlo = f"""HloModule conv_{h}x{c}
ENTRY main {{
  x = f32[1,{h},{h},{c}] parameter(0)
  w = f32[3,3,{c},{c}] parameter(1)
  ROOT y = f32[1,{h},{h},{c}] convolution(x, w), window={{size=3x3 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f
}}"""
    x, w = rand(1, h, h, c), rand(3, 3, c, c)

    def run():
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        cols = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
        cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(h * h, 9 * c)
        return cols @ w.reshape(9 * c, c)

    def make_torch():
        # PyTorch convolves NCHW with OIHW kernels; the layout change is not timed.
        tx = tt(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
        tw = tt(np.ascontiguousarray(w.transpose(3, 2, 0, 1)))
        return lambda: torch.nn.functional.conv2d(tx, tw, padding=1)

    return hlo, run, make_torch


def mlp_step(batch, din, hidden, classes):
    """One SGD step of a two-layer MLP (tanh, softmax cross-entropy on one-hot labels)."""
    B, D, H, C = batch, din, hidden, classes
    lr = 0.1
    hlo = f"""HloModule mlp_train_step_{B}x{D}x{H}x{C}
{ADD}
{MAX}
ENTRY main {{
  x = f32[{B},{D}] parameter(0)
  t = f32[{B},{C}] parameter(1)
  w1 = f32[{D},{H}] parameter(2)
  b1 = f32[{H}] parameter(3)
  w2 = f32[{H},{C}] parameter(4)
  b2 = f32[{C}] parameter(5)
  zero = f32[] constant(0)
  xw = f32[{B},{H}] dot(x, w1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  b1b = f32[{B},{H}] broadcast(b1), dimensions={{1}}
  z = f32[{B},{H}] add(xw, b1b)
  h = f32[{B},{H}] tanh(z)
  hw = f32[{B},{C}] dot(h, w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  b2b = f32[{B},{C}] broadcast(b2), dimensions={{1}}
  logits = f32[{B},{C}] add(hw, b2b)
  ninf = f32[] constant(-inf)
  m = f32[{B}] reduce(logits, ninf), dimensions={{1}}, to_apply=max
  mb = f32[{B},{C}] broadcast(m), dimensions={{0}}
  sh = f32[{B},{C}] subtract(logits, mb)
  e = f32[{B},{C}] exponential(sh)
  se = f32[{B}] reduce(e, zero), dimensions={{1}}, to_apply=add
  lse = f32[{B}] log(se)
  lseb = f32[{B},{C}] broadcast(lse), dimensions={{0}}
  logp = f32[{B},{C}] subtract(sh, lseb)
  tl = f32[{B},{C}] multiply(t, logp)
  stl = f32[] reduce(tl, zero), dimensions={{0,1}}, to_apply=add
  ninvb = f32[] constant({-1.0 / B!r})
  loss = f32[] multiply(stl, ninvb)
  p = f32[{B},{C}] exponential(logp)
  pt = f32[{B},{C}] subtract(p, t)
  invb = f32[] constant({1.0 / B!r})
  invbb = f32[{B},{C}] broadcast(invb), dimensions={{}}
  dl = f32[{B},{C}] multiply(pt, invbb)
  dw2 = f32[{H},{C}] dot(h, dl), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}
  db2 = f32[{C}] reduce(dl, zero), dimensions={{0}}, to_apply=add
  dh = f32[{B},{H}] dot(dl, w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}
  hh = f32[{B},{H}] multiply(h, h)
  one = f32[] constant(1)
  oneb = f32[{B},{H}] broadcast(one), dimensions={{}}
  dt = f32[{B},{H}] subtract(oneb, hh)
  dz = f32[{B},{H}] multiply(dh, dt)
  dw1 = f32[{D},{H}] dot(x, dz), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}
  db1 = f32[{H}] reduce(dz, zero), dimensions={{0}}, to_apply=add
  lr = f32[] constant({lr})
  lr1 = f32[{D},{H}] broadcast(lr), dimensions={{}}
  lr2 = f32[{H}] broadcast(lr), dimensions={{}}
  lr3 = f32[{H},{C}] broadcast(lr), dimensions={{}}
  lr4 = f32[{C}] broadcast(lr), dimensions={{}}
  u1 = f32[{D},{H}] multiply(lr1, dw1)
  w1n = f32[{D},{H}] subtract(w1, u1)
  u2 = f32[{H}] multiply(lr2, db1)
  b1n = f32[{H}] subtract(b1, u2)
  u3 = f32[{H},{C}] multiply(lr3, dw2)
  w2n = f32[{H},{C}] subtract(w2, u3)
  u4 = f32[{C}] multiply(lr4, db2)
  b2n = f32[{C}] subtract(b2, u4)
  ROOT r = (f32[], f32[{D},{H}], f32[{H}], f32[{H},{C}], f32[{C}]) tuple(loss, w1n, b1n, w2n, b2n)
}}"""
    x = rand(B, D)
    t = np.eye(C, dtype=np.float32)[np.random.randint(0, C, B)]
    w1, b1 = (rand(D, H) - 0.5) * np.float32(0.1), np.zeros(H, np.float32)
    w2, b2 = (rand(H, C) - 0.5) * np.float32(0.1), np.zeros(C, np.float32)
    lr32 = np.float32(lr)

    def run():
        h = np.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        sh = logits - logits.max(axis=1, keepdims=True)
        logp = sh - np.log(np.exp(sh).sum(axis=1, keepdims=True))
        loss = -(t * logp).sum() / B
        dl = (np.exp(logp) - t) / np.float32(B)
        dw2, db2 = h.T @ dl, dl.sum(axis=0)
        dz = (dl @ w2.T) * (1 - h * h)
        dw1, db1 = x.T @ dz, dz.sum(axis=0)
        return loss, w1 - lr32 * dw1, b1 - lr32 * db1, w2 - lr32 * dw2, b2 - lr32 * db2

    def make_torch():
        tx, tt_ = tt(x), tt(t)
        params = [tt(v.copy()).requires_grad_() for v in (w1, b1, w2, b2)]

        def step():
            for p_ in params:
                p_.grad = None
            a1, c1, a2, c2 = params
            logits = torch.tanh(tx @ a1 + c1) @ a2 + c2
            loss = -(tt_ * torch.log_softmax(logits, dim=1)).sum() / B
            loss.backward()
            with torch.no_grad():
                return loss, [p_ - lr * p_.grad for p_ in params]

        return step

    return hlo, run, make_torch


CASES = {
    "elementwise_1M": lambda: elementwise(1 << 20),
    "elementwise_16M": lambda: elementwise(1 << 24),
    "softmax_1024x1024": lambda: softmax(1024, 1024),
    "layer_norm_4096x768": lambda: layer_norm(4096, 768),
    "reduce_rows_4096x1024": lambda: reduce_sum(4096, 1024, 1),
    "reduce_cols_4096x1024": lambda: reduce_sum(4096, 1024, 0),
    "dot_256": lambda: dot(256),
    "dot_1024": lambda: dot(1024),
    "conv_56x64": lambda: conv(56, 64),
    "mlp_step_256x784x256x10": lambda: mlp_step(256, 784, 256, 10),
}


def cxla_run_time(cxla, path, repeat, timeout=None):
    """The median run time of `cxla run --repeat N path`, in seconds."""
    r = subprocess.run([cxla, "run", "--repeat", str(repeat), path], capture_output=True,
                       text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed")
    m = re.search(r"^run\s+median\s+([0-9.]+) ms", r.stderr, re.M)
    if not m:
        raise RuntimeError("no run time in cxla's output: %r" % r.stderr[-200:])
    return float(m.group(1)) / 1e3


def time_cxla(cxla, hlo, repeat):
    with tempfile.NamedTemporaryFile("w", suffix=".hlo", delete=False) as f:
        f.write(hlo)
        path = f.name
    try:
        return cxla_run_time(cxla, path, repeat)
    finally:
        os.unlink(path)


def best_time(fn, repeat):
    fn()  # warm-up (first-call allocations, PyTorch's lazy initialization)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


ROW = "%-38s %12s %12s %14s %9s %11s"


def fmt_time(t):
    return "%.6f" % t if isinstance(t, float) else t


def fmt_ratio(a, b):
    return "%.2f" % (a / b) if isinstance(a, float) and isinstance(b, float) else "-"


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--cxla", default=os.path.join(root, "build", "cxla"))
    p.add_argument("--threads", type=int, default=1, help="threads for NumPy's BLAS and PyTorch")
    p.add_argument("--repeat", type=int, default=5, help="runs per case (best or median)")
    p.add_argument("--shared", default=os.environ.get("CXLA_SHARED_DIR")
                   or os.path.join(os.path.dirname(root), "shared"),
                   help="the shared material, whose models/ are timed on cxla")
    p.add_argument("--models-repeat", type=int, default=1, help="cxla runs per model")
    p.add_argument("--model-timeout", type=float, default=120,
                   help="seconds before a model's runs are given up")
    p.add_argument("--no-models", action="store_true", help="skip ../shared/models/")
    p.add_argument("cases", nargs="*", help="cases or model names (default: all); cases: "
                   + " ".join(CASES))
    args = p.parse_args()
    if not os.path.exists(args.cxla):
        sys.exit("cxla not found at %s: run make first, or pass --cxla" % args.cxla)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    global np, torch
    import numpy

    np = numpy
    np.random.seed(0)
    try:
        import torch as torch_module

        torch = torch_module
        torch.set_num_threads(args.threads)
        torch_note = "torch %s, %d thread(s)" % (torch.__version__, torch.get_num_threads())
    except ImportError:
        torch_note = "torch: not installed (make bench-deps installs Debian's python3-torch)"

    models_dir = os.path.join(args.shared, "models")
    models = sorted(glob.glob(os.path.join(models_dir, "*.hlo")))
    model_names = [os.path.basename(m)[:-4] for m in models]
    wanted = args.cases or list(CASES) + (model_names if not args.no_models else [])
    for name in wanted:
        if name not in CASES and name not in model_names:
            sys.exit("unknown case %r (cases: %s; models: %s)"
                     % (name, " ".join(CASES), " ".join(model_names) or "none found"))

    print("numpy %s, %s; cxla %s, run median of %d" % (np.__version__, torch_note, args.cxla,
                                                       args.repeat))
    print(ROW % ("case", "cxla (s)", "numpy (s)", "torch (s)", "cxla/np", "cxla/torch"))
    for name in wanted:
        if name not in CASES:
            continue
        hlo, np_fn, make_torch = CASES[name]()
        t_np = best_time(np_fn, args.repeat)
        t_torch = best_time(make_torch(), args.repeat) if torch else "not installed"
        t_cx = time_cxla(args.cxla, hlo, args.repeat)
        print(ROW % (name, fmt_time(t_cx), fmt_time(t_np), fmt_time(t_torch),
                     fmt_ratio(t_cx, t_np), fmt_ratio(t_cx, t_torch)), flush=True)

    if args.no_models or (args.cases and not any(n in model_names for n in args.cases)):
        return
    if not models:
        print("models: skipped, %s not found" % models_dir)
        return
    print("programs of %s, on cxla alone (run median of %d):" % (models_dir, args.models_repeat))
    for path, name in zip(models, model_names):
        if name not in wanted:
            continue
        try:
            t = fmt_time(cxla_run_time(args.cxla, path, args.models_repeat, args.model_timeout))
        except subprocess.TimeoutExpired:
            t = "> %ds" % args.model_timeout
        except RuntimeError as e:
            t = "error"
            print("  %s: %s" % (name, e), file=sys.stderr)
        print(ROW % (name, t, "-", "-", "-", "-"), flush=True)


if __name__ == "__main__":
    main()
