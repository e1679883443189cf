"""Functions of Theano's ``theano.tensor`` namespace that graphc lacked: predicates
(``isnan``, ``isinf``, ``isclose``, ``allclose``), ``nonzero`` and friends, ``diag`` /
``diagonal``, triangles (``tri``, ``tril``, ``triu``), rearrangements (``roll``, ``squeeze``,
``swapaxes``, ``transpose``, ``shape_padaxis``, ...) and small element-wise helpers."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op
from graphc.tensor.basic import arange, concatenate, stack, zeros_like
from graphc.tensor.extra_ops import argsort
from graphc.tensor.math import (
    abs,
    and_,
    cast,
    ceil,
    eq,
    floor,
    ge,
    int_div,
    le,
    log1p,
    maximum,
    minimum,
    mod,
    neq,
    or_,
    sqr,
    sqrt,
    switch,
)
from graphc.tensor.math import all as tall
from graphc.tensor.math import argmax as targmax
from graphc.tensor.math import max as tmax
from graphc.tensor.math import min as tmin
from graphc.tensor.subtensor import take
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from graphc.graph.basic import Variable
    from graphc.tensor.variable import TensorLike

__all__ = [
    "Rebroadcast", "addbroadcast", "patternbroadcast", "unbroadcast", "bincount", "compress",
    "diff", "fill_diagonal", "to_one_hot",
    "allclose", "arccosh", "arcsinh", "arctanh", "deg2rad", "diag", "diagonal", "divmod",
    "flatnonzero", "floor_div", "horizontal_stack", "inv",
    "inverse_permutation", "isclose", "isinf", "isnan", "largest", "max_and_argmax",
    "nonzero", "nonzero_values", "ptp", "rad2deg", "roll", "shape_padaxis", "smallest",
    "square", "squeeze", "stacklists", "swapaxes", "transpose", "tri", "tril", "triu", "trunc",
    "vertical_stack",
]  # fmt: skip


def _is_float(x: Variable) -> bool:
    return x.dtype.startswith(("float", "complex"))


# ------------------------------------------------------------------ predicates


def isnan(a: TensorLike):
    """Element-wise ``numpy.isnan``: NaN is the only value not equal to itself."""
    a = as_tensor_variable(a)
    return neq(a, a) if _is_float(a) else neq(zeros_like(a), 0)


def isinf(a: TensorLike):
    """Element-wise ``numpy.isinf`` (infinities of either sign)."""
    a = as_tensor_variable(a)
    return eq(abs(a), np.inf) if _is_float(a) else neq(zeros_like(a), 0)


def isclose(a: TensorLike, b: TensorLike, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    """Element-wise ``numpy.isclose``: ``|a - b| <= atol + rtol * |b|`` for finite values,
    equal infinities are close, NaNs only with ``equal_nan``."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    finite = and_(eq(isinf(a), 0), eq(isinf(b), 0))
    close = and_(le(abs(a - b), atol + rtol * abs(b)), finite)
    close = or_(close, and_(eq(a, b), or_(isinf(a), isinf(b))))
    if equal_nan:
        close = or_(close, and_(isnan(a), isnan(b)))
    return close


