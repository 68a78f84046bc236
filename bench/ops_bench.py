#!/usr/bin/env python3
"""Times operations, the anchor workloads and the shared programs on every cxla backend next
to NumPy and PyTorch, in the same run, against this machine's floors, and prints tables.

    /usr/bin/python3 bench/ops_bench.py [--cxla PATH] [--backends LIST] [--threads LIST]
                                        [--repeat N] [--case-timeout S] [--markdown]
                                        [--openblas-coretype NAME] [--small]
                                        [--shared DIR] [--no-models] [case|group|model ...]

Each case is an HLO module (written to a temporary file) and the same computation in
NumPy and in PyTorch, on arrays of the same shapes. cxla runs it with `cxla run --backend B
--repeat N+1` (generated inputs; the best run time, parse and compile excluded; the first,
cold run is the warm-up) for every backend B of --backends (default: every backend the
binary has, as `cxla run --backend` lists them); a run still going after --case-timeout
seconds is shown as such. NumPy and
PyTorch run it N times after a warm-up run, best time kept: the same statistic on every
side (the shared programs report cxla's median instead).

Cases come in two groups (name a group to run it alone): "ops", elementwise chains,
softmax, layer norm, reductions, dot, convolution and one training step of a two-layer
MLP; "anchors", the anchor workloads of the cpu backend's issue (GELU-tanh over 16M f32,
softmax over 4096x4096 rows, layer norm 8192x1024, a 64M-element sum, row and column
sums, matmul 2048^3, convolution N8 C64 56x56 3x3, transpose copy 8192x8192, an MLP
training step 784-1024-1024-10, max pool 3x3 stride 2, 100 chained tiny adds).

Floors: bench_floors (built next to cxla) measures this machine's memory bandwidth (triad,
and a read-only stream) and f32 FMA peak in the same run; a case's floor is the bytes it
must read and write over the triad bandwidth (over the read-only bandwidth for the pure
reductions: sums to a scalar, row and column sums) or its flops over the FMA peak,
whichever is larger, at the first thread count of --threads. The memory figures are
measured again after every case (bench_floors --what mem; not with --floors-once): a
case's floor is the best of the figures just before and after it. Ratios: backend / floor,
backend / PyTorch, backend / NumPy (above 1: cxla is slower). The tiny-adds case is
reported in microseconds per source operation and has no floor.

Threads: --threads LIST (default 2,1). The first count is what NumPy's BLAS, PyTorch and
cxla (CXLA_NUM_THREADS) use for the main columns and the ratios; each further count adds
NumPy and PyTorch columns beside them (single-thread figures by default). NumPy's own
elementwise loops always use one thread.

Then every program of ../shared/models/ (--shared, or $CXLA_SHARED_DIR) runs on every
backend: run time (median of --models-repeat), and compile time (interpreter: the one
process; other backends: cold, with CXLA_CACHE_DIR an empty temporary folder, and cached,
a second process on the same folder); the first-run latency of `cxla run` on a small
module closes the report.

--markdown prints everything as Markdown for docs/performance.md, headed by the commit and
the CPU model. PyTorch is optional (Debian's python3-torch: `make bench-deps`); without it
its columns say "not installed". The machines are shared and noisy: compare ratios from
one run, not times across runs.
"""
import argparse
import ctypes
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

np = None  # imported in main(), after the BLAS thread and core-type settings
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
F32 = 4  # bytes per element


def rand(*shape):
    return np.random.rand(*shape).astype(np.float32)


def tt(a):
    """A PyTorch tensor sharing |a|'s memory."""
    return torch.from_numpy(a)


class Work:
    """One case, made: the HLO text, its inputs in parameter order (NumPy arrays, for
    --check), the NumPy function, a function making the PyTorch function, and what bounds
    it from below: the bytes it must read and write and its flops. |ops| > 0 reports times
    per source operation (in microseconds). |make_torch_out|, where PyTorch has one, makes
    the same PyTorch function writing into a tensor allocated once (out=, copy_), as
    `cxla run --repeat` writes into result buffers allocated once; None where the
    operation takes no out= (layer_norm, conv2d, max_pool2d, the MLP step). |reads|: a
    pure reduction, whose bytes are nearly all read (a few results), so its memory floor
    is the read-only stream's."""

    def __init__(self, hlo, inputs, numpy_fn, make_torch, bytes_moved=0, flops=0, ops=0,
                 make_torch_out=None, reads=False):
        self.hlo, self.inputs, self.numpy_fn = hlo, inputs, numpy_fn
        self.make_torch, self.make_torch_out = make_torch, make_torch_out
        self.bytes, self.flops, self.ops = bytes_moved, flops, ops
        self.reads = reads


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

    def make_torch_out():
        tx, ty, o = tt(x), tt(y), torch.empty(n)

        def run():
            torch.mul(tx, ty, out=o)
            o.add_(tx)
            torch.exp(o, out=o)
            return torch.tanh(o, out=o)
        return run

    return Work(hlo, [x, y], lambda: np.tanh(np.exp(x * y + x)), make_torch, 3 * F32 * n,
                make_torch_out=make_torch_out)


