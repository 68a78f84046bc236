#!/usr/bin/env python3
"""The NumPy twin of examples/train_mlp.hlo, used by tests/tools/test_example.sh.

    cxla run examples/train_mlp.hlo | /usr/bin/python3 tests/tools/train_mlp_ref.py

1. Checks the hand-written gradients (the same formulas as the module's backward pass)
   against central finite differences of the loss, in float64, at the initial weights and
   after 100 steps.
2. Trains the same model from the same data and initial weights in float64 and compares
   its loss per step with cxla's (read from stdin as `f32[300] {l0, l1, ...}`).
Exits 0 when both agree, 1 with a message otherwise.
"""
import re
import sys

import numpy as np

N, H, STEPS, LR = 64, 16, 300, 0.1


def data():
    # The constants are the module's f32 constants, written the same way.
    k = np.arange(N, dtype=np.float64)
    x = k * np.float32(0.0997331001) - np.float32(3.14159274)
    return x, np.sin(x)


def init():
    j = np.arange(H, dtype=np.float64)
    w1 = 2 * np.sin(j * np.float32(1.7) + 0.5)
    b1 = 2 * np.cos(j * np.float32(2.3))
    w2 = np.float32(0.1) * np.sin(j * np.float32(3.1) + 1)
    return [w1, b1, w2, np.float64(0)]


def loss(params, x, y):
    w1, b1, w2, b2 = params
    h = np.tanh(x[:, None] * w1[None, :] + b1[None, :])
    r = h @ w2 + b2 - y
    return float((r * r).sum() / N)


def loss_and_grads(params, x, y):
    """The module's forward and backward pass."""
    w1, b1, w2, b2 = params
    h = np.tanh(x[:, None] * w1[None, :] + b1[None, :])
    r = h @ w2 + b2 - y
    dp = r * (2.0 / N)
    dw2 = h.T @ dp
    db2 = dp.sum()
    dz = (dp[:, None] * w2[None, :]) * (1 - h * h)
    dw1 = x @ dz
    db1 = dz.sum(axis=0)
    return float((r * r).sum() / N), [dw1, db1, dw2, db2]


def check_gradients(params, x, y, where):
    _, grads = loss_and_grads(params, x, y)
    eps = 1e-6
    worst = 0.0
    # Central differences, one parameter entry at a time.
    flat = [np.array(v, dtype=np.float64).reshape(-1) for v in params]
    shapes = [np.shape(v) for v in params]
    for a, (vec, g) in enumerate(zip(flat, grads)):
        g = np.asarray(g).reshape(-1)
        for i in range(vec.size):
            def at(delta):
                q = [v.copy() for v in flat]
                q[a][i] += delta
                return loss([v.reshape(s) for v, s in zip(q, shapes)], x, y)
            numeric = (at(eps) - at(-eps)) / (2 * eps)
            err = abs(numeric - g[i]) / max(1e-3, abs(numeric))
            worst = max(worst, err)
    if worst > 1e-5:
        sys.exit("gradient check failed %s: worst relative error %.3g" % (where, worst))
    print("gradients agree with finite differences %s (worst relative error %.2g)"
          % (where, worst))


def main():
    text = sys.stdin.read()
    m = re.search(r"f32\[(\d+)\]\s*\{([^}]*)\}", text)
    if not m:
        sys.exit("no f32[...] result in cxla's output: %r" % text[:200])
    got = np.array([float(v) for v in m.group(2).split(",")])
    if len(got) != STEPS or int(m.group(1)) != STEPS:
        sys.exit("expected %d losses, got %d" % (STEPS, len(got)))

    x, y = data()
    params = init()
    check_gradients(params, x, y, "at the initial weights")
    want = []
    for step in range(STEPS):
        if step == 100:
            check_gradients(params, x, y, "after 100 steps")
        value, grads = loss_and_grads(params, x, y)
        want.append(value)
        params = [p - LR * g for p, g in zip(params, grads)]
    want = np.array(want)
    rel = np.abs(got - want) / want
    worst = int(np.argmax(rel))
    # f32 (cxla) against f64 (here): they differ by a few 1e-6 over 300 steps.
    if rel[worst] > 1e-4:
        sys.exit("loss at step %d: cxla %.9g, NumPy %.9g (relative difference %.3g)"
                 % (worst, got[worst], want[worst], rel[worst]))
    print("cxla's losses match NumPy's float64 training (worst relative difference %.2g)"
          % rel[worst])


if __name__ == "__main__":
    main()
