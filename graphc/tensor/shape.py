"""A tensor's shape as graph values: Shape, Shape_i, shape_tuple, and the constants
(``_constant``, ``_i64``) that shape expressions are made of.

Below element-wise math and reductions (``mean`` counts elements with ``Shape_i``) and
below the construction Ops of ``tensor/basic.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op
from graphc.tensor.type import TensorType
from graphc.tensor.variable import TensorConstant, as_tensor_variable

if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import DTypeLike

    from graphc.graph.basic import Variable
    from graphc.tensor.variable import TensorLike


def _constant(value, dtype: DTypeLike | None = None) -> TensorConstant:
    """A TensorConstant that keeps the value's ndim (a 0-d value stays 0-d)."""
    arr = np.array(value, dtype=dtype)
    arr.setflags(write=False)
    shape = tuple(1 if s == 1 else None for s in arr.shape)
    return TensorConstant(TensorType(str(arr.dtype), shape), arr)


def _i64(v: int) -> TensorConstant:
    return _constant(np.int64(v))


class Shape(Op):
    """The shape of a tensor as an int64 vector."""

    __props__ = ()

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", (x.ndim,))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [(_i64(len(shapes[0])),)]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [None]


class Shape_i(Op):  # noqa: N801 - Theano's name
    """One entry of a tensor's shape as an int64 scalar."""

    __props__ = ("i",)

    def __init__(self, i: int):
        self.i = int(i)

    def __str__(self) -> str:
        return f"Shape_i{{{self.i}}}"

    def make_node(self, x: Variable) -> Apply:
        x = as_tensor_variable(x)
        if not 0 <= self.i < x.ndim:
            raise ValueError(f"{self}: axis out of range for {x.type}")
        return Apply(self, [x], [TensorType("int64", ())()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        output_storage[0][0] = np.asarray(inputs[0].shape[self.i], dtype="int64")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        return [()]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        return [None]


_shape = Shape()


def shape(x: TensorLike):
    """Symbolic shape of ``x`` (an int64 vector)."""
    return _shape(as_tensor_variable(x))


def shape_tuple(x: TensorLike) -> tuple:
    """A tuple of int64 scalars, one per axis (constants where the static size is known)."""
    x = as_tensor_variable(x)
    return tuple(_i64(s) if s is not None else Shape_i(i)(x) for i, s in enumerate(x.type.shape))


def get_vector_length(v: TensorLike) -> int:
    """The length of vector ``v`` when it is known while building the graph (Theano's
    function): TypeError if ``v`` is not a vector, ValueError if its length is not known."""
    v = as_tensor_variable(v)
    if v.ndim != 1:
        raise TypeError(f"argument must be symbolic vector, got '{v}' ({v.ndim}-d)")
    n = v.type.shape[0]
    if n is None and isinstance(v, TensorConstant):
        n = len(v.data)
    if n is None:
        raise ValueError(f"length not known: {v} of type {v.type}")
    return n
