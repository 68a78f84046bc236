#!/usr/bin/env python3
"""Writes the stand-ins of issue 19's long programs (the "Time" point) as HLO text.

    lowp_programs.py OUT_DIR [--scale full|small]

The programs themselves (XLA's fp8 GEMM loop, a while loop reducing 1M elements per step)
are not in this repository; these are written the way JAX lowers the same computations
(lax.fori_loop: a while loop over a tuple whose first element counts the steps; the
operands that do not change travel in the tuple too), so that the cpu backend meets the
same operations, shapes and types:

- fp8_gemm_loop_e4m3fn: 20 steps, each the product of a f8e4m3fn[32768,8192] activation
  and the step's f8e4m3fn[8192,1024] weights (a dynamic-slice of a stacked
  [20,8192,1024] parameter, as lax.scan over stacked weights gives), in f32
  (preferred_element_type=f32: XLA's fp8 dot accumulates in f32), times the product of the
  two per-tensor scales (the dequantization), added into an f32 accumulator.
- fp8_gemm_loop_e5m2: the same with f8e5m2 weights (the gradient format of fp8 training).
- fp8_gemm_loop_convert: the same e4m3fn operands converted to bf16 inside the loop before
  a bf16 x bf16 -> f32 product (what jnp.dot gives after an explicit astype).
- bf16_gemm_loop: the same loop on bf16 operands (the bf16 path without f8).
- reduce_loop_1m: 1000 steps, each the sum of a f32[1048576] operand times the step count
  (jnp.sum(x * i)), added into a scalar: the loop's own cost per step against the
  reduction's.
- reduce_loop_1m_carry: 1000 steps of x = x * 0.5 + 1 and s += sum(x): the 1M elements are
  loop state, rewritten and reduced every step.
- reduce_1m: one such reduction alone (the floor of a step of reduce_loop_1m).
- carry_step_1m: one step of reduce_loop_1m_carry alone (x * 0.5 + 1 and its sum, both
  results), the floor of its steps.

--scale small writes the GEMM loops at 1/8 of the rows (4096) and 1/4 of the steps (5), to
check and to time on a busy machine (the full size's time scales with rows x steps)."""
import argparse
import os


def gemm_loop(name, m, k, n, steps, lhs_t, rhs_t, convert_to=None):
    conv = ""
    dot_l, dot_r, dt = "a", "w", lhs_t
    if convert_to:
        conv = (f"  ac = {convert_to}[{m},{k}] convert(a)\n"
                f"  wc = {convert_to}[{k},{n}] convert(w)\n")
        dot_l, dot_r = "ac", "wc"
    state = (f"(s32[], {lhs_t}[{m},{k}], {rhs_t}[{steps},{k},{n}], f32[], f32[], "
             f"f32[{m},{n}])")
    return f"""HloModule {name}, entry_computation_layout={{({lhs_t}[{m},{k}]{{1,0}}, {rhs_t}[{steps},{k},{n}]{{2,1,0}}, f32[], f32[])->f32[{m},{n}]{{1,0}}}}

body {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = {lhs_t}[{m},{k}] get-tuple-element(p), index=1
  ws = {rhs_t}[{steps},{k},{n}] get-tuple-element(p), index=2
  sa = f32[] get-tuple-element(p), index=3
  sb = f32[] get-tuple-element(p), index=4
  acc = f32[{m},{n}] get-tuple-element(p), index=5
  zero = s32[] constant(0)
  w3 = {rhs_t}[1,{k},{n}] dynamic-slice(ws, i, zero, zero), dynamic_slice_sizes={{1,{k},{n}}}
  w = {rhs_t}[{k},{n}] reshape(w3)
{conv}  d = f32[{m},{n}] dot({dot_l}, {dot_r}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  s = f32[] multiply(sa, sb)
  sbc = f32[{m},{n}] broadcast(s), dimensions={{}}
  ds = f32[{m},{n}] multiply(d, sbc)
  acc2 = f32[{m},{n}] add(acc, ds)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = {state} tuple(i2, a, ws, sa, sb, acc2)
}}

cond {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant({steps})
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  a = {lhs_t}[{m},{k}] parameter(0)
  ws = {rhs_t}[{steps},{k},{n}] parameter(1)
  sa = f32[] parameter(2)
  sb = f32[] parameter(3)
  zero = s32[] constant(0)
  fz = f32[] constant(0)
  acc = f32[{m},{n}] broadcast(fz), dimensions={{}}
  init = {state} tuple(zero, a, ws, sa, sb, acc)
  loop = {state} while(init), condition=cond, body=body
  ROOT out = f32[{m},{n}] get-tuple-element(loop), index=5
}}
"""


