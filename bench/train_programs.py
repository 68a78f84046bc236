#!/usr/bin/env python3
"""Writes a stand-in of issue 19's mobilenet_v2 training step (the "Time" point) as HLO text.

    train_programs.py OUT_DIR [--batch N] [--size S]

XLA's mobilenet_v2 training-step dump (batch 96, 224x224x3 images) is not in this
repository and JAX is not installed here, so this writes the same step by generator, in the
forms JAX's autodiff lowers it to:

- the network: MobileNetV2 (a 3x3 stride-2 stem of 32 features; the 17 inverted-residual
  blocks (t, c, n, s) = (1,16,1,1), (6,24,2,2), (6,32,3,2), (6,64,4,2), (6,96,3,1),
  (6,160,3,2), (6,320,1,1): a 1x1 expansion, a depthwise 3x3 (feature_group_count = its
  features) with the block's stride, a 1x1 projection, a residual add where the shapes
  agree; a 1x1 convolution to 1280 features; global average pooling; a 1000-class dense
  layer), NHWC activations and HWIO kernels (b01f_01io->b01f), TensorFlow's SAME padding
  (0_1 for a stride 2 on an even size), batch norm in training mode (the batch's mean and
  variance, eps 1e-3) and relu6 after every convolution but the projections;
- the loss: softmax cross-entropy against one-hot labels (an f32[N,1000] parameter),
  averaged over the batch;
- the backward pass as JAX's transpose rules write it: a convolution's input gradient is a
  convolution of the output gradient with the reversed kernel (lhs_dilate = the stride,
  dim_labels b01f_01oi->b01f; b01f_01io->b01f with the feature groups for a depthwise one),
  its weight gradient a convolution of the input with the output gradient
  (f01b_i01o->01bf, window = the output's spatial size, rhs_dilate = the stride; for a
  depthwise one batch_group_count = its features: the form that ran the loops before
  oneDNN's backward weights took it);
- the update: plain SGD (w - 0.01 * dw) of every kernel, batch-norm scale and offset and
  the dense layer; the results are the loss and the updated parameters (158 of them).

--batch and --size make it smaller (the interpreter's run, a check): the defaults are the
issue's 96 and 224. The file is mobilenet_v2_train_bN_sS.hlo in OUT_DIR."""
import argparse
import os


class Hlo:
    """A computation written line by line: values are (name, dims) of f32 arrays."""

    def __init__(self):
        self.lines = []
        self.params = []
        self.n = 0

    def emit(self, dims, text, t="f32"):
        name = f"v{self.n}"
        self.n += 1
        self.lines.append(f"  {name} = {t}[{','.join(map(str, dims))}] {text}")
        return (name, list(dims))

    def param(self, dims, what):
        i = len(self.params)
        name = f"p{i}"
        self.params.append((name, list(dims), what))
        self.lines.append(f"  {name} = f32[{','.join(map(str, dims))}] parameter({i})")
        return (name, list(dims))

    def scalar(self, v):
        return self.emit([], f"constant({v!r})")

    def bcast(self, x, dims, keep):
        ks = "{" + ",".join(map(str, keep)) + "}"
        return self.emit(dims, f"broadcast({x[0]}), dimensions={ks}")

    def full(self, v, dims):
        return self.bcast(self.scalar(v), dims, [])

    def bin(self, op, a, b):
        return self.emit(a[1], f"{op}({a[0]}, {b[0]})")

    def un(self, op, a):
        return self.emit(a[1], f"{op}({a[0]})")

    def reduce(self, x, over, init="0", comp="sum"):
        dims = [d for i, d in enumerate(x[1]) if i not in over]
        c = self.emit([], f"constant({init})")
        os_ = "{" + ",".join(map(str, over)) + "}"
        return self.emit(dims, f"reduce({x[0]}, {c[0]}), dimensions={os_}, to_apply={comp}")


def same_pad(size, k, s):
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return out, total // 2, total - total // 2


