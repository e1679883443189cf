"""Derive the polynomial coefficients of graphc/linker/c/vecmath.py and print them.

    python3 scripts/vecmath_coefficients.py      # needs mpmath (not a graphc dependency)

Each polynomial is a Chebyshev fit (near-minimax) in 200-digit arithmetic, its
coefficients rounded to the C type, and the printed error is measured with the rounded
coefficients against the exact function at 4,000 points (relative to the term the
polynomial stands for, in units of the type's epsilon):

- ``Q(r) = (exp(r) - 1 - r) / r**2`` on |r| <= ln(2)/2 (+ slack for the rounding of n),
  so that ``exp(r) = 1 + r + r*r*Q(r)`` and ``expm1(r) = r + r*r*Q(r)``;
- ``P(z) = (2*atanh(s) - 2*s) / s**3`` with ``z = s*s`` on 0 <= z <= ((sqrt(2)-1)/(sqrt(2)+1))**2,
  so that ``log(1+f) = f - f*f/2 + s*(f*f/2 + z*P(z))`` with ``s = f/(2+f)``.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np

mp.mp.dps = 200


def q_exp(r):
    if r == 0:
        return mp.mpf(1) / 2
    return (mp.exp(r) - 1 - r) / r**2


def p_log(z):
    if z == 0:
        return mp.mpf(2) / 3
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / s**3


def fit(fn, lo, hi, degree, dtype):
    poly, _ = mp.chebyfit(fn, [lo, hi], degree + 1, error=True)
    coeffs = [dtype(float(c)) for c in reversed(poly)]  # c0 first
    worst = mp.mpf(0)
    for k in range(4001):
        t = lo + (hi - lo) * k / 4000
        approx = mp.mpf(0)
        for c in reversed(coeffs):
            approx = approx * t + mp.mpf(float(c))
        worst = max(worst, abs(approx / fn(t) - 1))
    return coeffs, float(worst / np.finfo(dtype).eps)


def show(name, coeffs, err, dtype):
    lit = (lambda c: float(c).hex()) if dtype is np.float64 else (lambda c: float(c).hex() + "f")
    print(f"{name}: relative error {err:.3g} eps")
    for k, c in enumerate(coeffs):
        print(f"    c{k} = {lit(c)}  /* {float(c):.17g} */")


def main() -> None:
    ln2 = mp.log(2)
    zmax = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2
    for dtype, qdeg, pdeg in ((np.float64, 9, 6), (np.float32, 4, 2)):
        rmax = ln2 / 2 * (1 + mp.mpf(2) ** -20)
        show(f"Q {dtype.__name__}", *fit(q_exp, -rmax, rmax, qdeg, dtype), dtype)
        show(f"P {dtype.__name__}", *fit(p_log, 0, zmax * 1.0001, pdeg, dtype), dtype)


if __name__ == "__main__":
    main()