def gelu_tanh(n):
    """GELU with the tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    def const(name, value):
        return (f"  {name}s = f32[] constant({value!r})\n"
                f"  {name} = f32[{n}] broadcast({name}s), dimensions={{}}\n")

    hlo = (f"HloModule gelu_tanh_{n}\nENTRY main {{\n  x = f32[{n}] parameter(0)\n"
           + const("half", 0.5) + const("one", 1.0) + const("k", 0.044715)
           + const("c", 0.7978845608028654)
           + f"""  x2 = f32[{n}] multiply(x, x)
  x3 = f32[{n}] multiply(x2, x)
  kx3 = f32[{n}] multiply(k, x3)
  inner = f32[{n}] add(x, kx3)
  s = f32[{n}] multiply(c, inner)
  th = f32[{n}] tanh(s)
  p = f32[{n}] add(one, th)
  hx = f32[{n}] multiply(half, x)
  ROOT y = f32[{n}] multiply(hx, p)
}}""")
    x = rand(n)
    half, one = np.float32(0.5), np.float32(1)
    k, c = np.float32(0.044715), np.float32(0.7978845608028654)

    def make_torch():
        tx = tt(x)
        return lambda: torch.nn.functional.gelu(tx, approximate="tanh")

    def make_torch_out():
        tx, o = tt(x), torch.empty(n)
        return lambda: torch.nn.functional.gelu(tx, approximate="tanh", out=o)

    return Work(hlo, [x], lambda: half * x * (one + np.tanh(c * (x + k * x * x * x))), make_torch,
                2 * F32 * n, make_torch_out=make_torch_out)


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

    def make_torch_out():
        tx, o = tt(x), torch.empty(rows, cols)
        return lambda: torch.softmax(tx, 1, out=o)

    return Work(hlo, [x], run, make_torch, 2 * F32 * rows * cols, make_torch_out=make_torch_out)


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

    return Work(hlo, [x, g, b], run, make_torch, F32 * (2 * rows * cols + 2 * cols))


def reduce_sum(rows, cols, axis):
    out = cols if axis == 0 else rows
    hlo = f"""HloModule reduce_{rows}x{cols}_axis{axis}
{ADD}
ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[{out}] reduce(x, zero), dimensions={{{axis}}}, to_apply=add
}}"""
    x = rand(rows, cols)

    def make_torch():
        tx = tt(x)
        return lambda: tx.sum(dim=axis)

    def make_torch_out():
        tx, o = tt(x), torch.empty(out)
        return lambda: torch.sum(tx, dim=axis, out=o)

    return Work(hlo, [x], lambda: x.sum(axis=axis), make_torch, F32 * (rows * cols + out),
                make_torch_out=make_torch_out, reads=True)


def sum_all(n):
    hlo = f"""HloModule sum_{n}
{ADD}
ENTRY main {{
  x = f32[{n}] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(x, zero), dimensions={{0}}, to_apply=add
}}"""
    x = rand(n)

    def make_torch():
        tx = tt(x)
        return lambda: tx.sum()

    def make_torch_out():
        tx, o = tt(x), torch.empty(())
        return lambda: torch.sum(tx, dim=0, out=o)

    return Work(hlo, [x], lambda: x.sum(), make_torch, F32 * n, make_torch_out=make_torch_out,
                reads=True)


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

    def make_torch_out():
        ta, tb, o = tt(a), tt(b), torch.empty(n, n)
        return lambda: torch.matmul(ta, tb, out=o)

    return Work(hlo, [a, b], lambda: a @ b, make_torch, 3 * F32 * n * n, 2 * n**3,
                make_torch_out=make_torch_out)


def conv(h, c, batch=1):
    """A 3x3 convolution, stride 1, padding 1, |c| features in and out, NHWC for cxla and
    NumPy (im2col and one matrix product), NCHW for PyTorch."""
    hlo = f"""HloModule conv_{batch}x{h}x{c}
ENTRY main {{
  x = f32[{batch},{h},{h},{c}] parameter(0)
  w = f32[3,3,{c},{c}] parameter(1)
  ROOT y = f32[{batch},{h},{h},{c}] convolution(x, w), window={{size=3x3 pad=1_1x1_1}}, dim_labels=b01f_01io->b01f
}}"""
    x, w = rand(batch, h, h, c), rand(3, 3, c, c)

    def run():
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        cols = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
        cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(batch * h * h, 9 * c)
        return (cols @ w.reshape(9 * c, c)).reshape(batch, h, h, c)

    def make_torch():
        # PyTorch convolves NCHW with OIHW kernels; the layout change is not timed.
        tx = tt(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
        tw = tt(np.ascontiguousarray(w.transpose(3, 2, 0, 1)))
        return lambda: torch.nn.functional.conv2d(tx, tw, padding=1)

    return Work(hlo, [x, w], run, make_torch, F32 * (2 * batch * h * h * c + 9 * c * c),
                2 * batch * h * h * c * c * 9)


def transpose(n):
    hlo = f"""HloModule transpose_{n}
