#!/usr/bin/python3
"""Fits the polynomials of src/cpu/cxla_math.h and prints their coefficients (as C hex
floats) and their largest relative error on a dense grid, against Python's libm in double:
first those of the float-only forms (float coefficients), then those of the double forms.

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


def f32(v):
    return float(np.float32(v))


def fit_f32(g, a, b, deg, weight=None):
    """As fit (power basis in x), with float coefficients: the lowest is rounded to a float,
    the rest refitted to what is left, and so on up (rounding them all at once at the end
    loses up to a bit more where the function is nearly its first term)."""
    fixed = []
    for _ in range(deg + 1):
        n = len(fixed)

        def rest(x, fixed=tuple(fixed), n=n):
            return (g(x) - sum(c * x**k for k, c in enumerate(fixed))) / x**n

        w = (lambda x: (weight(x) if weight else 1.0) * abs(x) ** n) if n else weight
        fixed.append(f32(fit(rest, a, b, deg - n, weight=w)[0]))
    return fixed


def report_f32(name, coefs, err):
    print(f"{name}: relative error 2^{math.log2(err):.1f}")
    print("   ", " ".join(float(v).hex() + "f" for v in coefs))


def float_forms():
    """The float-only forms of exp, expm1, tanh, logistic (e^r - 1), log, log1p (R) and erf."""
    grid = lambda a, b: np.linspace(a, b, 20001)

    # e^r - 1 = r + r^2 Q(r) on |r| <= ln2/2 (and 2% more: contraction moves k's rounding)
    rm = 0.3466 * 1.02
    gq = lambda r: (math.expm1(r) - r) / (r * r) if abs(r) > 1e-3 else 0.5 + r / 6 + r * r / 24
    c = fit_f32(gq, -rm, rm, 5)
    report_f32("float e^r - 1: Q(r)", c,
               max_rel(math.expm1, lambda r: r + r * r * horner(c, r), grid(-rm, rm)))

    # ln(1 + f) = 2s + s^3 P(s^2), s = f / (2 + f): R(z) = z P(z)
    sm = (math.sqrt(2) - 1) / (math.sqrt(2) + 1) * 1.001

    def gp(z):
        s_ = math.sqrt(z)
        return 2 / 3 + 2 * z / 5 + 2 * z * z / 7 if s_ < 1e-3 else (2 * math.atanh(s_) - 2 * s_) / (s_ * z)

    c = fit_f32(gp, 1e-12, sm * sm, 3)
    report_f32("float log: P(s^2)", c, max_rel(lambda s_: 2 * math.atanh(s_),
                                               lambda s_: 2 * s_ + s_**3 * horner(c, s_ * s_),
                                               grid(-sm, sm)))

    # erf below 1: x + x P(x^2), P fitted to erf(x)/x - 1 (relative to erf(x)/x)
    ge = lambda z: (2 / math.sqrt(math.pi) * (1 - z / 3 + z * z / 10) - 1 if z < 1e-6
                    else math.erf(math.sqrt(z)) / math.sqrt(z) - 1)
    c = [f32(v) for v in fit(ge, 0, 1.0, 6, weight=lambda z: 1 / (1 + ge(z)))]
    report_f32("float erf below 1: P(x^2)", c,
               max_rel(math.erf, lambda x: x + x * horner(c, x * x), grid(1e-6, 1.0)))

    # erf on [1, 4]: 1 - e^(-x^2) R(1/x), R fitted to erfc(x) e^(x^2) (relative)
    rf = lambda x: math.erfc(x) * math.exp(x * x)
    c = fit_f32(lambda u: rf(1 / u), 0.25, 1.0, 8, weight=lambda u: 1 / rf(1 / u))
    report_f32("float erf on [1, 4]: R(1/x), erfc(x) e^(x^2)", c,
               max_rel(rf, lambda x: horner(c, 1 / x), grid(1.0, 4.0)))


def main():
    float_forms()
    print("---- double forms")
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
