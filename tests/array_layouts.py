"""The same values in other memory layouts, for checking C code on any strides (test helper)."""

from __future__ import annotations

import numpy as np


def layout(a: np.ndarray, kind: str) -> np.ndarray:
    """``a``'s values in the memory layout ``kind`` (same shape and dtype)."""
    if kind == "C":
        return np.ascontiguousarray(a)
    if kind == "F":
        return np.asfortranarray(a)
    if kind == "strided":  # every other element of a bigger buffer along every axis
        big = np.zeros(tuple(2 * s + 1 for s in a.shape), a.dtype)
        view = big[tuple(slice(1, None, 2) for _ in a.shape)]
        view[...] = a
        return view
    if kind == "transposed":
        return np.ascontiguousarray(a.T).T
    if kind == "reversed":
        big = np.ascontiguousarray(a[tuple(slice(None, None, -1) for _ in a.shape)])
        return big[tuple(slice(None, None, -1) for _ in a.shape)]
    raise ValueError(kind)
