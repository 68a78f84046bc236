#!/usr/bin/env python3
"""The mobilenet_v2-like training step (train_programs.py) on cxla and on PyTorch, same inputs.

    train_bench.py [--cxla build/cxla] [--batch 96] [--size 224] [--repeat 3]
                   [--backends cpu] [--baseline OTHER_CXLA] [--check] [--torch-threads 2]

Writes the step's HLO and its inputs (random images, one-hot labels, He-initialised
kernels, unit batch-norm scales, zero offsets) as .npy files into a temporary folder, runs
`cxla run --repeat N` on each backend (its median run time, the first run included in the
statistics as cxla prints them) and the same step in PyTorch (torchvision-free: Conv2d
with groups for the depthwise ones, BatchNorm2d in training mode, ReLU6, the mean over
H and W, Linear, cross-entropy against the one-hot labels, SGD at 0.01; its best of N
after one warm-up), and prints the times and their ratios. With --check, it also compares
cxla's loss and gradients (from the updated parameters) with PyTorch's (each array's
largest difference over the step's largest gradient), which checks the generator's
backward pass against autograd.
With --convs, it times three of the step's weight gradients alone (the depthwise 3x3 at
28x28x192, the stem's 3x3 stride 2, a 1x1 expansion) against the forward convolutions with
the same multiply-adds, on this build and the --baseline build."""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_programs  # noqa: E402


