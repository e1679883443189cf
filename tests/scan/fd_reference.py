"""Central finite differences (float64) for the scan gradient tests: the independent
reference for first derivatives and Hessian-vector products."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def fd_grad(cost: Callable, points: list, k: int, eps: float = 1e-6) -> np.ndarray:
    """``d cost / d points[k]`` by central differences."""
    x = np.asarray(points[k], dtype="float64")
    out = np.zeros(x.shape)
    for pos in np.ndindex(*x.shape):
        d = np.zeros(x.shape)
        d[pos] = eps
        hi = [*points[:k], x + d, *points[k + 1 :]]
        lo = [*points[:k], x - d, *points[k + 1 :]]
        out[pos] = (float(cost(*hi)) - float(cost(*lo))) / (2 * eps)
    return out


def fd_directional(f: Callable, points: list, k: int, v: np.ndarray, eps: float = 1e-6):
    """``J_k(f) v``: the derivative of ``f`` along ``v`` in ``points[k]``."""
    x = np.asarray(points[k], dtype="float64")
    hi = [*points[:k], x + eps * v, *points[k + 1 :]]
    lo = [*points[:k], x - eps * v, *points[k + 1 :]]
    return (np.asarray(f(*hi)) - np.asarray(f(*lo))) / (2 * eps)


def fd_hvp(cost: Callable, points: list, k: int, v: np.ndarray, eps: float = 1e-3):
    """``H v`` (the Hessian of ``cost`` in ``points[k]`` times ``v``) from values of the
    cost alone: four-point differences mixed along ``e_i`` and ``v``, at steps ``eps`` and
    ``eps / 2`` combined by Richardson extrapolation (error O(eps**4))."""
    x = np.asarray(points[k], dtype="float64")
    out = np.zeros(x.shape)

    def at(dx):
        return float(cost(*points[:k], x + dx, *points[k + 1 :]))

    def mixed(e, h):
        dv = h * v
        return (at(e + dv) - at(e - dv) - at(-e + dv) + at(-e - dv)) / (4 * h * h)

    for pos in np.ndindex(*x.shape):
        e = np.zeros(x.shape)
        e[pos] = 1.0
        out[pos] = (4 * mixed(e * eps / 2, eps / 2) - mixed(e * eps, eps)) / 3
    return out