class Conv:
    """A convolution without bias (kernel k x k, stride s, SAME), grouped when depthwise."""

    def __init__(self, h, cin, cout, k, s, depthwise, tag):
        self.k, self.s, self.dw, self.cin, self.cout = k, s, depthwise, cin, cout
        self.w = h.param([k, k, 1 if depthwise else cin, cout], f"{tag} kernel")

    def fwd(self, h, x):
        self.x = x
        n, hh, ww, _ = x[1]
        self.out, self.plo, self.phi = same_pad(hh, self.k, self.s)
        o = self.out
        win = f"size={self.k}x{self.k}"
        if self.s > 1:
            win += f" stride={self.s}x{self.s}"
        if self.plo or self.phi:
            win += f" pad={self.plo}_{self.phi}x{self.plo}_{self.phi}"
        g = f", feature_group_count={self.cin}" if self.dw else ""
        return h.emit([n, o, o, self.cout], f"convolution({x[0]}, {self.w[0]}), window={{{win}}}, "
                      f"dim_labels=b01f_01io->b01f{g}")

    def bwd(self, h, dy, need_dx):
        n, hh, _, _ = self.x[1]
        k, s, o = self.k, self.s, self.out
        # The weight gradient: the input against the output gradient.
        phi = (k - 1) + (o - 1) * s + 1 - hh - self.plo
        win = f"size={o}x{o}"
        if self.plo or phi:
            win += f" pad={self.plo}_{phi}x{self.plo}_{phi}"
        if s > 1:
            win += f" rhs_dilate={s}x{s}"
        bg = f", batch_group_count={self.cin}" if self.dw else ""
        self.dw_grad = h.emit(self.w[1], f"convolution({self.x[0]}, {dy[0]}), window={{{win}}}, "
                              f"dim_labels=f01b_i01o->01bf{bg}")
        if not need_dx:
            return None
        # The input gradient: the output gradient against the reversed kernel.
        w = self.w
        if k > 1:
            w = h.emit(w[1], f"reverse({w[0]}), dimensions={{0,1}}")
        plo = k - 1 - self.plo
        phi = hh - 1 - (o - 1) * s + (k - 1) - plo
        win = f"size={k}x{k}"
        if plo or phi:
            win += f" pad={plo}_{phi}x{plo}_{phi}"
        if s > 1:
            win += f" lhs_dilate={s}x{s}"
        if self.dw:
            lab = f"b01f_01io->b01f, feature_group_count={self.cin}"
        else:
            lab = "b01f_01oi->b01f"
        return h.emit(self.x[1], f"convolution({dy[0]}, {w[0]}), window={{{win}}}, dim_labels={lab}")


class BatchNorm:
    """Batch norm in training mode over N, H, W, per feature."""

    def __init__(self, h, c, tag):
        self.c = c
        self.gamma = h.param([c], f"{tag} scale")
        self.beta = h.param([c], f"{tag} offset")

    def fwd(self, h, x):
        dims = x[1]
        self.m = dims[0] * dims[1] * dims[2]
        inv_m = h.full(1.0 / self.m, [self.c])
        mean = h.bin("multiply", h.reduce(x, [0, 1, 2]), inv_m)
        xc = h.bin("subtract", x, h.bcast(mean, dims, [3]))
        var = h.bin("multiply", h.reduce(h.bin("multiply", xc, xc), [0, 1, 2]), inv_m)
        self.inv = h.un("rsqrt", h.bin("add", var, h.full(1e-3, [self.c])))
        self.xhat = h.bin("multiply", xc, h.bcast(self.inv, dims, [3]))
        y = h.bin("multiply", self.xhat, h.bcast(self.gamma, dims, [3]))
        return h.bin("add", y, h.bcast(self.beta, dims, [3]))

    def bwd(self, h, dy):
        dims = dy[1]
        self.dbeta = h.reduce(dy, [0, 1, 2])
        self.dgamma = h.reduce(h.bin("multiply", dy, self.xhat), [0, 1, 2])
        scale = h.bin("multiply", h.bin("multiply", self.gamma, self.inv),
                      h.full(1.0 / self.m, [self.c]))
        t = h.bin("multiply", dy, h.full(float(self.m), dims))
        t = h.bin("subtract", t, h.bcast(self.dbeta, dims, [3]))
        t = h.bin("subtract", t, h.bin("multiply", self.xhat, h.bcast(self.dgamma, dims, [3])))
        return h.bin("multiply", t, h.bcast(scale, dims, [3]))


class Relu6:
    def fwd(self, h, x):
        self.x = x
        return h.emit(x[1], f"clamp({h.full(0.0, x[1])[0]}, {x[0]}, {h.full(6.0, x[1])[0]})")

    def bwd(self, h, dy):
        dims = dy[1]
        gt = h.emit(dims, f"compare({self.x[0]}, {h.full(0.0, dims)[0]}), direction=GT", "pred")
        lt = h.emit(dims, f"compare({self.x[0]}, {h.full(6.0, dims)[0]}), direction=LT", "pred")
        inside = h.emit(dims, f"and({gt[0]}, {lt[0]})", "pred")
        return h.emit(dims, f"select({inside[0]}, {dy[0]}, {h.full(0.0, dims)[0]})")


def conv_bn(h, cin, cout, k, s, dw, relu, tag):
    layers = [Conv(h, cin, cout, k, s, dw, tag), BatchNorm(h, cout, tag)]
    if relu:
        layers.append(Relu6())
    return layers


