#!/usr/bin/python3
"""Writes tests/hlo/cases/row_fusion.hlo: softmax, log-softmax and layer norm over rows
(the pattern of row fusion, src/passes/row_fusion.c and fusion.c), rows of 1, 3, 17, 130
and 1000 elements (the cpu backend's row fusion takes rows of 128 or more), rows with -inf,
+inf and NaN, a row reduce that is also a result of the module, and a broadcast along
another dimension that row fusion must leave alone. EXPECT is computed here with NumPy
in float64 (an oracle independent of cxla), checked with a tolerance.

Run: /usr/bin/python3 tests/tools/gen_row_fusion_cases.py > tests/hlo/cases/row_fusion.hlo
"""
import numpy as np

MAX = """max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}"""
ADD = """add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}"""
TOL = "// TOLERANCE: atol=1e-6 rtol=1e-5 ulps=2"


def fmt(v):
    v = np.float32(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "%.9g" % v


def lit(a):
    a = np.asarray(a, dtype=np.float32)
    dims = ",".join(str(d) for d in a.shape)

    def body(x):
        if x.ndim == 0:
            return fmt(x)
        return "{" + ", ".join(body(y) for y in x) + "}"
    return f"f32[{dims}] {body(a)}"


def data(rows, cols, seed=0):
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    return (((i * 31 + j * 17 + seed) % 61) - 30).astype(np.float32) / np.float32(8)


def softmax(x):
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def softmax_hlo(name, rows, cols, extra_results=False):
    root = "ROOT r" if not extra_results else "r"
    tail = ""
    if extra_results:
        tail = f"\n  ROOT t = (f32[{rows},{cols}], f32[{rows}], f32[{rows}]) tuple(r, m, s)"
    return f"""HloModule {name}

{MAX}

{ADD}

ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[{rows}] reduce(x, ninf), dimensions={{1}}, to_apply=max_f32
  mb = f32[{rows},{cols}] broadcast(m), dimensions={{0}}
  d = f32[{rows},{cols}] subtract(x, mb)
  e = f32[{rows},{cols}] exponential(d)
  zero = f32[] constant(0)
  s = f32[{rows}] reduce(e, zero), dimensions={{1}}, to_apply=add_f32
  sb = f32[{rows},{cols}] broadcast(s), dimensions={{0}}
  {root} = f32[{rows},{cols}] divide(e, sb){tail}
}}"""


cases = []


def case(comment, hlo, inputs, expect):
    text = f"// {comment}\n{hlo}\n"
    for a in inputs:
        text += f"// INPUT: {lit(a)}\n"
    text += f"// EXPECT: {expect}\n{TOL}\n"
    cases.append(text)


for cols in (1, 3, 17, 130, 1000):
    rows = 2 if cols == 1000 else 3
    x = data(rows, cols)
    case(f"softmax over rows of {cols} (row fusion from 128)",
         softmax_hlo(f"row_softmax_{rows}x{cols}", rows, cols), [x], lit(softmax(x)))

# -inf, +inf and NaN: a row with one -inf (its exponential is 0), a row of -inf only (max
# -inf, -inf - -inf is NaN: the row is NaN), a row with +inf (NaN), a row with a NaN.
x = data(5, 130, 7)
x[0, 5] = -np.inf
x[1, :] = -np.inf
x[2, 9] = np.inf
x[3, 100] = np.nan
case("softmax over rows with -inf, +inf and NaN", softmax_hlo("row_softmax_nonfinite", 5, 130),
     [x], lit(softmax(x)))

# The maximum and the sum are also results: they leave the row fusion's loop (the reduce
# is read by the tuple too), and the values must not change.
x = data(3, 130, 3)
xd = x.astype(np.float64)
m = xd.max(axis=1)
s = np.exp(xd - m[:, None]).sum(axis=1)
case("softmax whose maximum and sum are also results",
     softmax_hlo("row_softmax_reduce_results", 3, 130, extra_results=True), [x],
     f"(f32[3,130], f32[3], f32[3]) ({lit(softmax(x)).split(' ', 1)[1]}, "
     f"{lit(m).split(' ', 1)[1]}, {lit(s).split(' ', 1)[1]})")

for cols in (17, 200):
    rows = 3
    x = data(rows, cols, 11)
    hlo = f"""HloModule row_log_softmax_{rows}x{cols}

{MAX}

{ADD}

ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[{rows}] reduce(x, ninf), dimensions={{1}}, to_apply=max_f32
  mb = f32[{rows},{cols}] broadcast(m), dimensions={{0}}
  d = f32[{rows},{cols}] subtract(x, mb)
  e = f32[{rows},{cols}] exponential(d)
  zero = f32[] constant(0)
  s = f32[{rows}] reduce(e, zero), dimensions={{1}}, to_apply=add_f32
  l = f32[{rows}] log(s)
  lb = f32[{rows},{cols}] broadcast(l), dimensions={{0}}
  ROOT r = f32[{rows},{cols}] subtract(d, lb)
}}"""
    xd = x.astype(np.float64)
    d = xd - xd.max(axis=1, keepdims=True)
    want = d - np.log(np.exp(d).sum(axis=1, keepdims=True))
    case(f"log-softmax over rows of {cols}", hlo, [x], lit(want))

for cols in (17, 200):
    rows = 3
    x = data(rows, cols, 5)
    g = (np.arange(cols, dtype=np.float32) % 7 - 3) / np.float32(4)
    b = (np.arange(cols, dtype=np.float32) % 5 - 2) / np.float32(8)
    hlo = f"""HloModule row_layer_norm_{rows}x{cols}

{ADD}

ENTRY main {{
  x = f32[{rows},{cols}] parameter(0)
  g = f32[{cols}] parameter(1)
  b = f32[{cols}] parameter(2)
  zero = f32[] constant(0)
  inv = f32[] constant({1.0 / cols!r})
  invr = f32[{rows}] broadcast(inv), dimensions={{}}
  s = f32[{rows}] reduce(x, zero), dimensions={{1}}, to_apply=add_f32
  mean = f32[{rows}] multiply(s, invr)
  meanb = f32[{rows},{cols}] broadcast(mean), dimensions={{0}}
  d = f32[{rows},{cols}] subtract(x, meanb)
  d2 = f32[{rows},{cols}] multiply(d, d)
  s2 = f32[{rows}] reduce(d2, zero), dimensions={{1}}, to_apply=add_f32
  var = f32[{rows}] multiply(s2, invr)
  eps = f32[] constant(1e-05)
  epsr = f32[{rows}] broadcast(eps), dimensions={{}}
  ve = f32[{rows}] add(var, epsr)
  rs = f32[{rows}] rsqrt(ve)
  rb = f32[{rows},{cols}] broadcast(rs), dimensions={{0}}
  n = f32[{rows},{cols}] multiply(d, rb)
  gb = f32[{rows},{cols}] broadcast(g), dimensions={{1}}
  bb = f32[{rows},{cols}] broadcast(b), dimensions={{1}}
  ng = f32[{rows},{cols}] multiply(n, gb)
  ROOT y = f32[{rows},{cols}] add(ng, bb)
}}"""
    xd = x.astype(np.float64)
    d = xd - xd.mean(axis=1, keepdims=True)
    var = (d * d).mean(axis=1, keepdims=True)
    want = d / np.sqrt(var + 1e-5) * g + b
    case(f"layer norm over rows of {cols}", hlo, [x, g, b], lit(want))

# Not the pattern: row values read at another row. The row maxima of x[2,2,130], transposed
# and broadcast back over the rows, so element (i, j, k) reads row (j, i)'s maximum. Row
# fusion must leave the reduce outside the loop (src/passes/row_fusion.c; it would
# otherwise recompute a row's maximum per element); the values are the same either way.
x = data(4, 130, 2).reshape(2, 2, 130)
hlo = f"""HloModule row_transposed_reduce

{MAX}

ENTRY main {{
  x = f32[2,2,130] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[2,2] reduce(x, ninf), dimensions={{2}}, to_apply=max_f32
  mt = f32[2,2] transpose(m), dimensions={{1,0}}
  mb = f32[2,2,130] broadcast(mt), dimensions={{0,1}}
  ROOT d = f32[2,2,130] subtract(x, mb)
}}"""
xd = x.astype(np.float64)
case("a row maximum read at another row (not a row fusion)", hlo, [x],
     lit(xd - xd.max(axis=2).T[:, :, None]))

print("// Row fusion: softmax, log-softmax and layer norm over rows of several lengths, rows")
print("// with -inf, +inf and NaN, reduces that are also results, and a broadcast along")
print("// another dimension. Generated by tests/tools/gen_row_fusion_cases.py (NumPy in")
print("// float64 as the oracle); edit that script, not this file.")
print("// -----\n".join(cases), end="")