def reduce_loop(name, size, steps, carry):
    state = f"(s32[], f32[{size}], f32[])"
    if carry:
        step = (f"  half = f32[] constant(0.5)\n"
                f"  hb = f32[{size}] broadcast(half), dimensions={{}}\n"
                f"  onef = f32[] constant(1)\n"
                f"  ob = f32[{size}] broadcast(onef), dimensions={{}}\n"
                f"  xh = f32[{size}] multiply(x, hb)\n"
                f"  y = f32[{size}] add(xh, ob)\n")
        summed, nx = "y", "y"
    else:
        step = (f"  fi = f32[] convert(i)\n"
                f"  fb = f32[{size}] broadcast(fi), dimensions={{}}\n"
                f"  y = f32[{size}] multiply(x, fb)\n")
        summed, nx = "y", "x"
    return f"""HloModule {name}

add {{
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT s = f32[] add(l, r)
}}

body {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[{size}] get-tuple-element(p), index=1
  acc = f32[] get-tuple-element(p), index=2
{step}  z = f32[] constant(0)
  r = f32[] reduce({summed}, z), dimensions={{0}}, to_apply=add
  acc2 = f32[] add(acc, r)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = {state} tuple(i2, {nx}, acc2)
}}

cond {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant({steps})
  ROOT lt = pred[] compare(i, n), direction=LT
}}

ENTRY main {{
  x = f32[{size}] parameter(0)
  zero = s32[] constant(0)
  fz = f32[] constant(0)
  init = {state} tuple(zero, x, fz)
  loop = {state} while(init), condition=cond, body=body
  ROOT out = f32[] get-tuple-element(loop), index=2
}}
"""


def reduce_once(name, size):
    return f"""HloModule {name}

add {{
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT s = f32[] add(l, r)
}}

ENTRY main {{
  x = f32[{size}] parameter(0)
  i = f32[] parameter(1)
  fb = f32[{size}] broadcast(i), dimensions={{}}
  y = f32[{size}] multiply(x, fb)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(y, z), dimensions={{0}}, to_apply=add
}}
"""


def carry_once(name, size):
    return f"""HloModule {name}

add {{
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT s = f32[] add(l, r)
}}

ENTRY main {{
  x = f32[{size}] parameter(0)
  half = f32[] constant(0.5)
  hb = f32[{size}] broadcast(half), dimensions={{}}
  onef = f32[] constant(1)
  ob = f32[{size}] broadcast(onef), dimensions={{}}
  xh = f32[{size}] multiply(x, hb)
  y = f32[{size}] add(xh, ob)
  z = f32[] constant(0)
  r = f32[] reduce(y, z), dimensions={{0}}, to_apply=add
  ROOT t = (f32[{size}], f32[]) tuple(y, r)
}}
"""


def programs(scale):
    m, steps = (32768, 20) if scale == "full" else (4096, 5)
    k, n = 8192, 1024
    return {
        "fp8_gemm_loop_e4m3fn": gemm_loop("fp8_gemm_loop_e4m3fn", m, k, n, steps, "f8e4m3fn",
                                          "f8e4m3fn"),
        "fp8_gemm_loop_e5m2": gemm_loop("fp8_gemm_loop_e5m2", m, k, n, steps, "f8e4m3fn",
                                        "f8e5m2"),
        "fp8_gemm_loop_convert": gemm_loop("fp8_gemm_loop_convert", m, k, n, steps, "f8e4m3fn",
                                           "f8e4m3fn", convert_to="bf16"),
        "bf16_gemm_loop": gemm_loop("bf16_gemm_loop", m, k, n, steps, "bf16", "bf16"),
        "reduce_loop_1m": reduce_loop("reduce_loop_1m", 1 << 20, 1000, False),
        "reduce_loop_1m_carry": reduce_loop("reduce_loop_1m_carry", 1 << 20, 1000, True),
        "reduce_1m": reduce_once("reduce_1m", 1 << 20),
        "carry_step_1m": carry_once("carry_step_1m", 1 << 20),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--scale", choices=["full", "small"], default="full")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, text in programs(args.scale).items():
        with open(os.path.join(args.out_dir, name + ".hlo"), "w") as f:
            f.write(text)
        print(os.path.join(args.out_dir, name + ".hlo"))


if __name__ == "__main__":
    main()