ENTRY main {{
  x = f32[{n},{n}] parameter(0)
  ROOT t = f32[{n},{n}] transpose(x), dimensions={{1,0}}
}}"""
    x = rand(n, n)

    def make_torch():
        tx = tt(x)
        return lambda: tx.t().contiguous()

    def make_torch_out():
        tx, o = tt(x), torch.empty(n, n)
        return lambda: o.copy_(tx.t())

    return Work(hlo, [x], lambda: np.ascontiguousarray(x.T), make_torch, 2 * F32 * n * n,
                make_torch_out=make_torch_out)


def max_pool(batch, c, h):
    """Max pool 3x3, stride 2, padding 1 (as ResNet's stem), NCHW."""
    o = (h - 1) // 2 + 1
    hlo = f"""HloModule max_pool_{batch}x{c}x{h}x{h}
{MAX}
ENTRY main {{
  x = f32[{batch},{c},{h},{h}] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT y = f32[{batch},{c},{o},{o}] reduce-window(x, ninf), window={{size=1x1x3x3 stride=1x1x2x2 pad=0_0x0_0x1_1x1_1}}, to_apply=max
}}"""
    x = rand(batch, c, h, h)

    def run():
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
        y = xp[:, :, 0:2 * o:2, 0:2 * o:2].copy()
        for i in range(3):
            for j in range(3):
                if i or j:
                    np.maximum(y, xp[:, :, i:i + 2 * o:2, j:j + 2 * o:2], out=y)
        return y

    def make_torch():
        tx = tt(x)
        return lambda: torch.nn.functional.max_pool2d(tx, 3, 2, padding=1)

    return Work(hlo, [x], run, make_torch, F32 * batch * c * (h * h + o * o))


def tiny_adds(count, n=16):
    """|count| chained adds on f32[n]: what one operation costs beyond its arithmetic."""
    lines = [f"HloModule tiny_adds_{count}", "ENTRY main {", f"  x = f32[{n}] parameter(0)",
             f"  a0 = f32[{n}] add(x, x)"]
    for i in range(1, count):
        lines.append(f"  {'ROOT ' if i == count - 1 else ''}a{i} = f32[{n}] add(a{i - 1}, x)")
    hlo = "\n".join(lines) + "\n}"
    x = rand(n)

    def run():
        a = x + x
        for _ in range(count - 1):
            a = a + x
        return a

    def make_torch():
        tx = tt(x)

        def step():
            a = tx + tx
            for _ in range(count - 1):
                a = a + tx
            return a

        return step

    def make_torch_out():
        tx, o = tt(x), torch.empty(n)

        def step():
            torch.add(tx, tx, out=o)
            for _ in range(count - 1):
                torch.add(o, tx, out=o)
            return o

        return step

    return Work(hlo, [x], run, make_torch, ops=count, make_torch_out=make_torch_out)


def mlp_step(batch, *widths):
    """One SGD step of an MLP with tanh hidden layers, softmax cross-entropy on one-hot
    labels: forward, backward (by hand in HLO and NumPy, autograd in PyTorch), update.
    |widths| = input, hidden..., classes."""
    B, L, lr = batch, len(widths) - 1, 0.1
    D, C = widths[0], widths[-1]
    shapes = [(widths[i], widths[i + 1]) for i in range(L)]
    name = "x".join(str(v) for v in (B,) + widths)
    out = [f"HloModule mlp_train_step_{name}", ADD, MAX, "ENTRY main {",
           f"  x = f32[{B},{D}] parameter(0)", f"  t = f32[{B},{C}] parameter(1)"]
    for i, (din, dout) in enumerate(shapes):
        out += [f"  w{i} = f32[{din},{dout}] parameter({2 + 2 * i})",
                f"  b{i} = f32[{dout}] parameter({3 + 2 * i})"]
    out += ["  zero = f32[] constant(0)", "  one = f32[] constant(1)"]
    h = ["x"]  # h[i]: the input of layer i
    for i, (din, dout) in enumerate(shapes):
        out += [f"  xw{i} = f32[{B},{dout}] dot({h[i]}, w{i}), lhs_contracting_dims={{1}}, "
                "rhs_contracting_dims={0}",
                f"  bb{i} = f32[{B},{dout}] broadcast(b{i}), dimensions={{1}}",
                f"  z{i} = f32[{B},{dout}] add(xw{i}, bb{i})"]
        if i < L - 1:
            out.append(f"  h{i + 1} = f32[{B},{dout}] tanh(z{i})")
            h.append(f"h{i + 1}")
    out.append(f"""  ninf = f32[] constant(-inf)
  m = f32[{B}] reduce(z{L - 1}, ninf), dimensions={{1}}, to_apply=max
  mb = f32[{B},{C}] broadcast(m), dimensions={{0}}
  sh = f32[{B},{C}] subtract(z{L - 1}, mb)
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
  d{L - 1} = f32[{B},{C}] multiply(pt, invbb)""")
    for i in reversed(range(L)):
        din, dout = shapes[i]
        out += [f"  dw{i} = f32[{din},{dout}] dot({h[i]}, d{i}), lhs_contracting_dims={{0}}, "
                "rhs_contracting_dims={0}",
                f"  db{i} = f32[{dout}] reduce(d{i}, zero), dimensions={{0}}, to_apply=add"]
        if i > 0:
            out += [f"  dh{i} = f32[{B},{din}] dot(d{i}, w{i}), lhs_contracting_dims={{1}}, "
                    "rhs_contracting_dims={1}",
                    f"  hh{i} = f32[{B},{din}] multiply({h[i]}, {h[i]})",
                    f"  oneb{i} = f32[{B},{din}] broadcast(one), dimensions={{}}",
                    f"  dt{i} = f32[{B},{din}] subtract(oneb{i}, hh{i})",
                    f"  d{i - 1} = f32[{B},{din}] multiply(dh{i}, dt{i})"]
    out.append(f"  lr = f32[] constant({lr})")
    results, types = ["loss"], ["f32[]"]
    for i, (din, dout) in enumerate(shapes):
        out += [f"  lrw{i} = f32[{din},{dout}] broadcast(lr), dimensions={{}}",
                f"  uw{i} = f32[{din},{dout}] multiply(lrw{i}, dw{i})",
                f"  w{i}n = f32[{din},{dout}] subtract(w{i}, uw{i})",
                f"  lrb{i} = f32[{dout}] broadcast(lr), dimensions={{}}",
                f"  ub{i} = f32[{dout}] multiply(lrb{i}, db{i})",
                f"  b{i}n = f32[{dout}] subtract(b{i}, ub{i})"]
        results += [f"w{i}n", f"b{i}n"]
        types += [f"f32[{din},{dout}]", f"f32[{dout}]"]
    out += [f"  ROOT r = ({', '.join(types)}) tuple({', '.join(results)})", "}"]
    hlo = "\n".join(out)

    x = rand(B, D)
    t = np.eye(C, dtype=np.float32)[np.random.randint(0, C, B)]
    ws = [(rand(din, dout) - 0.5) * np.float32(0.1) for din, dout in shapes]
    bs = [np.zeros(dout, np.float32) for _, dout in shapes]
    lr32 = np.float32(lr)

    def run():
        hs = [x]
        for i in range(L):
            z = hs[i] @ ws[i] + bs[i]
            if i < L - 1:
                hs.append(np.tanh(z))
        sh = z - z.max(axis=1, keepdims=True)
        logp = sh - np.log(np.exp(sh).sum(axis=1, keepdims=True))
        loss = -(t * logp).sum() / B
        d = (np.exp(logp) - t) / np.float32(B)
        new = [None] * (2 * L)
        for i in reversed(range(L)):
            new[2 * i] = ws[i] - lr32 * (hs[i].T @ d)
            new[2 * i + 1] = bs[i] - lr32 * d.sum(axis=0)
            if i > 0:
                d = (d @ ws[i].T) * (1 - hs[i] * hs[i])
        return loss, new

    def make_torch():
        tx, tt_ = tt(x), tt(t)
        params = []
        for w, b in zip(ws, bs):
            params += [tt(w.copy()).requires_grad_(), tt(b.copy()).requires_grad_()]

        def step():
            for p_ in params:
                p_.grad = None
            a = tx
            for i in range(L):
                a = a @ params[2 * i] + params[2 * i + 1]
                if i < L - 1:
                    a = torch.tanh(a)
            loss = -(tt_ * torch.log_softmax(a, dim=1)).sum() / B
            loss.backward()
            with torch.no_grad():
                return loss, [p_ - lr * p_.grad for p_ in params]

        return step

    weights = sum(din * dout + dout for din, dout in shapes)
    forward = sum(2 * B * din * dout for din, dout in shapes)
    # Backward: the weight gradients cost a forward; the activation gradients another,
    # less the first layer's (its input needs no gradient).
    flops = 2 * forward + forward - 2 * B * D * widths[1]
    inputs = [x, t] + [v for pair in zip(ws, bs) for v in pair]
    return Work(hlo, inputs, run, make_torch, F32 * (B * D + B * C + 2 * weights), flops)


def generated_module(count):
    """A module of |count| instructions in its entry (elementwise chains with row
    reductions and broadcasts between them, the mix fusion sees in models), for the
    compile-time goal: 1,000 instructions compile cold in under 2 s, load cached in 20 ms."""
    head = [f"HloModule generated_{count}_instructions", ADD, "ENTRY main {",
            "  x = f32[64,64] parameter(0)", "  y = f32[64,64] parameter(1)",
            "  zero = f32[] constant(0)"]
    body, prev = [], "x"
    while len(body) < count - 3:  # x, y and zero are three
        i = len(body)
        body += [f"a{i} = f32[64,64] add({prev}, x)",
                 f"m{i} = f32[64,64] multiply(a{i}, y)",
                 f"t{i} = f32[64,64] tanh(m{i})",
                 f"s{i} = f32[64] reduce(t{i}, zero), dimensions={{1}}, to_apply=add",
                 f"b{i} = f32[64,64] broadcast(s{i}), dimensions={{0}}",
                 f"d{i} = f32[64,64] subtract(t{i}, b{i})"]
        prev = f"d{i}"
    body = body[:count - 3]
    lines = ["  " + line for line in body[:-1]] + ["  ROOT " + body[-1], "}"]
    return "\n".join(head + lines)


# name: (group, the case at full size, the case at --small size). The names keep the full
# sizes so that --small tables line up with full ones; --small is for checking the script.
CASES = {
    "elementwise_1M": ("ops", lambda: elementwise(1 << 20), lambda: elementwise(1 << 12)),
    "elementwise_16M": ("ops", lambda: elementwise(1 << 24), lambda: elementwise(1 << 14)),
    "softmax_1024x1024": ("ops", lambda: softmax(1024, 1024), lambda: softmax(64, 64)),
    "layer_norm_4096x768": ("ops", lambda: layer_norm(4096, 768), lambda: layer_norm(64, 48)),
    "reduce_rows_4096x1024": ("ops", lambda: reduce_sum(4096, 1024, 1),
                              lambda: reduce_sum(64, 32, 1)),
    "reduce_cols_4096x1024": ("ops", lambda: reduce_sum(4096, 1024, 0),
                              lambda: reduce_sum(64, 32, 0)),
    "dot_256": ("ops", lambda: dot(256), lambda: dot(32)),
    "dot_1024": ("ops", lambda: dot(1024), lambda: dot(64)),
    "conv_56x64": ("ops", lambda: conv(56, 64), lambda: conv(8, 8)),
    "mlp_step_256x784x256x10": ("ops", lambda: mlp_step(256, 784, 256, 10),
                                lambda: mlp_step(16, 32, 16, 10)),
    "gelu_tanh_16M": ("anchors", lambda: gelu_tanh(1 << 24), lambda: gelu_tanh(1 << 14)),
    "softmax_4096x4096": ("anchors", lambda: softmax(4096, 4096), lambda: softmax(128, 128)),
    "layer_norm_8192x1024": ("anchors", lambda: layer_norm(8192, 1024),
                             lambda: layer_norm(128, 64)),
    "sum_64M": ("anchors", lambda: sum_all(1 << 26), lambda: sum_all(1 << 14)),
    "reduce_rows_8192x4096": ("anchors", lambda: reduce_sum(8192, 4096, 1),
                              lambda: reduce_sum(128, 64, 1)),
    "reduce_cols_8192x4096": ("anchors", lambda: reduce_sum(8192, 4096, 0),
                              lambda: reduce_sum(128, 64, 0)),
    "matmul_2048": ("anchors", lambda: dot(2048), lambda: dot(96)),
    "conv_8x56x56x64_3x3": ("anchors", lambda: conv(56, 64, 8), lambda: conv(8, 8, 2)),
    "transpose_8192x8192": ("anchors", lambda: transpose(8192), lambda: transpose(128)),
    "mlp_step_256x784x1024x1024x10": ("anchors", lambda: mlp_step(256, 784, 1024, 1024, 10),
                                      lambda: mlp_step(16, 32, 24, 24, 10)),
    "max_pool_8x64x112x112": ("anchors", lambda: max_pool(8, 64, 112),
                              lambda: max_pool(2, 4, 16)),
    "tiny_adds_100": ("anchors", lambda: tiny_adds(100), lambda: tiny_adds(100)),
}
GROUPS = sorted({group for group, _, _ in CASES.values()})

# ---- running cxla ------------------------------------------------------------------------


class CxlaFailed(Exception):
    pass


def cxla_env(threads, cache_dir=None):
    env = dict(os.environ)
    env["CXLA_NUM_THREADS"] = str(threads)
    if cache_dir:
        env["CXLA_CACHE_DIR"] = cache_dir
    return env


def cxla_run(cxla, backend, path, repeat, timeout, env):
    """Runs `cxla run --backend B --repeat N path` and returns its phase medians in
    seconds ({"compile": s, "run": s}, and the run's minimum as "run_min") and the
    process's wall time. Raises
    subprocess.TimeoutExpired or CxlaFailed."""
    t0 = time.perf_counter()
    r = subprocess.run([cxla, "run", "--backend", backend, "--repeat", str(repeat), path],
                       capture_output=True, text=True, timeout=timeout, env=env)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        raise CxlaFailed(lines[-1] if lines else "exit status %d" % r.returncode)
    phases = {}
    for name, value in re.findall(r"^(\w+)\s+median\s+([0-9.]+) ms", r.stderr, re.M):
        phases[name] = float(value) / 1e3
    m = re.search(r"^run\s+median\s+[0-9.]+ ms\s+min\s+([0-9.]+) ms", r.stderr, re.M)
    if m:
        phases["run_min"] = float(m.group(1)) / 1e3
    if "run" not in phases:
        raise CxlaFailed("no run time in cxla's output: %r" % r.stderr[-200:])
    return phases, wall


def cxla_backends(cxla):
    """The backends the binary has, as `cxla run --backend` lists them for a bad name."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.hlo")
        with open(path, "w") as f:
            f.write("HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0)\n}\n")
        r = subprocess.run([cxla, "run", "--backend", "?", path], capture_output=True,
                           text=True)
    m = re.search(r"available: ([^)]*)\)", r.stderr)
    if not m:
        sys.exit("cannot read the backend list from %s: %r" % (cxla, r.stderr.strip()))
    return [b.strip() for b in m.group(1).split(",") if b.strip()]


def write_temp(hlo):
    with tempfile.NamedTemporaryFile("w", suffix=".hlo", delete=False) as f:
        f.write(hlo)
        return f.name


# ---- the peers: NumPy and PyTorch ---------------------------------------------------------


def best_time(fn, repeat, budget):
    """The best of |repeat| timed runs after a warm-up (first-call allocations, PyTorch's
    lazy initialization). A warm-up over a second counts as a run (warm-up effects are then
    noise), and runs stop once |budget| seconds are spent, so that a slow peer (a reference
    BLAS on a 2048 matrix product) does not take minutes."""
    t = time.perf_counter()
    fn()
    first = time.perf_counter() - t
    best = first if first > 1.0 else float("inf")
    spent = first
    for _ in range(repeat):
        if best < float("inf") and spent > budget:
            break
        t = time.perf_counter()
        fn()
        d = time.perf_counter() - t
        best, spent = min(best, d), spent + d
    return best


class Blas:
    """NumPy's BLAS: which library is loaded, which OpenBLAS kernel it runs, and how to
    set its thread count (threadpoolctl when installed, else OpenBLAS's own call)."""

    def __init__(self):
        self.libs = loaded_libraries(r"blas|lapack|mkl|dnnl|gomp|iomp|sleef")
        # OpenBLAS is whichever loaded library exports its calls: Debian installs it as
        # .../openblas-pthread/libblas.so.3 behind the libblas.so.3 alternative. Several
        # (its libblas and liblapack) may answer for the same core: keep one per config.
        self.openblas, configs = [], set()
        for path in self.libs:
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            if hasattr(lib, "openblas_get_config"):
                lib.openblas_get_config.restype = ctypes.c_char_p
                config = lib.openblas_get_config()
                if config not in configs:
                    configs.add(config)
                    self.openblas.append(lib)
        try:
            import threadpoolctl

            self.threadpoolctl = threadpoolctl
        except ImportError:
            self.threadpoolctl = None
        self.limit = None

    def set_threads(self, n):
        if self.threadpoolctl:
            self.limit = self.threadpoolctl.threadpool_limits(limits=n, user_api="blas")
        for lib in self.openblas:
            fn = getattr(lib, "openblas_set_num_threads", None)
            if fn:
                fn(ctypes.c_int(n))

    def coretypes(self):
        """The OpenBLAS core types in use (e.g. SkylakeX, Haswell, Prescott)."""
        names = []
        for lib in self.openblas:
            fn = getattr(lib, "openblas_get_corename", None)
            if fn:
                fn.restype = ctypes.c_char_p
                names.append(fn().decode())
        return names

    def describe(self):
        lines = []
        if self.threadpoolctl:
            for info in self.threadpoolctl.threadpool_info():
                lines.append("threadpoolctl: %s %s %s, architecture %s, %s threads" % (
                    info.get("internal_api"), info.get("version"), info.get("filepath"),
                    info.get("architecture"), info.get("num_threads")))
        for lib in self.openblas:
            fn = getattr(lib, "openblas_get_config", None)
            if fn:
                fn.restype = ctypes.c_char_p
                lines.append("OpenBLAS config: %s" % fn().decode())
        cores = self.coretypes()
        env = ", ".join("%s=%s" % (v, os.environ[v]) for v in
                        ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if v in os.environ)
        if cores:
            lines.append("OpenBLAS kernel in use: %s (%s)" % (", ".join(cores),
                                                              env or "chosen by OpenBLAS"))
            if cpu_has("avx512f") and not any(re.match(r"(?i)skylakex|cooperlake|sapphire",
                                                       c) for c in cores):
                lines.append("warning: this CPU has AVX-512 but OpenBLAS runs its %s kernels; "
                             "--openblas-coretype SkylakeX selects the AVX-512 ones"
                             % ", ".join(cores))
        elif not self.openblas:
            lines.append("no OpenBLAS loaded: the BLAS of NumPy (and of PyTorch when its "
                         "BLAS_INFO is generic) is %s (a reference BLAS runs one thread, "
                         "unblocked)" % (", ".join(p for p in self.libs if "blas" in p)
                                                 or "unknown"))
        return lines


def loaded_libraries(pattern):
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "/" in line}
    except OSError:
        return []
    return sorted(p for p in paths if re.search(pattern, os.path.basename(p)))


def torch_describe():
    if not torch:
        return []
    config = torch.__config__.show()
    keep = [line.strip().lstrip("- ") for line in config.splitlines()
            if re.search(r"CPU capability|MKL-DNN|oneDNN|OpenMP", line)]
    blas = re.search(r"BLAS_INFO=(\w+)", config)
    lines = ["torch %s: %s; BLAS_INFO=%s; mkldnn %s" % (
        torch.__version__, "; ".join(keep), blas.group(1) if blas else "?",
        "enabled" if torch.backends.mkldnn.is_available() else "not available")]
    return lines


# ---- the machine ------------------------------------------------------------------------


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def cpu_has(flag):
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return flag in line.split()
    except OSError:
        pass
    return False


def commit(root):
    def git(*a):
        r = subprocess.run(["git", "-C", root] + list(a), capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None

    head = git("rev-parse", "--short=12", "HEAD")
    if not head:
        return "unknown commit"
    dirty = subprocess.run(["git", "-C", root, "diff", "--quiet", "HEAD"]).returncode != 0
    return head + (" (with uncommitted changes)" if dirty else "")


def measure_floors(path, threads, small, what="all", reps=None):
    """bench_floors' figures ({"triad_GBps_2t": x, ...}), or {} with a note on stderr.
    |what|: "all", "mem" (copy, triad, read) or "fma"; |reps|: its --reps (default 8)."""
    if not os.path.exists(path):
        print("note: %s not found (make builds it): no floors" % path, file=sys.stderr)
        return {}
    cmd = [path, "--threads", ",".join(str(t) for t in sorted(set(threads))), "--what", what]
    if small:
        cmd += ["--mb", "32", "--reps", "2"]
    elif reps:
        cmd += ["--reps", str(reps)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("note: %s failed: %s" % (path, r.stderr.strip()), file=sys.stderr)
        return {}
    floors = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and not line.startswith("#"):
            floors[parts[0]] = float(parts[1])
    return floors


class Floors:
    """The machine's floors through a session. The memory figures of the shared machines
    move between minutes (copy 41 then 69 GB/s five minutes apart on the 2-core EPYC), so
    bench_floors runs again (memory only, best of FLOOR_REPS) after every case: a case's
    floor is the best figure of the measurements just before and just after it (the FMA
    peak, which holds still, from the first), and the report prints the figures around each
    case and their spread over the session."""

    FLOOR_REPS = 3

    def __init__(self, path, threads, small, repeat):
        self.path, self.threads, self.small, self.repeat = path, threads, small, repeat
        self.first = measure_floors(path, threads, small)
        self.samples = [self.first] if self.first else []

    def again(self):
        """Measures the memory floors once more at the first thread count (when repeating)."""
        if not self.first or not self.repeat:
            return
        f = measure_floors(self.path, self.threads[:1], self.small, "mem", self.FLOOR_REPS)
        if f:
            self.samples.append(f)

    def around(self, since):
        """The floors for a case measured between samples[since] and the last sample: each
        memory figure the best of those, the rest from the first measurement; and the
        figures themselves ({name: [values]})."""
        near = self.samples[since:] or self.samples[-1:]
        seen = {}
        for f in near:
            for k, v in f.items():
                if "GBps" in k:
                    seen.setdefault(k, []).append(v)
        floors = dict(self.first)
        floors.update({k: max(vs) for k, vs in seen.items()})
        return floors, seen

    def spread_notes(self, threads):
        """One line per memory figure at |threads|: its range over the session."""
        lines = []
        for name in ("copy", "triad", "read"):
            key = "%s_GBps_%dt" % (name, threads)
            vs = [f[key] for f in self.samples if key in f]
            if len(vs) > 1:
                lines.append("%s %.1f-%.1f GB/s over %d measurements (best/worst %.2f)"
                             % (key, min(vs), max(vs), len(vs), max(vs) / min(vs)))
        return lines


def floor_of(work, floors, threads):
    """(seconds, "mem", "read" or "fma") for |work| at |threads|, or (None, reason)."""
    if work.ops:
        return None, "-"
    bw, peak = floors.get("triad_GBps_%dt" % threads), floors.get("fma_GFLOPs_%dt" % threads)
    kind, read_bw = "mem", floors.get("read_GBps_%dt" % threads)
    if work.reads and read_bw:
        bw, kind = read_bw, "read"
    if not bw or not peak:
        return None, "no floors"
    mem, fma = work.bytes / (bw * 1e9), work.flops / (peak * 1e9)
    return (mem, kind) if mem >= fma else (fma, "fma")


# ---- the tables -------------------------------------------------------------------------


class Table:
    """Prints rows as they come: fixed-width text, or Markdown."""

    def __init__(self, columns, markdown, first_width=32, width=11):
        self.columns, self.markdown = columns, markdown
        self.first_width, self.width = first_width, width

    def line(self, cells):
        if self.markdown:
            print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)
        else:
            widths = [max(self.width, len(c)) for c in self.columns[1:]]
            print(("%-*s" % (self.first_width, cells[0]))
                  + "".join(" %*s" % (w, c) for w, c in zip(widths, cells[1:])), flush=True)

    def header(self):
        self.line(self.columns)
        if self.markdown:
            self.line(["---"] * len(self.columns))


def fmt_time(t, scale=1e3):
    """A time in ms (or, with scale 1e6, in us), or the text that stands for it."""
    if not isinstance(t, float):
        return t
    v = t * scale
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v if v >= 1 \
        else "%.3f" % v


def fmt_ratio(a, b):
    if not isinstance(a, float) or not isinstance(b, float) or b <= 0:
        return "-"
    r = a / b
    return "%.0f" % r if r >= 100 else "%.1f" % r if r >= 10 else "%.2f" % r


def note(markdown, text):
    print(("- " if markdown else "") + text)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--cxla", default=os.path.join(root, "build", "cxla"))
    p.add_argument("--backends", help="cxla backends, comma-separated (default: every one "
                   "the binary has)")
    p.add_argument("--threads", default="2,1", help="thread counts, comma-separated: the first "
                   "for the main columns, NumPy's BLAS, PyTorch and cxla (CXLA_NUM_THREADS); "
                   "the others add NumPy and PyTorch columns (default 2,1)")
    p.add_argument("--repeat", type=int, default=5, help="runs per case (best or median)")
    p.add_argument("--case-timeout", type=float, default=60,
                   help="seconds before a case's cxla runs are given up (default 60)")
    p.add_argument("--floors", help="the bench_floors program (default: next to cxla)")
    p.add_argument("--floors-once", action="store_true", help="measure the floors once at the "
                   "start, not again after every case (each time: memory only, best of 3)")
    p.add_argument("--openblas-coretype", metavar="NAME",
                   help="OPENBLAS_CORETYPE for NumPy's OpenBLAS (e.g. SkylakeX; 'auto' lets "
                   "OpenBLAS choose); either way OPENBLAS_L2_SIZE is unset")
    p.add_argument("--markdown", action="store_true", help="print Markdown for "
                   "docs/performance.md, headed by the commit and the CPU model")
    p.add_argument("--check", action="store_true", help="instead of timing, run every case on "
                   "every backend with NumPy's inputs and compare the results with NumPy's "
                   "(exit status 1 when one differs)")
    p.add_argument("--small", action="store_true", help="every case at a small size, and "
                   "short floors: checks that the script works, measures nothing")
    p.add_argument("--shared", default=os.environ.get("CXLA_SHARED_DIR")
                   or os.path.join(os.path.dirname(root), "shared"),
                   help="the shared material, whose models/ are timed on cxla")
    p.add_argument("--models-repeat", type=int, default=1, help="cxla runs per model")
    p.add_argument("--model-timeout", type=float, default=120,
                   help="seconds before a model's runs on one backend are given up")
    p.add_argument("--no-models", action="store_true", help="skip ../shared/models/ (and "
                   "what follows them)")
    p.add_argument("--no-conformance", action="store_true", help="skip timing the StableHLO "
                   "conformance suite after the models")
    p.add_argument("cases", nargs="*", help="cases, groups (%s) or model names (default: all); "
                   "cases: %s" % (", ".join(GROUPS), " ".join(CASES)))
    args = p.parse_args()
    if not os.path.exists(args.cxla):
        sys.exit("cxla not found at %s: run make first, or pass --cxla" % args.cxla)
    try:
        threads = [int(t) for t in args.threads.split(",")]
        if not threads or min(threads) < 1:
            raise ValueError
    except ValueError:
        sys.exit("--threads needs positive counts, comma-separated, e.g. 2,1")
    main_threads = threads[0]
    available = cxla_backends(args.cxla)
    backends = args.backends.split(",") if args.backends else available
    for b in backends:
        if b not in available:
            sys.exit("backend %r is not in %s (it has: %s)" % (b, args.cxla, ", ".join(available)))
    floors_path = args.floors or os.path.join(os.path.dirname(os.path.abspath(args.cxla)),
                                              "bench_floors")

    # OpenBLAS reads these when it is loaded: set them before NumPy is imported.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(max(threads))
    if args.openblas_coretype:
        os.environ.pop("OPENBLAS_L2_SIZE", None)
        if args.openblas_coretype.lower() == "auto":
            os.environ.pop("OPENBLAS_CORETYPE", None)
        else:
            os.environ["OPENBLAS_CORETYPE"] = args.openblas_coretype
    global np, torch
    import numpy

    np = numpy
    np.random.seed(0)
    try:
        import torch as torch_module

        torch = torch_module
    except ImportError:
        pass
    blas = Blas()

    models_dir = os.path.join(args.shared, "models")
    models = sorted(glob.glob(os.path.join(models_dir, "*.hlo")))
    model_names = [os.path.basename(m)[:-4] for m in models]
    # The generated 1,000-instruction module leads the programs (written when they run).
    generated = "generated_1000_instructions"
    if models:
        model_names.insert(0, generated)
    wanted = []
    for name in args.cases or list(CASES) + (model_names if not args.no_models else []):
        if name in GROUPS:
            wanted += [c for c, (g, _, _) in CASES.items() if g == name]
        elif name in CASES or name in model_names:
            wanted.append(name)
        else:
            sys.exit("unknown case %r (groups: %s; cases: %s; models: %s)"
                     % (name, " ".join(GROUPS), " ".join(CASES),
                        " ".join(model_names) or "none found"))

    md = args.markdown
    floors = None if args.check else Floors(floors_path, threads, args.small,
                                             not args.floors_once)
    print(("## " if md else "") + "cxla benchmarks at commit %s on %s (%d cores)%s"
          % (commit(root), cpu_model(), os.cpu_count() or 0,
             ", --small sizes: not measurements" if args.small else ""))
    if md:
        print()
    note(md, "backends: %s; cxla run best of %d after a warm-up run (`--repeat %d`), "
         "CXLA_NUM_THREADS=%d; NumPy %s and PyTorch best of %d after a warm-up run, threads %s "
         "(the first in the ratios)"
         % (", ".join(backends), args.repeat, args.repeat + 1, main_threads, np.__version__,
            args.repeat,
            ", ".join(str(t) for t in threads)))
    if floors and floors.first:
        note(md, "floors (bench_floors, before the cases): "
             + ", ".join("%s %g" % kv for kv in floors.first.items()))
        if floors.repeat:
            note(md, "memory floors measured again after every case (best of %d): a case's "
                 "floor is the best of the figures just before and just after it, shown in "
                 "'floor GB/s around'" % Floors.FLOOR_REPS)
    for line in blas.describe() + torch_describe():
        note(md, line)
    if not torch:
        note(md, "torch: not installed (make bench-deps installs Debian's python3-torch)")
    note(md, "cxla's run times are of `cxla run --repeat`, whose runs write into argument "
         "and result buffers allocated once (the first run, which faults the result's pages "
         "in, is left out); NumPy and PyTorch allocate a new output every call "
         "(and fault it in unless their allocator kept the pages), except the 'torch out=' "
         "column: PyTorch writing into an output allocated once (out=, copy_ for the "
         "transpose; 'no out=' where the operation takes none: layer_norm, conv2d, "
         "max_pool2d, the MLP step)")
    if md:
        print()

    cases = [n for n in wanted if n in CASES]
    if args.check:
        failures = check_cases(args, cases, backends)
        sys.exit("%d case(s) differ from NumPy" % failures if failures else 0)
    if cases:
        run_cases(args, cases, backends, threads, floors, blas, md)
    if args.no_models or (args.cases and not any(n in model_names for n in wanted)):
        return
    if not models:
        print("models: skipped, %s not found" % models_dir)
        return
    path = write_temp(generated_module(1000))
    try:
        run_models(args, [(p_, n) for p_, n in zip([path] + models, model_names) if n in wanted],
                   backends, main_threads, md)
    finally:
        os.unlink(path)
    latency(args, backends, main_threads, md)
    if not args.no_conformance:
        conformance(args, backends, main_threads, md)


def run_cases(args, cases, backends, threads, floors, blas, md):
    """One row per case: the floor, every backend and peer at the first thread count, the
    peers and the threaded backends (not the interpreter, which runs on one thread
    whatever it is told) at the other counts, then the ratios at the first count."""
    main_threads = threads[0]
    runs = [(b, main_threads) for b in backends]
    runs += [(b, t) for t in threads[1:] for b in backends if b != "interpreter"]
    peers = [("numpy", t) for t in threads] + [("torch", t) for t in threads]

    def name(who, t):
        return who if t == main_threads else "%s %dt" % (who, t)

    # PyTorch writing into a preallocated output (out=), at the first thread count: the
    # peer that, as `cxla run --repeat`, does not fault in a fresh result every run.
    out_peer = ("torch out=", main_threads)
    columns = ["case (ms; tiny adds: us/op)", "floor", "floor GB/s around"]
    columns += [name(*k) for k in runs] + [name(*k) for k in peers] + ["torch out="]
    for b in backends:
        columns += ["%s/floor" % b, "%s/torch" % b, "%s/torch out=" % b, "%s/np" % b]
    table = Table(columns, md)
    if md:
        print("### Operations and anchor workloads\n")
    table.header()
    for case in cases:
        _, full, small = CASES[case]
        since = len(floors.samples) - 1 if floors else 0
        work = (small if args.small else full)()
        per_op = max(work.ops, 1)
        times = {}
        for lib, t in peers:
            if lib == "torch" and not torch:
                times[(lib, t)] = "not installed"
                continue
            blas.set_threads(t)
            if torch:
                torch.set_num_threads(t)
            fn = work.numpy_fn if lib == "numpy" else work.make_torch()
            times[(lib, t)] = best_time(fn, args.repeat, args.case_timeout / 4) / per_op
        if not torch:
            times[out_peer] = "not installed"
        elif not work.make_torch_out:
            times[out_peer] = "no out="
        else:
            blas.set_threads(main_threads)
            torch.set_num_threads(main_threads)
            times[out_peer] = best_time(work.make_torch_out(), args.repeat,
                                        args.case_timeout / 4) / per_op
        path = write_temp(work.hlo)
        try:
            for b, t in runs:
                try:
                    # One run more than the peers' timed runs: cxla's first run is its
                    # warm-up (cold: it faults the result's pages in), as best_time's is.
                    phases, _ = cxla_run(args.cxla, b, path, args.repeat + 1,
                                         args.case_timeout, cxla_env(t))
                    times[(b, t)] = phases.get("run_min", phases["run"]) / per_op
                except subprocess.TimeoutExpired:
                    times[(b, t)] = "> %gs" % args.case_timeout
                except CxlaFailed as e:
                    times[(b, t)] = "error"
                    print("  %s on %s: %s" % (case, b, e), file=sys.stderr)
        finally:
            os.unlink(path)
        if floors:
            floors.again()
        around, seen = floors.around(since) if floors else ({}, {})
        floor, kind = floor_of(work, around, main_threads)
        bw_key = "%s_GBps_%dt" % ("read" if kind == "read" else "triad", main_threads)
        scale = 1e6 if work.ops else 1e3
        cells = [case + (" (us/op)" if work.ops else ""),
                 "%s %s" % (fmt_time(floor), kind) if floor else kind,
                 "/".join("%.0f" % v for v in seen.get(bw_key, [])) or "-"]
        cells += [fmt_time(times[k], scale) for k in runs + peers + [out_peer]]
        for b in backends:
            mine = times[(b, main_threads)]
            cells += [fmt_ratio(mine, floor), fmt_ratio(mine, times[("torch", main_threads)]),
                      fmt_ratio(mine, times[out_peer]),
                      fmt_ratio(mine, times[("numpy", main_threads)])]
        table.line(cells)
        del work
    if md:
        print()
    for line in floors.spread_notes(main_threads) if floors else []:
        note(md, "memory floor " + line)
    if md:
        print()


def flatten(value):
    """The arrays of a NumPy function's result, in the order of the HLO's tuple leaves."""
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in flatten(v)]
    return [np.asarray(value, dtype=np.float32)]


def check_cases(args, cases, backends):
    """Runs every case on every backend with the NumPy inputs (`cxla run ... in.npy -o
    DIR`) and compares the results with NumPy's: the HLO and the peer must compute the
    same thing for the times beside each other to mean anything. Returns the failures."""
    failures = 0
    for case in cases:
        _, full, small = CASES[case]
        work = (small if args.small else full)()
        expected = flatten(work.numpy_fn())
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "case.hlo")
            with open(path, "w") as f:
                f.write(work.hlo)
            inputs = []
            for i, a in enumerate(work.inputs):
                inputs.append(os.path.join(d, "in%d.npy" % i))
                np.save(inputs[-1], a)
            for b in backends:
                out = os.path.join(d, "out_" + b)
                r = subprocess.run([args.cxla, "run", "--backend", b, path] + inputs
                                   + ["-o", out], capture_output=True, text=True,
                                   timeout=args.case_timeout)
                problem = None
                if r.returncode != 0:
                    problem = r.stderr.strip().splitlines()[-1:] or ["failed"]
                    problem = problem[0]
                else:
                    got = [np.load(os.path.join(out, "out%d.npy" % i))
                           for i in range(len(expected))]
                    worst = 0.0
                    for i, (g, e) in enumerate(zip(got, expected)):
                        if g.size != e.size:
                            problem = "result %d has %d elements, NumPy's %d" % (i, g.size,
                                                                                e.size)
                            break
                        # Relative to the result's magnitude: sums and products reorder.
                        scale = max(float(np.abs(e).max(initial=0)), 1e-30)
                        err = float(np.abs(g.ravel() - e.ravel()).max(initial=0)) / scale
                        worst = max(worst, err)
                    if not problem and not worst <= 1e-4:
                        problem = "differs from NumPy by %.3g of the result's magnitude" % worst
                if problem:
                    failures += 1
                    print("FAIL %s on %s: %s" % (case, b, problem), flush=True)
                else:
                    print("ok   %s on %s (largest difference %.2g of the magnitude)"
                          % (case, b, worst), flush=True)
    return failures


