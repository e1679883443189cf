"""Helpers for testing graphs and Ops: ``verify_grad`` checks an Op's symbolic gradient
against central finite differences of the compiled function."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from graphc.compile.function import function
from graphc.reverse_mode import grad
from graphc.scalar.basic import FLOAT_DTYPES
from graphc.tensor.math import cast, mul
from graphc.tensor.math import sum as tsum
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

__all__ = ["GradientError", "verify_grad"]


class GradientError(AssertionError):
    """``verify_grad`` found a symbolic gradient that disagrees with finite differences."""

    def __init__(self, arg: int, err_pos: tuple, abs_err: float, rel_err: float,
                 abs_tol: float, rel_tol: float, analytic: float, numeric: float):  # fmt: skip
        self.arg = arg
        self.err_pos = err_pos
        self.abs_err = abs_err
        self.rel_err = rel_err
        self.abs_tol = abs_tol
        self.rel_tol = rel_tol
        self.analytic = analytic
        self.numeric = numeric
        super().__init__(
            f"gradient of input {arg} disagrees with finite differences at position {err_pos}: "
            f"analytic {analytic!r}, numeric {numeric!r}; max abs error {abs_err:.3g} "
            f"(tolerance {abs_tol:.3g}), max rel error {rel_err:.3g} (tolerance {rel_tol:.3g})"
        )


_DEFAULTS = {  # dtype: (eps, abs_tol, rel_tol)
    "float64": (1e-7, 1e-4, 1e-4),
    "float32": (1e-3, 1e-2, 1e-2),
}


def _compile(inputs: list, outputs: list) -> Callable:
    f = function(inputs, outputs, mode="FAST_COMPILE", on_unused_input="ignore")
    return lambda *vals: [np.asarray(o) for o in f(*vals)]


def verify_grad(
    fn: Callable,
    points: Sequence,
    n_tests: int = 2,
    rng=None,
    eps: float | None = None,
    abs_tol: float | None = None,
    rel_tol: float | None = None,
) -> None:
    """Check ``grad`` of ``fn(*inputs)`` at ``points`` against central finite differences.

    The output is projected on a random tensor to get a scalar cost. Integer points are passed
    through but not differentiated. Raises ``GradientError`` on disagreement: a position fails
    when both its absolute and its relative error exceed the tolerances.
    """
    if rng is None or isinstance(rng, int | np.integer):
        rng = np.random.default_rng(rng)
    pts = _points(points)
    inputs = [
        TensorType(str(p.dtype), [1 if s == 1 else None for s in p.shape])(f"input{k}")
        for k, p in enumerate(pts)
    ]
    out = fn(*inputs)
    if isinstance(out, list | tuple):
        raise TypeError("verify_grad: fn must return a single Variable")
    out = as_tensor_variable(out)
    float_idx = [k for k, p in enumerate(pts) if p.dtype.kind == "f"]
    if not float_idx:
        raise TypeError("verify_grad: no floating-point point to differentiate")
    out_val = _compile(inputs, [out])(*pts)[0]
    dtypes = {str(pts[k].dtype) for k in float_idx} | {str(out_val.dtype)}
    loose = "float32" if "float32" in dtypes or not dtypes <= set(FLOAT_DTYPES) else "float64"
    d_eps, d_abs, d_rel = _DEFAULTS[loose]
    eps = d_eps if eps is None else eps
    abs_tol = d_abs if abs_tol is None else abs_tol
    rel_tol = d_rel if rel_tol is None else rel_tol

    cost_dt = str(out_val.dtype) if out_val.dtype.kind == "f" else "float64"
    proj_var = TensorType(cost_dt, out.type.shape)("projection")
    cost = tsum(mul(cast(out, cost_dt), proj_var))
    sym = grad(cost, [inputs[k] for k in float_idx], disconnected_inputs="ignore")
    f_cost = _compile([*inputs, proj_var], [cost])
    f_grad = _compile([*inputs, proj_var], sym)
    for _ in range(n_tests):
        proj = np.asarray(rng.random(out_val.shape) - 0.5, dtype=cost_dt)
        analytic = f_grad(*pts, proj)
        for k, a in zip(float_idx, analytic):
            num = numeric_grad(lambda *args, proj=proj: f_cost(*args, proj)[0], pts, k, eps)
            _compare(k, np.asarray(a, dtype="float64"), num, abs_tol, rel_tol)


def _points(points: Sequence) -> list[np.ndarray]:
    """Private copies of the points (float16 computed in float32)."""
    pts = [np.array(p, copy=True) for p in points]
    if not pts:
        raise ValueError("verify_grad: no points given")
    for k, p in enumerate(pts):
        if p.dtype.kind not in "biuf":
            raise TypeError(f"verify_grad: point {k} has unsupported dtype {p.dtype}")
        if p.dtype == np.float16:
            pts[k] = p.astype("float32")
    return pts


def numeric_grad(cost: Callable, points: list, k: int, eps: float = 1e-6) -> np.ndarray:
    """Central differences (float64) of the scalar ``cost(*points)`` with respect to
    ``points[k]``."""
    x = points[k]
    num = np.zeros(x.shape, dtype="float64")
    for pos in np.ndindex(*x.shape):
        args = list(points)
        xp = x.copy()
        xp[pos] += eps
        args[k] = xp
        fp = float(cost(*args))
        xm = x.copy()
        xm[pos] -= eps
        args[k] = xm
        fm = float(cost(*args))
        num[pos] = (fp - fm) / (2 * eps)
    return num


def _compare(k: int, a: np.ndarray, num: np.ndarray, abs_tol: float, rel_tol: float) -> None:
    """Raise GradientError where the analytic gradient ``a`` of point ``k`` and the numeric
    ``num`` differ by more than both tolerances (or not finitely)."""
    if a.shape != num.shape:
        raise GradientError(k, (), np.inf, np.inf, abs_tol, rel_tol, a.shape, num.shape)
    abs_err = np.abs(a - num)
    denom = np.abs(a) + np.abs(num)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel_err = np.where(denom > 0, abs_err / np.where(denom > 0, denom, 1), 0.0)
    bad = (abs_err > abs_tol) & (rel_err > rel_tol) | ~np.isfinite(abs_err)
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        finite = np.isfinite(abs_err)
        raise GradientError(
            k, pos, float(np.where(finite, abs_err, np.inf).max()),
            float(np.where(finite, rel_err, np.inf).max()), abs_tol, rel_tol,
            float(a[pos]), float(num[pos]),
        )  # fmt: skip
