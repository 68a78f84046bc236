#!/usr/bin/python3
"""Fits the polynomials of src/cpu/cxla_math.h and prints their coefficients (as C hex
floats) and their largest relative error on a dense grid, against Python's libm in double.

    /usr/bin/python3 scripts/fit_math.py

Each polynomial is a least-squares fit at Chebyshev nodes (close to the minimax one),
weighted by the size of the function so that the error is relative. The errors printed
are the figures docs/semantics.md and the header's comments quote; the header holds the
coefficients printed here. The pieces of 2/pi and pi/2 come from pi computed with
integers (Machin's formula), to 400 bits.
"""
import math
from fractions import Fraction

import numpy as np
from numpy.polynomial import chebyshev as C
from numpy.polynomial import polynomial as P


def fit(g, a, b, deg, weight=None, n=4000, power_basis_in_x=True):
    """Fits g on [a, b]; returns power-basis coefficients in x (or in t = (x - m) / h)."""
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    x = (a + b) / 2 + (b - a) / 2 * t
    y = np.array([g(v) for v in x])
    w = None if weight is None else np.array([weight(v) for v in x])
    pc = C.cheb2poly(C.chebfit(t, y, deg, w=w))
    if not power_basis_in_x:
        return list(pc)
    m, h = (a + b) / 2, (b - a) / 2
    res, acc = np.zeros(deg + 1), np.array([1.0])
    for k in range(deg + 1):
        res[: len(acc)] += pc[k] * acc
        acc = P.polymul(acc, np.array([-m / h, 1 / h]))
    return list(res)


def horner(c, x):
    r = 0.0
    for v in reversed(c):
        r = r * x + v
    return r


def report(name, coefs, err):
    print(f"{name}: relative error 2^{math.log2(err):.1f}")
    print("   ", " ".join(float(v).hex() for v in coefs))


def max_rel(f, approx, xs):
    return max(abs(approx(x) - f(x)) / abs(f(x)) for x in xs if f(x) != 0)


def main():
    grid = lambda a, b: np.linspace(a, b, 20001)

    # exp: e^r - 1 = r + r^2/2 + r^3 P(r) on |r| <= ln2/2
    g = lambda r: (math.expm1(r) - r - r * r / 2) / r**3 if abs(r) > 1e-4 else 1 / 6 + r / 24
    c = fit(g, -0.3466, 0.3466, 5)
    q = lambda r: r + r * r * (0.5 + r * horner(c, r))
    report("exp q(r)", c, max_rel(math.expm1, q, grid(-0.3466, 0.3466)))

    # log: ln z = 2s + s^3 Q(s^2), |s| <= (sqrt2 - 1) / (sqrt2 + 1)
    smax = (math.sqrt(2) - 1) / (math.sqrt(2) + 1)

    def gq(z):
        s = math.sqrt(z)
        return 2 / 3 + 2 * z / 5 + 2 * z * z / 7 if s < 1e-3 else (2 * math.atanh(s) - 2 * s) / s**3

    c = fit(gq, 0, smax * smax * 1.0001, 5)
    lz = lambda s: 2 * s + s**3 * horner(c, s * s)
    report("log Q(s^2)", c, max_rel(lambda s: 2 * math.atanh(s), lz, grid(-smax, smax)))

    # atan: u + u^3 A(u^2) on |u| <= tan(pi/8)
    um = math.tan(math.pi / 8)

    def ga(z):
        u = math.sqrt(z)
        return -1 / 3 + z / 5 - z * z / 7 if u < 1e-3 else (math.atan(u) - u) / u**3

    c = fit(ga, 0, um * um * 1.0001, 6)
    report("atan A(u^2)", c, max_rel(math.atan, lambda u: u + u**3 * horner(c, u * u), grid(-um, um)))

    # erf below 1.25: |x| P(x^2)
    ge = lambda z: 2 / math.sqrt(math.pi) * (1 - z / 3) if z < 1e-8 else math.erf(math.sqrt(z)) / math.sqrt(z)
    c = fit(ge, 0, 1.25**2, 9)
    report("erf P(x^2), |x| < 1.25", c, max_rel(math.erf, lambda x: x * horner(c, x * x), grid(1e-6, 1.25)))

    # erf on [1.25, 3.95]: 1 - e^(-x^2) R(x), R in t = (x - 2.6) / 1.35; error absolute
    rf = lambda x: math.erfc(x) * math.exp(x * x)
    c = fit(rf, 1.25, 3.95, 13, weight=lambda x: 1 / (rf(x) / math.erf(x)), power_basis_in_x=False)
    big = lambda x: 1 - math.exp(-x * x) * horner(c, (x - 2.6) / 1.35)
    err = max(abs(big(x) - math.erf(x)) for x in grid(1.25, 3.95))
    report("erf R(t), [1.25, 3.95] (absolute)", c, err)

    # sin, cos: Taylor coefficients, truncation error on |a| <= pi/4
    s = [float(Fraction((-1) ** n, math.factorial(2 * n + 1))) for n in range(1, 6)]
    co = [float(Fraction((-1) ** n, math.factorial(2 * n))) for n in range(1, 7)]
    sp = lambda a: a + a**3 * horner(s, a * a)
    cp = lambda a: 1 + a * a * horner(co, a * a)
    report("sin Taylor to a^11", s, max_rel(math.sin, sp, grid(-math.pi / 4, math.pi / 4)))
    report("cos Taylor to a^12", co, max_rel(math.cos, cp, grid(-math.pi / 4, math.pi / 4)))

    # 2/pi in 24-bit pieces and pi/2 in 30-bit pieces, from pi to 400 bits
    def arctan_inv(n, bits):
        one, s_, t_, k, sign = 1 << bits, 0, (1 << bits) // n, 1, 1
        while t_:
            s_ += sign * (t_ // k)
            t_ //= n * n
            k += 2
            sign = -sign
        return s_

    B = 400
    pi = (16 * arctan_inv(5, B + 20) - 4 * arctan_inv(239, B + 20)) >> 20
    two_over_pi = (1 << (2 * B)) * 2 // pi
    pieces = [float(Fraction((two_over_pi >> (B - 24 * (i + 1))) & 0xFFFFFF, 2 ** (24 * (i + 1))))
              for i in range(9)]
    print("2/pi in 24-bit pieces:", " ".join(v.hex() for v in pieces))
    rem, parts = Fraction(pi, 2 ** (B + 1)), []
    for i in range(4):
        e = math.frexp(float(rem))[1]
        part = Fraction(math.floor(rem * 2 ** (30 - e)), 2 ** (30 - e)) if i < 3 else Fraction(float(rem))
        parts.append(float(part))
        rem -= part
    print("pi/2 in 30-bit pieces:", " ".join(v.hex() for v in parts))


if __name__ == "__main__":
    main()
