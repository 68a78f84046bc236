#!/usr/bin/env python3
"""Transposed convolutions (lhs dilation) against the forward convolutions whose gradients
they are, on every cxla backend and in PyTorch, in the same run.

    /usr/bin/python3 bench/conv_transpose_bench.py [--cxla PATH] [--baseline PATH]
                                                   [--backends LIST] [--repeat N]
                                                   [--interp-repeat N] [--threads N]
                                                   [--case-timeout S] [--markdown] [case ...]

Each case is a pair of HLO modules: a transposed convolution as JAX's conv_transpose (or
the gradient of a strided convolution) writes it, lhs_dilate=S with the padding that
gives, and the forward convolution with window stride S whose input gradient it is. Both
do the same multiply-adds (each product of the forward convolution is one product of the
transposed one), so their time ratio says what the holes of the dilation cost: 1 when they
cost nothing. cxla runs each with `cxla run --backend B --repeat N+1` (generated inputs;
the best run, parse and compile excluded); --baseline PATH runs a second cxla binary (e.g.
main's build) the same way, for before/after in one run. PyTorch runs conv_transpose2d and
conv2d on the same shapes (NCHW; the layout change is not timed), best of N after a
warm-up, with --threads threads (also cxla's CXLA_NUM_THREADS).

Cases (name some to run only those):
  k8     NHWC 8x28x28x64 -> 8x224x224x64, 8x8 kernel, stride 8, padding 7_7 (conv_transpose
         "SAME"); the forward: 8x224x224x64 -> 8x28x28x64, 8x8 stride 8
  k16    the same with a 16x16 kernel, padding 11_11; forward padding 4_4
  k4     a 4x4 kernel (smaller than the stride 8): padding 3_7, past the window's reach
  k3s2   NHWC 8x56x56x64 -> 8x112x112x64, 3x3 kernel, stride 2, padding 2_1 (a ResNet-like
         strided layer's gradient); forward padding 0_1
  jconvt XLA's own transposed-convolution test program: NCHW 16x129x20x20 -> 16x1x160x160,
         16x16 kernel IOHW, lhs dilation 8, padding 11_11; forward 16x1x160x160 ->
         16x129x20x20, stride 8, padding 4_4

The machines are shared and noisy: compare ratios from one run, not times across runs.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ops_bench import CxlaFailed, best_time, cxla_env, cxla_run  # noqa: E402


def nhwc_pair(name, n, h, c_out, c_in, k, s, pads_t, pads_f, torch_pad, torch_out_pad, fpad):
    """A transposed convolution dy[n,h,h,c_out] -> dx[n,H,H,c_in] with kernel k, lhs
    dilation s and padding |pads_t| (low, high), and the forward convolution dx -> dy with
    window stride s and padding |pads_f|."""
    H = (h - 1) * s + 1 + pads_t[0] + pads_t[1] - k + 1
    assert (H + pads_f[0] + pads_f[1] - k) // s + 1 == h, name
    pt = "%d_%dx%d_%d" % (pads_t + pads_t)
    pf = "%d_%dx%d_%d" % (pads_f + pads_f)
    transposed = f"""HloModule {name}_transposed
ENTRY main {{
  dy = f32[{n},{h},{h},{c_out}] parameter(0)
  w = f32[{k},{k},{c_in},{c_out}] parameter(1)
  ROOT dx = f32[{n},{H},{H},{c_in}] convolution(dy, w), window={{size={k}x{k} pad={pt} lhs_dilate={s}x{s} rhs_reversal=1x1}}, dim_labels=b01f_01oi->b01f
}}
"""
    forward = f"""HloModule {name}_forward
ENTRY main {{
  x = f32[{n},{H},{H},{c_in}] parameter(0)
  w = f32[{k},{k},{c_in},{c_out}] parameter(1)
  ROOT y = f32[{n},{h},{h},{c_out}] convolution(x, w), window={{size={k}x{k} stride={s}x{s} pad={pf}}}, dim_labels=b01f_01io->b01f
}}
"""
    macs = n * h * h * c_out * c_in * k * k

    def torch_fns(torch):
        dy = torch.rand(n, c_out, h, h)
        x = torch.rand(n, c_in, H, H)
        w = torch.rand(c_out, c_in, k, k)  # conv2d: [out, in]; conv_transpose2d: [in, out]
        F = torch.nn.functional
        t = lambda: F.conv_transpose2d(dy, w, stride=s, padding=torch_pad,
                                       output_padding=torch_out_pad)
        f = lambda: F.conv2d(x, w, stride=s, padding=fpad)
        assert tuple(t().shape) == (n, c_in, H, H) and tuple(f().shape) == (n, c_out, h, h)
        return t, f

    return {"transposed": transposed, "forward": forward, "macs": macs, "torch": torch_fns,
            "what": f"NHWC {n}x{h}x{h}x{c_out} -> {H}x{H}x{c_in}, {k}x{k}, stride {s}, "
                    f"pad {pads_t[0]}_{pads_t[1]}"}


def jconvt():
    transposed = """HloModule jit_jconvt
