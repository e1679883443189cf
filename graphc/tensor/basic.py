"""Shape and construction Ops: shape, Shape_i, reshape, join, alloc, arange, eye, ..."""

from __future__ import annotations

import numpy as np

from graphc.graph.basic import Apply, Op
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable


class Shape(Op):
    """The shape of a tensor as an int64 vector."""

    __props__ = ()

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", (x.ndim,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph, node, shapes):
        return [(len(shapes[0]),)]

    def grad(self, inputs, gouts):
        return [None]


class Shape_i(Op):  # noqa: N801 - Theano's name
    """One entry of a tensor's shape as an int64 scalar."""

    __props__ = ("i",)

    def __init__(self, i: int):
        self.i = int(i)

    def __str__(self) -> str:
        return f"Shape_i{{{self.i}}}"

    def make_node(self, x) -> Apply:
        x = as_tensor_variable(x)
        if not 0 <= self.i < x.ndim:
            raise ValueError(f"{self}: axis out of range for {x.type}")
        return Apply(self, [x], [TensorType("int64", ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape[self.i], dtype="int64")

    def infer_shape(self, fgraph, node, shapes):
        return [()]

    def grad(self, inputs, gouts):
        return [None]


_shape = Shape()


def shape(x):
    """Symbolic shape of ``x`` (an int64 vector)."""
    return _shape(as_tensor_variable(x))


def shape_tuple(x) -> tuple:
    """A tuple of int64 scalars, one per axis (constants where the static size is known)."""
    from graphc.tensor.variable import constant

    x = as_tensor_variable(x)
    return tuple(
        constant(np.int64(s)) if s is not None else Shape_i(i)(x)
        for i, s in enumerate(x.type.shape)
    )