def run_models(args, models, backends, threads, md):
    columns = ["model (ms)"]
    for b in backends:
        columns += ["%s run" % b] + (["%s compile" % b] if b == "interpreter" else
                                          ["%s compile cold" % b, "%s compile cached" % b])
    others = [b for b in backends if b != "interpreter"]
    if "interpreter" in backends:
        columns += ["%s/interp" % b for b in others]
    if md:
        print("### Programs of ../shared/models\n")
        print("Run time: median of %d; compile: the interpreter's one process; other backends "
              "cold (empty CXLA_CACHE_DIR) and cached (a second process).\n" % args.models_repeat)
    else:
        print("programs of %s (run median of %d; compile: cold, then cached in a second "
              "process):" % (os.path.join(args.shared, "models"), args.models_repeat))
    table = Table(columns, md, first_width=40, width=10)
    table.header()
    timeout = "> %gs" % args.model_timeout
    for path, name in models:
        cells, runs = [name], {}
        for b in backends:
            cache = tempfile.mkdtemp(prefix="cxla-bench-cache-")
            try:
                got = []
                for _ in range(1 if b == "interpreter" else 2):
                    got.append(cxla_run(args.cxla, b, path, args.models_repeat,
                                        args.model_timeout, cxla_env(threads, cache))[0])
                runs[b] = min(g["run"] for g in got)
                cells += [fmt_time(runs[b]), fmt_time(got[0].get("compile", "-"))]
                if b != "interpreter":
                    cells.append(fmt_time(got[1].get("compile", "-")))
            except subprocess.TimeoutExpired:
                runs[b] = timeout
                cells += [timeout, "-"] + (["-"] if b != "interpreter" else [])
            except CxlaFailed as e:
                runs[b] = "error"
                cells += ["error", "-"] + (["-"] if b != "interpreter" else [])
                print("  %s on %s: %s" % (name, b, e), file=sys.stderr)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        if "interpreter" in backends:
            cells += [fmt_ratio(runs[b], runs["interpreter"]) for b in others]
        table.line(cells)
    if md:
        print()