ENTRY main.6 {
  Arg_0.1 = f32[16,129,20,20]{3,2,1,0} parameter(0)
  Arg_1.2 = f32[129,1,16,16]{3,2,1,0} parameter(1)
  ROOT conv.3 = f32[16,1,160,160]{3,2,1,0} convolution(Arg_0.1, Arg_1.2), window={size=16x16 pad=11_11x11_11 lhs_dilate=8x8}, dim_labels=bf01_io01->bf01
}
"""
    forward = """HloModule jit_jconv_forward
ENTRY main {
  x = f32[16,1,160,160] parameter(0)
  w = f32[129,1,16,16] parameter(1)
  ROOT y = f32[16,129,20,20] convolution(x, w), window={size=16x16 stride=8x8 pad=4_4x4_4}, dim_labels=bf01_oi01->bf01
}
"""

    def torch_fns(torch):
        dy = torch.rand(16, 129, 20, 20)
        x = torch.rand(16, 1, 160, 160)
        w = torch.rand(129, 1, 16, 16)
        F = torch.nn.functional
        t = lambda: F.conv_transpose2d(dy, w, stride=8, padding=4)
        f = lambda: F.conv2d(x, w, stride=8, padding=4)
        assert tuple(t().shape) == (16, 1, 160, 160) and tuple(f().shape) == (16, 129, 20, 20)
        return t, f

    return {"transposed": transposed, "forward": forward, "macs": 16 * 20 * 20 * 129 * 256,
            "torch": torch_fns,
            "what": "NCHW 16x129x20x20 -> 16x1x160x160, 16x16 IOHW, stride 8, pad 11_11"}


CASES = {
    "k8": lambda: nhwc_pair("k8", 8, 28, 64, 64, 8, 8, (7, 7), (0, 0), 0, 0, 0),
    "k16": lambda: nhwc_pair("k16", 8, 28, 64, 64, 16, 8, (11, 11), (4, 4), 4, 0, 4),
    "k4": lambda: nhwc_pair("k4", 8, 28, 64, 64, 4, 8, (3, 7), (0, 0), 0, 4, 0),
    "k3s2": lambda: nhwc_pair("k3s2", 8, 56, 64, 64, 3, 2, (2, 1), (0, 1), 1, 1, 1),
    "jconvt": jconvt,
}


def time_cxla(cxla, backend, path, repeat, timeout, threads):
    try:
        phases, _ = cxla_run(cxla, backend, path, repeat + 1, timeout, cxla_env(threads))
        return phases.get("run_min", phases["run"])
    except subprocess.TimeoutExpired:
        return "> %ds" % timeout
    except CxlaFailed as e:
        return "failed: %s" % e


def fmt_ms(t):
    return t if isinstance(t, str) else "%.1f" % (t * 1e3)


def fmt_ratio(a, b):
    if isinstance(a, str) or isinstance(b, str) or not b:
        return "-"
    return "%.2f" % (a / b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--cxla", default=os.path.join(here, "..", "build", "cxla"))
    ap.add_argument("--baseline", help="a second cxla binary timed the same way (before)")
    ap.add_argument("--backends", default="interpreter,cpu")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--interp-repeat", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--case-timeout", type=int, default=300)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    names = args.cases or list(CASES)
    for n in names:
        if n not in CASES:
            sys.exit("unknown case %r (cases: %s)" % (n, ", ".join(CASES)))
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    binaries = [("cxla", args.cxla)] + ([("baseline", args.baseline)] if args.baseline else [])
    backends = [b for b in args.backends.split(",") if b]
    head = ["case", "MACs (G)"]
    for label, _ in binaries:
        for b in backends:
            head += ["%s %s T ms" % (label, b), "F ms", "T/F"]
    head += ["torch T ms", "F ms", "T/F"]
    for b in backends:
        head += ["%s/torch T" % b, "%s/torch F" % b]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name in names:
            case = CASES[name]()
            paths = {}
            for which in ("transposed", "forward"):
                paths[which] = os.path.join(d, "%s_%s.hlo" % (name, which))
                with open(paths[which], "w") as f:
                    f.write(case[which])
            row = [name, "%.2f" % (case["macs"] / 1e9)]
            first = {}
            for label, binary in binaries:
                for b in backends:
                    rep = args.interp_repeat if b == "interpreter" else args.repeat
                    t = time_cxla(binary, b, paths["transposed"], rep, args.case_timeout,
                                  args.threads)
                    f = time_cxla(binary, b, paths["forward"], rep, args.case_timeout,
                                  args.threads)
                    if label == "cxla":
                        first[b] = (t, f)
                    row += [fmt_ms(t), fmt_ms(f), fmt_ratio(t, f)]
                    print("  %s %s %s: transposed %s ms, forward %s ms" %
                          (name, label, b, fmt_ms(t), fmt_ms(f)), file=sys.stderr)
            if torch is not None:
                tt, tf = case["torch"](torch)
                pt, pf = best_time(tt, args.repeat, 30), best_time(tf, args.repeat, 30)
                row += [fmt_ms(pt), fmt_ms(pf), fmt_ratio(pt, pf)]
                for b in backends:
                    row += [fmt_ratio(first[b][0], pt), fmt_ratio(first[b][1], pf)]
            else:
                row += ["not installed", "-", "-"] + ["-", "-"] * len(backends)
            rows.append(row)
            print("  %s: %s" % (name, case["what"]), file=sys.stderr)
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        for r in rows:
            print("  ".join(c.rjust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()
