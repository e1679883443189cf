"""Array functions with Theano's signatures: ``sort``, ``argsort``, ``cumsum``, ``cumprod``,
``repeat`` and ``tile``; ``graphc.tensor.extra_ops`` is also Theano's import path."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op
from graphc.tensor.basic import _i64, _make_shape_vector, _shape_vector, flatten, shape, shape_tuple
from graphc.tensor.math import sum as tsum
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from graphc.graph.basic import Variable
    from graphc.tensor.variable import TensorLike

__all__ = [
    "ArgSortOp", "CumOp", "PermuteAlongAxis", "RepeatOp", "SortOp", "TileOp", "argsort",
    "cumprod", "cumsum", "repeat", "sort", "tile",
]  # fmt: skip

_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_KINDS = ("quicksort", "mergesort", "heapsort", "stable")


def _axis(name: str, x: Variable, axis: int) -> int:
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"{name}: axis {axis} is out of range for {x} of type {x.type}")
    return axis % max(x.ndim, 1)


def _flat_or(x: TensorLike, axis: int | Sequence[int] | None):
    """``(x, axis)``, with ``x`` flattened and ``axis`` 0 when ``axis`` is None."""
    x = as_tensor_variable(x)
    if axis is None:
        return flatten(x, 1), 0
    if x.ndim == 0:
        raise TypeError(f"axis={axis} given for the 0-d tensor {x}")
    return x, int(axis)


def _float(x) -> bool:
    return x.dtype in ("float16", "float32", "float64")


# ------------------------------------------------------------------ sort / argsort


class PermuteAlongAxis(Op):
    """``take_along_axis(x, idx, axis)``, or with ``inverse`` its adjoint (a scatter)."""

    __props__ = ("axis", "inverse")

    def __init__(self, axis: int, inverse: bool = False):
        self.axis, self.inverse = int(axis), bool(inverse)

    def make_node(self, x: Variable, idx: Variable) -> Apply:
        x, idx = as_tensor_variable(x), as_tensor_variable(idx)
        if idx.dtype not in _INTS or idx.ndim != x.ndim:
            raise TypeError(f"{self}: idx must be an integer tensor like {x.type}, got {idx.type}")
        return Apply(self, [x, idx], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, idx = inputs
        if x.shape != idx.shape:
            raise ValueError(f"{self}: x {x.shape} and idx {idx.shape} differ in shape")
        if self.inverse:
            out = np.empty_like(x)
            np.put_along_axis(out, idx, x, self.axis)
        else:
            out = np.take_along_axis(x, idx, self.axis)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[0])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, idx = inputs
        return [PermuteAlongAxis(self.axis, not self.inverse)(gouts[0], idx), None]


class SortOp(Op):
    """``numpy.sort`` along ``axis``."""

    __props__ = ("kind", "axis")

    def __init__(self, kind: str = "quicksort", axis: int = -1):
        if kind not in _KINDS:
            raise ValueError(f"sort: kind must be one of {_KINDS}, got {kind!r}")
        self.kind, self.axis = kind, int(axis)

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        _axis("sort", x, self.axis)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.sort(inputs[0], axis=self.axis, kind=self.kind)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[0])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        (x,) = inputs
        idx = ArgSortOp(self.kind, self.axis)(x)
        return [PermuteAlongAxis(self.axis % x.ndim, inverse=True)(gouts[0], idx)]


class ArgSortOp(SortOp):
    """``numpy.argsort`` along ``axis`` (int64 indices)."""

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        _axis("argsort", x, self.axis)
        return Apply(self, [x], [TensorType("int64", x.type.shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        out = np.argsort(inputs[0], axis=self.axis, kind=self.kind)
        output_storage[0][0] = out.astype("int64", copy=False)

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [None]


def _order(order):
    if order is not None:
        raise NotImplementedError("sort/argsort: order (structured arrays) is not supported")


def sort(
    a: TensorLike,
    axis: int | Sequence[int] | None = -1,
    kind: str = "quicksort",
    order: str | Sequence[str] | None = None,
):
    """Sorted copy of ``a`` along ``axis`` (flattened first when ``axis`` is None)."""
    _order(order)
    x, ax = _flat_or(a, axis)
    return SortOp(kind, ax)(x)


def argsort(
    a: TensorLike,
    axis: int | Sequence[int] | None = -1,
    kind: str = "quicksort",
    order: str | Sequence[str] | None = None,
):
    """Indices that sort ``a`` along ``axis`` (flattened first when ``axis`` is None)."""
    _order(order)
    x, ax = _flat_or(a, axis)
    return ArgSortOp(kind, ax)(x)


# ------------------------------------------------------------------ cumsum / cumprod


class CumOp(Op):
    """Cumulative sum (``mode="add"``) or product (``mode="mul"``) along ``axis``."""

    __props__ = ("axis", "mode")

    def __init__(self, axis: int, mode: str = "add"):
        if mode not in ("add", "mul"):
            raise ValueError(f"CumOp: mode must be 'add' or 'mul', got {mode!r}")
        self.axis, self.mode = int(axis), mode

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        _axis(f"cum{'sum' if self.mode == 'add' else 'prod'}", x, self.axis)
        dtype = str((np.cumsum if self.mode == "add" else np.cumprod)(np.zeros(1, x.dtype)).dtype)
        return Apply(self, [x], [TensorType(dtype, x.type.shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        fn = np.cumsum if self.mode == "add" else np.cumprod
        output_storage[0][0] = fn(inputs[0], axis=self.axis)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [tuple(shapes[0])]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        (x,) = inputs
        (g,) = gouts
        if not _float(x):
            return [None]
        ax = self.axis % x.ndim
        rev = (slice(None),) * ax + (slice(None, None, -1),)
        if self.mode == "add":
            return [CumOp(ax, "add")(g[rev])[rev]]
        # d out_j / d x_i = out_j / x_i for j >= i: undefined where x has zeros, as in Theano.
        return [CumOp(ax, "add")((g * self(x))[rev])[rev] / x]


def cumsum(x: TensorLike, axis: int | Sequence[int] | None = None):
    """Cumulative sum along ``axis`` (of the flattened ``x`` when ``axis`` is None)."""
    x, ax = _flat_or(x, axis)
    return CumOp(ax, "add")(x)


def cumprod(x: TensorLike, axis: int | Sequence[int] | None = None):
    """Cumulative product along ``axis`` (of the flattened ``x`` when ``axis`` is None).
    Its gradient divides by ``x``, so it is not finite where ``x`` has zeros (as in Theano)."""
    x, ax = _flat_or(x, axis)
    return CumOp(ax, "mul")(x)


# ------------------------------------------------------------------ repeat


class RepeatOp(Op):
    """``numpy.repeat(x, repeats, axis)`` with ``repeats`` a 0-d or 1-d integer tensor."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def make_node(self, x: Variable, repeats: Variable) -> Apply:
        x, r = as_tensor_variable(x), as_tensor_variable(repeats)
        if r.dtype not in _INTS or r.ndim > 1:
            raise TypeError(f"repeat: repeats must be an integer scalar or vector, got {r.type}")
        _axis("repeat", x, self.axis)
        shape = list(x.type.shape)
        shape[self.axis] = None
        return Apply(self, [x, r], [TensorType(x.dtype, tuple(shape))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, r = inputs
        if np.any(r < 0):
            raise ValueError(f"{self}: repeats must be non-negative, got {r}")
        if r.ndim == 1 and r.shape[0] != x.shape[self.axis]:
            raise ValueError(
                f"{self}: {r.shape[0]} repeats for an axis of length {x.shape[self.axis]}"
            )
        output_storage[0][0] = np.repeat(x, r, axis=self.axis)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        x, r = node.inputs
        out = list(shapes[0])
        n = r * out[self.axis] if r.ndim == 0 else tsum(r)
        out[self.axis] = n.astype("int64")
        return [tuple(out)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, r = inputs
        if not _float(x):
            return [None, None]
        return [RepeatGrad(self.axis)(gouts[0], r, shape_tuple(x)[self.axis]), None]


class RepeatGrad(Op):
    """Adjoint of ``RepeatOp``: sums each run of repeated entries back into one."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def make_node(self, g: Variable, repeats: Variable, length: Variable) -> Apply:
        g, r, n = (as_tensor_variable(v) for v in (g, repeats, length))
        shape = list(g.type.shape)
        shape[self.axis] = None
        return Apply(self, [g, r, n], [TensorType(g.dtype, tuple(shape))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        g, r, n = inputs
        n = int(n)
        owner = np.repeat(np.arange(n), np.broadcast_to(r, (n,)))
        gm = np.moveaxis(g, self.axis, 0)
        out = np.zeros((n,) + gm.shape[1:], g.dtype)
        np.add.at(out, owner, gm)
        output_storage[0][0] = np.ascontiguousarray(np.moveaxis(out, 0, self.axis))

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        out = list(shapes[0])
        out[self.axis] = node.inputs[2]
        return [tuple(out)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [RepeatOp(self.axis)(gouts[0], inputs[1]), None, None]


def repeat(x: TensorLike, repeats: TensorLike, axis: int | Sequence[int] | None = None):
    """``numpy.repeat``: ``repeats`` is an int, an integer scalar or a vector of counts."""
    x, ax = _flat_or(x, axis)
    return RepeatOp(ax)(x, repeats)


# ------------------------------------------------------------------ tile


class TileOp(Op):
    """``numpy.tile(x, reps)`` for an integer vector ``reps`` of static length ``ndim``."""

    __props__ = ("ndim",)

    def __init__(self, ndim: int):
        self.ndim = int(ndim)

    def make_node(self, x: Variable, reps: Variable) -> Apply:
        x, reps = as_tensor_variable(x), as_tensor_variable(reps)
        if x.ndim > self.ndim:
            raise ValueError(f"tile: reps has {self.ndim} entries for {x.ndim}-d {x}")
        return Apply(self, [x, reps], [TensorType(x.dtype, (None,) * self.ndim)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, reps = inputs
        if reps.shape != (self.ndim,) or np.any(reps < 0):
            raise ValueError(f"{self}: reps must be {self.ndim} non-negative ints, got {reps}")
        output_storage[0][0] = np.tile(x, tuple(int(r) for r in reps))

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        x, reps = node.inputs
        xs = (_i64(1),) * (self.ndim - x.ndim) + tuple(shapes[0])
        return [tuple(xs[k] * reps[_i64(k)] for k in range(self.ndim))]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, reps = inputs
        if not _float(x):
            return [None, None]
        return [TileGrad()(gouts[0], reps, shape(x)), None]


class TileGrad(Op):
    """Adjoint of ``TileOp``: ``(g, reps, x_shape)`` -> the tiles of ``g`` summed."""

    __props__ = ()

    def make_node(self, g: Variable, reps: Variable, x_shape: Variable) -> Apply:
        g, reps, xs = (as_tensor_variable(v) for v in (g, reps, x_shape))
        n = xs.type.shape[0]
        if n is None:
            raise ValueError(f"{self}: the length of x_shape must be known")
        return Apply(self, [g, reps, xs], [TensorType(g.dtype, (None,) * n)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        g, reps, xs = inputs
        padded = (1,) * (g.ndim - len(xs)) + tuple(int(s) for s in xs)
        split = [int(v) for pair in zip(reps, padded) for v in pair]
        out = g.reshape(split).sum(axis=tuple(range(0, 2 * g.ndim, 2)))
        output_storage[0][0] = out.reshape(tuple(int(s) for s in xs))

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        xs = node.inputs[2]
        return [tuple(xs[_i64(k)] for k in range(xs.type.shape[0]))]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        g, reps, _ = inputs
        return [TileOp(g.ndim)(gouts[0], reps), None, None]


def tile(x: TensorLike, reps: TensorLike, ndim: int | None = None):
    """``numpy.tile``: ``reps`` is a sequence of ints/int scalars or an integer vector."""
    x = as_tensor_variable(x)
    entries = _shape_vector(reps, "tile")
    if ndim is not None and int(ndim) != max(len(entries), x.ndim):
        if int(ndim) < max(len(entries), x.ndim):
            raise ValueError(f"tile: ndim={ndim} is smaller than the result's rank")
    n = max(len(entries), x.ndim, int(ndim or 0))
    entries = [_i64(1)] * (n - len(entries)) + list(entries)
    return TileOp(n)(x, _make_shape_vector(entries))