def latency(args, backends, threads, md):
    """The first-run latency of `cxla run` on a small module: process start to result."""
    path = write_temp(tiny_adds(100).hlo)
    parts = []
    try:
        for b in backends:
            cache = tempfile.mkdtemp(prefix="cxla-bench-cache-")
            try:
                walls = []
                for _ in range(3):
                    t0 = time.perf_counter()
                    r = subprocess.run([args.cxla, "run", "--backend", b, path],
                                       capture_output=True, env=cxla_env(threads, cache),
                                       timeout=args.case_timeout)
                    walls.append(time.perf_counter() - t0 if r.returncode == 0 else None)
                if None in walls:
                    parts.append("%s: error" % b)
                elif b == "interpreter":
                    parts.append("%s %s ms" % (b, fmt_time(min(walls))))
                else:
                    parts.append("%s %s ms cold, %s ms cached" % (b, fmt_time(walls[0]),
                                                                  fmt_time(min(walls[1:]))))
            except subprocess.TimeoutExpired:
                parts.append("%s: > %gs" % (b, args.case_timeout))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
    finally:
        os.unlink(path)
    note(md, "first-run latency of `cxla run` on 100 chained adds (process start to result): "
         + "; ".join(parts))


def conformance(args, backends, threads, md):
    """The StableHLO conformance suite's total time on each backend (`cxla conformance`,
    the whole process; its summary line beside it)."""
    suite = os.path.join(args.shared, "conformance", "stablehlo")
    if not os.path.isdir(suite):
        note(md, "conformance: skipped, %s not found" % suite)
        return
    parts = []
    for b in backends:
        cmd = [args.cxla, "conformance"] + (["--backend", b] if b != "interpreter" else [])
        t0 = time.perf_counter()
        try:
            r = subprocess.run(cmd + [suite], capture_output=True, text=True,
                               env=cxla_env(threads), timeout=args.model_timeout * 10)
        except subprocess.TimeoutExpired:
            parts.append("%s > %gs" % (b, args.model_timeout * 10))
            continue
        wall = time.perf_counter() - t0
        summary = re.search(r"\d+ passed, \d+ failed(, \d+ skipped)?", r.stdout + r.stderr)
        if summary:
            parts.append("%s %.1f s (%s)" % (b, wall, summary.group(0)))
        else:
            lines = (r.stderr or r.stdout).strip().splitlines()
            parts.append("%s: error (%s)" % (b, lines[-1] if lines else "no output"))
    note(md, "StableHLO conformance suite (%s), one job: %s" % (suite, "; ".join(parts)))


if __name__ == "__main__":
    main()