def make_inputs(params, seed):
    rng = np.random.default_rng(seed)
    out = []
    for name, dims, what in params:
        if what == "images":
            a = rng.standard_normal(dims).astype(np.float32)
        elif what == "one-hot labels":
            a = np.zeros(dims, np.float32)
            a[np.arange(dims[0]), rng.integers(0, dims[1], dims[0])] = 1
        elif what.endswith("kernel") and len(dims) == 4:
            fan_in = dims[0] * dims[1] * dims[2]
            a = (rng.standard_normal(dims) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        elif what == "dense kernel":
            a = (rng.standard_normal(dims) * np.sqrt(1.0 / dims[0])).astype(np.float32)
        elif what.endswith("scale"):
            a = np.ones(dims, np.float32)
        else:
            a = np.zeros(dims, np.float32)
        out.append(a)
    return out


def run_cxla(cxla, hlo, in_dir, backend, repeat, out_dir):
    n = len([f for f in os.listdir(in_dir) if f.endswith(".npy")])
    cmd = [cxla, "run", hlo, "--backend", backend, "--repeat", str(repeat), "-o", out_dir]
    cmd += [os.path.join(in_dir, f"in{j}.npy") for j in range(n)]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    if r.returncode != 0:
        sys.exit(f"cxla failed: {r.stderr[-2000:]}")
    text = r.stdout + r.stderr
    med = re.search(r"^run\s+median\s+([\d.]+) ms", text, re.M)
    comp = re.search(r"^compile\s+median\s+([\d.]+) ms", text, re.M)
    mem = re.search(r"^memory\s+peak\s+([\d.]+ \w+)", text, re.M)
    return (float(med.group(1)) / 1e3, float(comp.group(1)) / 1e3 if comp else 0.0,
            mem.group(1) if mem else "?", wall)


def torch_step(params, arrays, threads, repeat):
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    t = {name: torch.from_numpy(a.copy()) for (name, _, _), a in zip(params, arrays)}
    names = [p[0] for p in params]
    x_nhwc, labels = t[names[0]], t[names[1]]
    leaves = []
    for (name, dims, what) in params[2:]:
        a = t[name]
        if len(dims) == 4:  # HWIO -> OIHW
            a = a.permute(3, 2, 0, 1).contiguous()
        if what == "dense kernel":
            a = a.t().contiguous()
        leaves.append(a.requires_grad_(True))

    def forward(x):
        i = 0
        x = x.permute(0, 3, 1, 2).contiguous()
        # Rebuild the stage structure exactly as train_programs.program does.
        stages = [[(3, 2, False, True)]]
        cin = 32
        for tt, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                            (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
            for j in range(n):
                stride = s if j == 0 else 1
                st = []
                if tt != 1:
                    st.append((1, 1, False, True))
                st.append((3, stride, True, True))
                st.append((1, 1, False, False))
                stages.append((st, stride == 1 and cin == c))
                cin = c
        stages[0] = (stages[0], False)
        stages.append(([(1, 1, False, True)], False))
        for st, res in stages:
            x0 = x
            for (k, s, dw, relu) in st:
                w, g, b = leaves[i], leaves[i + 1], leaves[i + 2]
                i += 3
                size = x.shape[2]
                out = -(-size // s)
                total = max((out - 1) * s + k - size, 0)
                lo = total // 2
                x = F.pad(x, (lo, total - lo, lo, total - lo))
                x = F.conv2d(x, w, stride=s, groups=x.shape[1] if dw else 1)
                x = F.batch_norm(x, None, None, g, b, training=True, eps=1e-3)
                if relu:
                    x = F.relu6(x)
            if res:
                x = x + x0
        x = x.mean(dim=(2, 3))
        return F.linear(x, leaves[-2], leaves[-1])

    def step():
        for p in leaves:
            p.grad = None
        logits = forward(x_nhwc)
        loss = -(labels * F.log_softmax(logits, dim=1)).sum() / x_nhwc.shape[0]
        loss.backward()
        with torch.no_grad():
            new = [p - 0.01 * p.grad for p in leaves]
        return loss, new

    loss, new = step()  # warm-up
    best = float("inf")
    for _ in range(repeat):
        t0 = time.time()
        loss, new = step()
        best = min(best, time.time() - t0)
    outs = [loss.detach().numpy()]
    for (name, dims, what), a in zip(params[2:], new):
        a = a.detach()
        if len(dims) == 4:
            a = a.permute(2, 3, 1, 0)
        if what == "dense kernel":
            a = a.t()
        outs.append(a.contiguous().numpy())
    return best, outs


# Weight gradients alone against the forward convolutions with the same multiply-adds, at the
# step's batch: (name, forward HLO body, gradient HLO body), NHWC, as train_programs writes.
def conv_pairs(n):
    dw_f = (f"x = f32[{n},28,28,192] parameter(0)\n  w = f32[3,3,1,192] parameter(1)\n"
            f"  ROOT y = f32[{n},28,28,192] convolution(x, w), window={{size=3x3 pad=1_1x1_1}}, "
            "dim_labels=b01f_01io->b01f, feature_group_count=192")
    dw_g = (f"x = f32[{n},28,28,192] parameter(0)\n  dy = f32[{n},28,28,192] parameter(1)\n"
            "  ROOT g = f32[3,3,1,192] convolution(x, dy), window={size=28x28 pad=1_1x1_1}, "
            "dim_labels=f01b_i01o->01bf, batch_group_count=192")
    st_f = (f"x = f32[{n},224,224,3] parameter(0)\n  w = f32[3,3,3,32] parameter(1)\n"
            f"  ROOT y = f32[{n},112,112,32] convolution(x, w), window={{size=3x3 stride=2x2 "
            "pad=0_1x0_1}, dim_labels=b01f_01io->b01f")
    st_g = (f"x = f32[{n},224,224,3] parameter(0)\n  dy = f32[{n},112,112,32] parameter(1)\n"
            "  ROOT g = f32[3,3,3,32] convolution(x, dy), window={size=112x112 pad=0_1x0_1 "
            "rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf")
    pw_f = (f"x = f32[{n},56,56,24] parameter(0)\n  w = f32[1,1,24,144] parameter(1)\n"
            f"  ROOT y = f32[{n},56,56,144] convolution(x, w), window={{size=1x1}}, "
            "dim_labels=b01f_01io->b01f")
    pw_g = (f"x = f32[{n},56,56,24] parameter(0)\n  dy = f32[{n},56,56,144] parameter(1)\n"
            "  ROOT g = f32[1,1,24,144] convolution(x, dy), window={size=56x56}, "
            "dim_labels=f01b_i01o->01bf")
    return [("depthwise 3x3, 28x28x192", dw_f, dw_g), ("stem 3x3 stride 2, 224x224x3->32", st_f, st_g),
            ("1x1 expand, 56x56x24->144", pw_f, pw_g)]


def time_module(cxla, body, tmp, name, repeat):
    path = os.path.join(tmp, name + ".hlo")
    with open(path, "w") as f:
        f.write(f"HloModule {name}\nENTRY e {{\n  {body}\n}}\n")
    r = subprocess.run([cxla, "run", path, "--backend", "cpu", "--repeat", str(repeat)],
                       capture_output=True, text=True)
    m = re.search(r"^run\s+median\s+([\d.]+) ms", r.stdout + r.stderr, re.M)
    if not m:
        sys.exit(f"cxla failed on {name}: {r.stderr[-1000:]}")
    return float(m.group(1))


def conv_bench(a):
    tmp = tempfile.mkdtemp(prefix="train_convs_")
    print(f"weight gradients against their forward convolutions (same multiply-adds), batch "
          f"{a.batch}, cpu backend, median of {a.repeat} ms; load average {os.getloadavg()[0]:.2f}")
    builds = [("this build", a.cxla)] + ([("baseline", a.baseline)] if a.baseline else [])
    for label, fwd, grad in conv_pairs(a.batch):
        row = []
        for who, cxla in builds:
            f = time_module(cxla, fwd, tmp, "fwd", a.repeat)
            g = time_module(cxla, grad, tmp, "grad", a.repeat)
            row.append(f"{who}: forward {f:7.1f}  gradient {g:7.1f}  ratio {g / f:5.2f}")
        print(f"{label:34s} " + " | ".join(row))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxla", default="build/cxla")
    ap.add_argument("--batch", type=int, default=96)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--backends", default="cpu")
    ap.add_argument("--baseline", help="another cxla binary to time on the cpu backend")
    ap.add_argument("--torch-threads", type=int, default=2)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--convs", action="store_true",
                    help="time the weight gradients alone against their forward convolutions")
    a = ap.parse_args()
    if a.convs:
        conv_bench(a)
        return
    tmp = tempfile.mkdtemp(prefix="train_bench_")
    text, params = train_programs.program(a.batch, a.size)
    hlo = os.path.join(tmp, "step.hlo")
    with open(hlo, "w") as f:
        f.write(text)
    arrays = make_inputs(params, 1)
    in_dir = os.path.join(tmp, "in")
    os.makedirs(in_dir)
    for j, arr in enumerate(arrays):
        np.save(os.path.join(in_dir, f"in{j}.npy"), arr)
    print(f"mobilenet_v2-like training step, batch {a.batch}, {a.size}x{a.size}x3, "
          f"{len(params)} parameters; load average {os.getloadavg()[0]:.2f}")
    results = {}
    for b in a.backends.split(","):
        out_dir = os.path.join(tmp, f"out_{b}")
        run_s, comp_s, mem, wall = run_cxla(a.cxla, hlo, in_dir, b, a.repeat, out_dir)
        results[b] = run_s
        outs = [np.load(os.path.join(out_dir, f"out{j}.npy")) for j in range(len(params) - 1)]
        results[b + "_outs"] = outs
        print(f"cxla {b:12s} run median {run_s:8.2f} s   compile {comp_s:6.2f} s   "
              f"peak {mem}   wall {wall:.1f} s   loss {float(outs[0]):.6f}")
    if a.baseline:  # another build (main's, say) on the cpu backend, same inputs
        run_s, comp_s, mem, wall = run_cxla(a.baseline, hlo, in_dir, "cpu", a.repeat,
                                            os.path.join(tmp, "out_base"))
        print(f"baseline cpu ({a.baseline}) run median {run_s:8.2f} s   peak {mem}; "
              f"this build / baseline: {results.get('cpu', float('nan')) / run_s:.2f}")
    if not a.no_torch:
        try:
            best, touts = torch_step(params, arrays, a.torch_threads, a.repeat)
        except ImportError:
            print("torch: not installed")
            return
        print(f"torch ({a.torch_threads} threads) best {best:8.2f} s   loss {float(touts[0]):.6f}")
        for b in a.backends.split(","):
            print(f"ratio cxla {b} / torch: {results[b] / best:.2f}")
        if a.check:
            # The gradients (old - new) / 0.01 against PyTorch's, each array's largest
            # difference over the largest gradient of the step (a gradient that is 0 in exact
            # arithmetic, such as a batch-norm offset before another batch norm, is noise in
            # both).
            for b in a.backends.split(","):
                outs = results[b + "_outs"]
                gs = [((p0 - x) / 0.01, (p0 - y) / 0.01)
                      for p0, x, y in zip(arrays[2:], outs[1:], touts[1:])]
                top = max(float(np.max(np.abs(gy))) for _, gy in gs)
                worst, where = 0.0, ""
                for (gx, gy), (_, _, what) in zip(gs, params[2:]):
                    d = float(np.max(np.abs(gx - gy))) / top
                    if d > worst:
                        worst, where = d, what
                dl = abs(float(outs[0]) - float(touts[0])) / abs(float(touts[0]))
                print(f"check cxla {b} vs torch: loss {dl:.1e}, gradients {worst:.1e} of the "
                      f"largest ({top:.3g}; worst: {where})")

if __name__ == "__main__":
    main()