def program(batch, size):
    h = Hlo()
    image = h.param([batch, size, size, 3], "images")
    labels = h.param([batch, 1000], "one-hot labels")
    # The network as a list of stages; a stage is (layers, residual).
    stages = [(conv_bn(h, 3, 32, 3, 2, False, True, "stem"), False)]
    cin, nb = 32, 0
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hid = cin * t
            tag = f"block{nb}"
            layers = []
            if t != 1:
                layers += conv_bn(h, cin, hid, 1, 1, False, True, tag + " expand")
            layers += conv_bn(h, hid, hid, 3, stride, True, True, tag + " depthwise")
            layers += conv_bn(h, hid, c, 1, 1, False, False, tag + " project")
            stages.append((layers, stride == 1 and cin == c))
            cin, nb = c, nb + 1
    stages.append((conv_bn(h, cin, 1280, 1, 1, False, True, "head"), False))
    dense_w = h.param([1280, 1000], "dense kernel")
    dense_b = h.param([1000], "dense bias")

    # Forward.
    x = image
    for layers, res in stages:
        x0 = x
        for layer in layers:
            x = layer.fwd(h, x)
        if res:
            x = h.bin("add", x, x0)
    n, hh, ww, c = x[1]
    pooled = h.bin("multiply", h.reduce(x, [1, 2]), h.full(1.0 / (hh * ww), [n, c]))
    logits = h.emit([n, 1000], f"dot({pooled[0]}, {dense_w[0]}), lhs_contracting_dims={{1}}, "
                    "rhs_contracting_dims={0}")
    logits = h.bin("add", logits, h.bcast(dense_b, [n, 1000], [1]))
    mx = h.reduce(logits, [1], "-inf", "max")
    z = h.bin("subtract", logits, h.bcast(mx, [n, 1000], [0]))
    e = h.un("exponential", z)
    se = h.reduce(e, [1])
    logp = h.bin("subtract", z, h.bcast(h.un("log", se), [n, 1000], [0]))
    total = h.reduce(h.bin("multiply", labels, logp), [0, 1])
    loss = h.bin("multiply", total, h.scalar(-1.0 / n))

    # Backward.
    rows = h.reduce(labels, [1])
    soft = h.bin("divide", e, h.bcast(se, [n, 1000], [0]))
    dlog = h.bin("subtract", h.bin("multiply", soft, h.bcast(rows, [n, 1000], [0])), labels)
    dlog = h.bin("multiply", dlog, h.full(1.0 / n, [n, 1000]))
    d_dense_w = h.emit([1280, 1000], f"dot({pooled[0]}, {dlog[0]}), lhs_contracting_dims={{0}}, "
                       "rhs_contracting_dims={0}")
    d_dense_b = h.reduce(dlog, [0])
    dpool = h.emit([n, 1280], f"dot({dlog[0]}, {dense_w[0]}), lhs_contracting_dims={{1}}, "
                   "rhs_contracting_dims={1}")
    dpool = h.bin("multiply", dpool, h.full(1.0 / (hh * ww), [n, 1280]))
    dx = h.bcast(dpool, [n, hh, ww, c], [0, 3])
    for si in range(len(stages) - 1, -1, -1):
        layers, res = stages[si]
        dres = dx
        for li in range(len(layers) - 1, -1, -1):
            layer = layers[li]
            if isinstance(layer, Conv):
                dx = layer.bwd(h, dx, si > 0)
            else:
                dx = layer.bwd(h, dx)
        if res:
            dx = h.bin("add", dx, dres)

    # SGD.
    grads = {}
    for layers, _ in stages:
        for layer in layers:
            if isinstance(layer, Conv):
                grads[layer.w[0]] = layer.dw_grad
            elif isinstance(layer, BatchNorm):
                grads[layer.gamma[0]] = layer.dgamma
                grads[layer.beta[0]] = layer.dbeta
    grads[dense_w[0]] = d_dense_w
    grads[dense_b[0]] = d_dense_b
    outs = [loss]
    for name, dims, _ in h.params[2:]:
        p = (name, dims)
        step = h.bin("multiply", grads[name], h.full(0.01, dims))
        outs.append(h.bin("subtract", p, step))
    shapes = ", ".join(f"f32[{','.join(map(str, o[1]))}]" for o in outs)
    h.lines.append(f"  ROOT out = ({shapes}) tuple({', '.join(o[0] for o in outs)})")
    head = [f"HloModule mobilenet_v2_train_b{batch}_s{size}", "",
            "sum {", "  a = f32[] parameter(0)", "  b = f32[] parameter(1)",
            "  ROOT s = f32[] add(a, b)", "}", "",
            "max {", "  a = f32[] parameter(0)", "  b = f32[] parameter(1)",
            "  ROOT m = f32[] maximum(a, b)", "}", "", "ENTRY train_step {"]
    return "\n".join(head + h.lines + ["}", ""]), h.params


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--batch", type=int, default=96)
    ap.add_argument("--size", type=int, default=224)
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    text, params = program(a.batch, a.size)
    path = os.path.join(a.out_dir, f"mobilenet_v2_train_b{a.batch}_s{a.size}.hlo")
    with open(path, "w") as f:
        f.write(text)
    weights = sum(eval("*".join(map(str, d)) or "1") for _, d, _ in params[2:])
    print(f"{path}: {len(params)} parameters ({weights} weights)")


if __name__ == "__main__":
    main()
