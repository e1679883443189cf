"""Theano's ``split`` (a tensor cut into pieces along an axis) and ``mgrid`` / ``ogrid``
(symbolic ``numpy.mgrid`` / ``numpy.ogrid``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graphc.tensor.basic import arange, ones_like
from graphc.tensor.variable import TensorLike, as_tensor_variable

__all__ = ["as_tensor", "mgrid", "ogrid", "split"]

as_tensor = as_tensor_variable  # Theano's short name


def split(x: TensorLike, splits_size: TensorLike, n_splits: int, axis: int = 0) -> list:
    """``n_splits`` consecutive pieces of ``x`` along ``axis``, piece ``i`` of length
    ``splits_size[i]`` (a vector). As in Theano, the sizes must add up to the axis's
    length: checked here when both are known, else the last pieces come out short."""
    x = as_tensor_variable(x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"split: axis {axis} is out of range for {x.type}")
    axis %= x.ndim
    if isinstance(splits_size, Sequence | np.ndarray):
        sizes = [int(s) for s in splits_size]
        length = x.type.shape[axis]
        if len(sizes) != n_splits or (length is not None and sum(sizes) != length):
            raise ValueError(f"split: sizes {sizes} do not cut an axis of {length} into {n_splits}")
    s = as_tensor_variable(splits_size)
    if s.ndim != 1 or s.dtype[:3] not in ("int", "uin"):
        raise TypeError(f"split: splits_size must be an integer vector, got {s.type}")
    pieces, start = [], 0
    for i in range(n_splits):
        stop = start + s[i]
        index: list = [slice(None)] * x.ndim
        index[axis] = slice(start, stop)
        pieces.append(x[tuple(index)])
        start = stop
    return pieces


class _Grid:
    """``mgrid[0:5, 1:3]`` / ``ogrid[...]``: integer ranges per axis, as numpy's."""

    def __init__(self, sparse: bool) -> None:
        self.sparse = sparse

    def __getitem__(self, key: slice | tuple[slice, ...]) -> list:
        slices = key if isinstance(key, tuple) else (key,)
        for sl in slices:
            if not isinstance(sl, slice) or sl.stop is None:
                raise TypeError(f"{self!r}[...] takes slices with a stop, got {sl!r}")
        ndim = len(slices)
        ranges = [arange(sl.start or 0, sl.stop, sl.step or 1) for sl in slices]
        ranges = [
            r.reshape([1] * j + [r.shape[0]] + [1] * (ndim - 1 - j)) for j, r in enumerate(ranges)
        ]
        if self.sparse:
            return ranges
        ones = [ones_like(r) for r in ranges]
        grids = []
        for i in range(ndim):
            grid = ranges[i]
            for j in range(ndim):
                if j != i:
                    grid = grid * ones[j]
            grids.append(grid)
        return grids

    def __repr__(self) -> str:
        return "ogrid" if self.sparse else "mgrid"


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)
