"""Theano's ``theano.tensor.nlinalg``: ``matrix_inverse``, ``det``, ``trace``, ``pinv``,
``matrix_dot``, ``alloc_diag`` / ``extract_diag``, computed with ``numpy.linalg``."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op
from graphc.tensor.contractions import dot
from graphc.tensor.math import sum as tsum
from graphc.tensor.theano_fns import AllocDiag, ExtractDiag, diagonal
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from graphc.graph.basic import Variable
    from graphc.tensor.variable import TensorLike

__all__ = [
    "Det", "MatrixInverse", "MatrixPinv", "alloc_diag", "det", "extract_diag", "matrix_dot",
    "matrix_inverse", "pinv", "trace",
]  # fmt: skip


def _matrix(x: TensorLike, who: str) -> Variable:
    x = as_tensor_variable(x)
    if x.ndim != 2:
        raise ValueError(f"{who}: a matrix is needed, got {x.ndim} dimensions")
    if not x.dtype.startswith("float"):
        raise TypeError(f"{who}: a float matrix is needed, got dtype {x.dtype}")
    return x


class MatrixInverse(Op):
    """``numpy.linalg.inv`` of a square matrix."""

    __props__ = ()

    def make_node(self, *inputs: Variable) -> Apply:
        x = _matrix(inputs[0], "matrix_inverse")
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.linalg.inv(inputs[0]).astype(node.outputs[0].dtype)

    def grad(self, inputs: list[Variable], gouts: list[Variable]) -> list[Variable]:
        inv_t = self(inputs[0]).T  # d(A^-1) = -A^-1 dA A^-1
        return [-dot(dot(inv_t, gouts[0]), inv_t)]


class Det(Op):
    """``numpy.linalg.det`` of a square matrix."""

    __props__ = ()

    def make_node(self, *inputs: Variable) -> Apply:
        x = _matrix(inputs[0], "det")
        return Apply(self, [x], [TensorType(x.dtype, ())()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.asarray(np.linalg.det(inputs[0]), node.outputs[0].dtype)

    def grad(self, inputs: list[Variable], gouts: list[Variable]) -> list[Variable]:
        (x,) = inputs
        return [gouts[0] * self(x) * MatrixInverse()(x).T]


class MatrixPinv(Op):
    """``numpy.linalg.pinv``: the Moore-Penrose pseudo-inverse (no gradient)."""

    __props__ = ()

    def make_node(self, *inputs: Variable) -> Apply:
        x = _matrix(inputs[0], "pinv")
        return Apply(self, [x], [TensorType(x.dtype, (x.type.shape[1], x.type.shape[0]))()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]) -> None:
        output_storage[0][0] = np.linalg.pinv(inputs[0]).astype(node.outputs[0].dtype)


def matrix_inverse(x: TensorLike):
    """The inverse of a square matrix."""
    return MatrixInverse()(x)


def det(x: TensorLike):
    """The determinant of a square matrix."""
    return Det()(x)


def pinv(x: TensorLike):
    """The pseudo-inverse of a matrix."""
    return MatrixPinv()(x)


def trace(x: TensorLike):
    """The sum of a matrix's diagonal."""
    return tsum(diagonal(_matrix(x, "trace")))


def matrix_dot(*args: TensorLike):
    """``dot(dot(args[0], args[1]), ...)``."""
    if not args:
        raise TypeError("matrix_dot: give at least one matrix")
    return functools.reduce(dot, args)


def alloc_diag(v: TensorLike):
    """The square matrix with vector ``v`` on its diagonal."""
    return AllocDiag(0)(v)


def extract_diag(x: TensorLike):
    """The diagonal of a matrix."""
    return ExtractDiag(0)(x)