def allclose(a: TensorLike, b: TensorLike, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    """``numpy.allclose``: whether ``isclose`` holds everywhere."""
    return tall(isclose(a, b, rtol, atol, equal_nan))


# ------------------------------------------------------------------ nonzero


class Nonzero(Op):
    """The indices of the non-zero entries of ``a``, as an int64 matrix ``(a.ndim, n)``."""

    __props__ = ()

    def make_node(self, *inputs: Variable) -> Apply:
        a = as_tensor_variable(inputs[0])
        if a.ndim == 0:
            raise ValueError("nonzero: the input must have at least one dimension")
        return Apply(self, [a], [TensorType("int64", (a.ndim, None))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        (a,) = inputs
        idx = np.nonzero(a)
        output_storage[0][0] = np.array(idx, dtype="int64").reshape(a.ndim, -1)


def nonzero(a: TensorLike, return_matrix: bool = False):
    """``numpy.nonzero``: a tuple of index vectors, one per dimension (or, with
    ``return_matrix``, those vectors as the rows of one matrix)."""
    m = Nonzero()(a)
    if return_matrix:
        return m
    return tuple(m[i] for i in range(as_tensor_variable(a).ndim))


def flatnonzero(a: TensorLike):
    """``numpy.flatnonzero``: indices of the non-zero entries of ``a.flatten()``."""
    return Nonzero()(as_tensor_variable(a).flatten())[0]


def nonzero_values(a: TensorLike):
    """The non-zero entries of ``a``, in flat (C) order."""
    flat = as_tensor_variable(a).flatten()
    return flat[flatnonzero(flat)]


# ------------------------------------------------------------------ diagonals


def _diag_index(n_rows: int, n_cols: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    n = max(0, min(n_rows + min(offset, 0), n_cols - max(offset, 0)))
    return np.arange(n) + max(-offset, 0), np.arange(n) + max(offset, 0)


class ExtractDiag(Op):
    """``numpy.diagonal(x, offset, axis1, axis2)`` (a copy); the diagonal on the last axis."""

    __props__ = ("offset", "axis1", "axis2")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> None:
        self.offset, self.axis1, self.axis2 = int(offset), int(axis1), int(axis2)

    def make_node(self, *inputs: Variable) -> Apply:
        x = as_tensor_variable(inputs[0])
        if x.ndim < 2 or len({self.axis1 % x.ndim, self.axis2 % x.ndim}) != 2:
            raise ValueError(f"diagonal: axes {self.axis1}, {self.axis2} of a {x.ndim}-d input")
        keep = [d for k, d in enumerate(x.type.shape) if k not in self._axes(x.ndim)]
        return Apply(self, [x], [TensorType(x.dtype, (*keep, None))()])

    def _axes(self, ndim: int) -> tuple[int, int]:
        return self.axis1 % ndim, self.axis2 % ndim

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        out = np.diagonal(inputs[0], self.offset, self.axis1, self.axis2)
        output_storage[0][0] = out.copy()

    def grad(self, inputs: list[Variable], gouts: list[Variable]) -> list[Variable]:
        return [ExtractDiagGrad(self.offset, self.axis1, self.axis2)(inputs[0], gouts[0])]


class ExtractDiagGrad(ExtractDiag):
    """Zeros shaped like ``x`` with ``g`` written on the diagonal ``ExtractDiag`` reads."""

    def make_node(self, *inputs: Variable) -> Apply:
        x, g = (as_tensor_variable(i) for i in inputs)
        return Apply(self, [x, g], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, g = inputs
        a1, a2 = self._axes(x.ndim)
        out = np.zeros_like(x)
        moved = np.moveaxis(out, (a1, a2), (-2, -1))
        rows, cols = _diag_index(moved.shape[-2], moved.shape[-1], self.offset)
        moved[..., rows, cols] = g
        output_storage[0][0] = out

    def grad(self, inputs: list[Variable], gouts: list[Variable]) -> list[Variable]:
        return [zeros_like(inputs[0]), ExtractDiag(self.offset, self.axis1, self.axis2)(gouts[0])]


class AllocDiag(Op):
    """``numpy.diag(v, k)`` of a vector: a square matrix with ``v`` on diagonal ``k``."""

    __props__ = ("offset",)

    def __init__(self, offset: int = 0) -> None:
        self.offset = int(offset)

    def make_node(self, *inputs: Variable) -> Apply:
        v = as_tensor_variable(inputs[0])
        if v.ndim != 1:
            raise ValueError(f"AllocDiag: a vector is needed, got {v.ndim} dimensions")
        return Apply(self, [v], [TensorType(v.dtype, (None, None))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.diag(inputs[0], self.offset)

    def grad(self, inputs: list[Variable], gouts: list[Variable]) -> list[Variable]:
        return [ExtractDiag(self.offset)(gouts[0])]


def diagonal(a: TensorLike, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """``numpy.diagonal`` (the result is a new array)."""
    return ExtractDiag(offset, axis1, axis2)(a)


def diag(v: TensorLike, k: int = 0):
    """``numpy.diag``: the matrix with vector ``v`` on diagonal ``k``, or diagonal ``k`` of
    matrix ``v``."""
    v = as_tensor_variable(v)
    if v.ndim == 1:
        return AllocDiag(k)(v)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError(f"diag: the input must be a vector or a matrix, got {v.ndim} dimensions")


def tri(N: TensorLike, M: TensorLike | None = None, k: int = 0, dtype=None):
    """``numpy.tri``: ones at and below diagonal ``k`` of an ``N x M`` matrix."""
    from graphc.flags import config

    rows = arange(N).dimshuffle(0, "x")
    cols = arange(N if M is None else M).dimshuffle("x", 0)
    return cast(ge(rows + k, cols), dtype or config.floatX)


def tril(m: TensorLike, k: int = 0):
    """``numpy.tril`` of a matrix: zeros above diagonal ``k``."""
    m = as_tensor_variable(m)
    return m * tri(m.shape[0], m.shape[1], k=k, dtype=m.dtype)


def triu(m: TensorLike, k: int = 0):
    """``numpy.triu`` of a matrix: zeros below diagonal ``k``."""
    m = as_tensor_variable(m)
    return m * (1 - tri(m.shape[0], m.shape[1], k=k - 1, dtype=m.dtype))


# ------------------------------------------------------------------ rearranging


def roll(x: TensorLike, shift: TensorLike, axis: int | None = None):
    """``numpy.roll``: entries shifted by ``shift`` along ``axis`` (the flattened array when
    ``axis`` is None), wrapping around; ``shift`` may be symbolic."""
    x = as_tensor_variable(x)
    if axis is None:
        return roll(x.flatten(), shift, 0).reshape(x.shape, ndim=x.ndim)
    axis = axis % x.ndim
    size = x.shape[axis]
    s = mod(as_tensor_variable(shift), maximum(size, 1))
    before = (slice(None),) * axis
    front = x[before + (slice(size - s, None),)]
    back = x[before + (slice(0, size - s),)]
    return concatenate([front, back], axis=axis)


def squeeze(x: TensorLike, axis: int | Sequence[int] | None = None):
    """Drop the broadcastable (length-1 by type) dimensions of ``x``, or those of ``axis``."""
    x = as_tensor_variable(x)
    if axis is None:
        drop = {k for k, b in enumerate(x.broadcastable) if b}
    else:
        drop = {a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)}
        bad = sorted(a for a in drop if not x.broadcastable[a])
        if bad:
            raise ValueError(f"squeeze: axes {bad} of {x.type} are not known to have length 1")
    return x.dimshuffle([k for k in range(x.ndim) if k not in drop])


def swapaxes(y: TensorLike, axis1: int, axis2: int):
    """``numpy.swapaxes``."""
    y = as_tensor_variable(y)
    order = list(range(y.ndim))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return y.dimshuffle(order)


def transpose(x: TensorLike, axes: Sequence[int] | None = None):
    """``numpy.transpose``: axes reversed, or in the order ``axes``."""
    x = as_tensor_variable(x)
    return x.dimshuffle(list(range(x.ndim))[::-1] if axes is None else list(axes))


def shape_padaxis(t: TensorLike, axis: int):
    """A broadcastable (length-1) dimension inserted at ``axis`` (``numpy.expand_dims``)."""
    t = as_tensor_variable(t)
    if not -t.ndim - 1 <= axis <= t.ndim:
        raise IndexError(f"shape_padaxis: axis {axis} is out of range for {t.ndim} dimensions")
    axis = axis % (t.ndim + 1)
    pattern: list[Any] = list(range(t.ndim))
    pattern.insert(axis, "x")
    return t.dimshuffle(pattern)


def vertical_stack(*args: TensorLike):
    """Matrices stacked along their rows (``numpy.vstack``)."""
    return concatenate(list(args), axis=0)


def horizontal_stack(*args: TensorLike):
    """Matrices stacked along their columns (``numpy.hstack``)."""
    return concatenate(list(args), axis=1)


def stacklists(arg: Any):
    """Nested lists of scalars (or tensors) as one tensor: ``stacklists([[a, b], [c, d]])``
    is the 2x2 matrix of them."""
    if isinstance(arg, tuple | list):
        return stack([stacklists(a) for a in arg])
    return as_tensor_variable(arg)


def inverse_permutation(perm: TensorLike):
    """The permutation that undoes ``perm`` (a vector of 0..n-1): ``argsort(perm)``."""
    perm = as_tensor_variable(perm)
    return cast(argsort(perm), perm.dtype)


# ------------------------------------------------------------------ element-wise helpers


def largest(*args: TensorLike):
    """The element-wise maximum of all arguments (broadcast together)."""
    if not args:
        raise TypeError("largest: give at least one tensor")
    return functools.reduce(maximum, [as_tensor_variable(a) for a in args])


def smallest(*args: TensorLike):
    """The element-wise minimum of all arguments (broadcast together)."""
    if not args:
        raise TypeError("smallest: give at least one tensor")
    return functools.reduce(minimum, [as_tensor_variable(a) for a in args])


def max_and_argmax(a: TensorLike, axis: int | Sequence[int] | None = None, keepdims: bool = False):
    """``(max(a, axis), argmax(a, axis))``, each with the reduced axes kept as size 1 when
    ``keepdims``."""
    return tmax(a, axis=axis, keepdims=keepdims), targmax(a, axis=axis, keepdims=keepdims)


def ptp(a: TensorLike, axis: int | Sequence[int] | None = None):
    """``numpy.ptp``: maximum minus minimum."""
    return tmax(a, axis=axis) - tmin(a, axis=axis)


def square(x: TensorLike):
    """Element-wise ``x * x``."""
    return sqr(x)


def inv(x: TensorLike):
    """Element-wise ``1 / x``."""
    return 1.0 / as_tensor_variable(x)


def trunc(x: TensorLike):
    """Element-wise ``numpy.trunc``: rounded towards zero."""
    x = as_tensor_variable(x)
    return switch(ge(x, 0), floor(x), ceil(x))


def deg2rad(x: TensorLike):
    """Degrees to radians."""
    return as_tensor_variable(x) * np.float64(np.pi / 180.0)


def rad2deg(x: TensorLike):
    """Radians to degrees."""
    return as_tensor_variable(x) * np.float64(180.0 / np.pi)


def arcsinh(x: TensorLike):
    """Element-wise inverse hyperbolic sine (accurate near 0 through ``log1p``)."""
    x = as_tensor_variable(x)
    ax = abs(x)
    mag = log1p(ax + sqr(ax) / (1 + sqrt(1 + sqr(ax))))
    return switch(ge(x, 0), mag, -mag)


def arccosh(x: TensorLike):
    """Element-wise inverse hyperbolic cosine (NaN below 1)."""
    x = as_tensor_variable(x)
    return log1p(x - 1 + sqrt((x - 1) * (x + 1)))


def arctanh(x: TensorLike):
    """Element-wise inverse hyperbolic tangent."""
    x = as_tensor_variable(x)
    return 0.5 * log1p(2 * x / (1 - x))


def floor_div(x: TensorLike, y: TensorLike):
    """Element-wise ``x // y`` (Theano's name for ``int_div``)."""
    return int_div(x, y)


def divmod(x: TensorLike, y: TensorLike):
    """``(x // y, x % y)``, as Python's ``divmod``."""
    return int_div(x, y), mod(x, y)


# ------------------------------------------------------------------ broadcastable flags


class Rebroadcast(Op):
    """``x`` (a view) with the broadcastable flag of some axes set or cleared: a set flag
    makes that axis' length 1 by type (checked when run), a cleared one makes it unknown."""

    __props__ = ("axis",)
    view_map = {0: [0]}

    def __init__(self, *axis: tuple[int, bool]) -> None:
        self.axis = tuple(sorted((int(a), bool(b)) for a, b in dict(axis).items()))

    def make_node(self, *inputs: Variable) -> Apply:
        x = as_tensor_variable(inputs[0])
        shape = list(x.type.shape)
        for a, b in self.axis:
            if not 0 <= a < x.ndim:
                raise ValueError(f"Rebroadcast: axis {a} is out of range for {x.type}")
            shape[a] = 1 if b else None
        return Apply(self, [x], [TensorType(x.dtype, tuple(shape))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        (x,) = inputs
        for a, b in self.axis:
            if b and x.shape[a] != 1:
                raise ValueError(f"Rebroadcast: axis {a} should have length 1 but has {x.shape[a]}")
        output_storage[0][0] = x

    def grad(self, inputs: list[Variable], gouts: list[Variable]) -> list[Variable]:
        x = inputs[0]
        back = [(a, x.broadcastable[a]) for a, _ in self.axis]
        return [Rebroadcast(*back)(gouts[0])]


def addbroadcast(x: TensorLike, *axes: int):
    """``x`` with ``axes`` broadcastable (their length, 1, checked when run)."""
    x = as_tensor_variable(x)
    return Rebroadcast(*[(a % x.ndim, True) for a in axes])(x) if axes else x


def unbroadcast(x: TensorLike, *axes: int):
    """``x`` with ``axes`` no longer broadcastable (their length unknown by type)."""
    x = as_tensor_variable(x)
    return Rebroadcast(*[(a % x.ndim, False) for a in axes])(x) if axes else x


def patternbroadcast(x: TensorLike, broadcastable: Sequence[bool]):
    """``x`` with the broadcastable pattern ``broadcastable`` (one flag per axis)."""
    x = as_tensor_variable(x)
    if len(broadcastable) != x.ndim:
        raise ValueError(f"patternbroadcast: {len(broadcastable)} flags for {x.ndim} axes")
    return Rebroadcast(*enumerate(broadcastable))(x)


# ------------------------------------------------------------------ counting and filling


def diff(x: TensorLike, n: int = 1, axis: int = -1):
    """``numpy.diff``: the ``n``-th discrete difference along ``axis``."""
    v: Any = as_tensor_variable(x)
    axis = axis % v.ndim
    before = (slice(None),) * axis
    for _ in range(n):
        v = v[before + (slice(1, None),)] - v[before + (slice(None, -1),)]
    return v


def to_one_hot(y: TensorLike, nb_class: int, dtype=None):
    """Row ``i`` is 1 at column ``y[i]`` and 0 elsewhere (``nb_class`` columns)."""
    from graphc.flags import config

    y = as_tensor_variable(y)
    if y.ndim != 1:
        raise ValueError(f"to_one_hot: a vector of class indices is needed, got {y.ndim}-d")
    return cast(
        eq(y.dimshuffle(0, "x"), arange(nb_class).dimshuffle("x", 0)), dtype or config.floatX
    )


def compress(condition: TensorLike, x: TensorLike, axis: int | None = None):
    """``numpy.compress``: the slices of ``x`` along ``axis`` (of ``x.flatten()`` when
    None) where ``condition`` is non-zero."""
    x = as_tensor_variable(x)
    indices = flatnonzero(condition)
    return take(x.flatten(), indices) if axis is None else take(x, indices, axis=axis)


class BinCount(Op):
    """``numpy.bincount(x, weights, minlength)`` of a vector of non-negative ints."""

    __props__ = ("minlength",)

    def __init__(self, minlength: int | None = None) -> None:
        self.minlength = None if minlength is None else int(minlength)

    def make_node(self, *inputs: Variable) -> Apply:
        x = as_tensor_variable(inputs[0])
        if x.ndim != 1 or not x.dtype.startswith(("int", "uint")):
            raise TypeError(f"bincount: a vector of ints is needed, got {x.type}")
        if len(inputs) == 1:
            return Apply(self, [x], [TensorType("int64", (None,))()])
        w = as_tensor_variable(inputs[1])
        return Apply(self, [x, w], [TensorType("float64", (None,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        x, w = inputs[0], inputs[1] if len(inputs) > 1 else None
        out = np.bincount(x, weights=w, minlength=self.minlength or 0)
        output_storage[0][0] = out.astype(node.outputs[0].dtype)


def bincount(x: TensorLike, weights: TensorLike | None = None, minlength: int | None = None):
    """``numpy.bincount``: how often each value ``0..max(x)`` occurs (summed ``weights``)."""
    op = BinCount(minlength)
    return op(x) if weights is None else op(x, weights)


class FillDiagonal(Op):
    """``a`` (a matrix) with its main diagonal set to the scalar ``val`` (a new array)."""

    __props__ = ()

    def make_node(self, *inputs: Variable) -> Apply:
        a, val = (as_tensor_variable(i) for i in inputs)
        if a.ndim != 2 or val.ndim != 0:
            raise TypeError(f"fill_diagonal: a matrix and a scalar are needed, got {a.type}")
        return Apply(self, [a, val], [a.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        out = np.array(inputs[0], copy=True)
        np.fill_diagonal(out, inputs[1])
        output_storage[0][0] = out

    def grad(self, inputs: list[Variable], gouts: list[Variable]) -> list[Variable]:
        (g,) = gouts
        return [FillDiagonal()(g, 0.0), diagonal(g).sum()]


def fill_diagonal(a: TensorLike, val: TensorLike):
    """``numpy.fill_diagonal`` on a copy of matrix ``a``."""
    return FillDiagonal()(a, val)
