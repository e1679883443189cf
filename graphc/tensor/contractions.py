"""``batched_dot`` (Theano's); ``tensordot`` and ``dot`` live in ``graphc.tensor.blas``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Apply, Op
from graphc.scalar.basic import FLOAT_DTYPES
from graphc.tensor.blas import dot, tensordot
from graphc.tensor.math import cast
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

if TYPE_CHECKING:
    from typing import Any

    from graphc.graph.basic import Variable
    from graphc.tensor.variable import TensorLike

__all__ = ["BatchedDot", "batched_dot", "dot", "tensordot"]  # dot and tensordot re-exported

_FLOATS = FLOAT_DTYPES


class BatchedDot(Op):
    """``out[i] = x[i] @ y[i]`` for 3-d ``x`` (B, n, k) and ``y`` (B, k, m)."""

    __props__ = ()

    def make_node(self, x: Variable, y: Variable) -> Apply:
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        if x.ndim != 3 or y.ndim != 3:
            raise TypeError(f"{self}: operands must be 3-d, got {x.type} and {y.type}")
        for i, j in ((0, 0), (2, 1)):
            p, q = x.type.shape[i], y.type.shape[j]
            if p is not None and q is not None and p != q:
                raise ValueError(f"{self}: shapes {x.type} and {y.type} do not match")
        dtype = str(np.result_type(x.dtype, y.dtype))
        shape = (x.type.shape[0] or y.type.shape[0], x.type.shape[1], y.type.shape[2])
        return Apply(self, [x, y], [TensorType(dtype, shape)()])

    def perform(self, node: Apply, inputs: list, output_storage: list[list]):
        x, y = inputs
        if x.shape[0] != y.shape[0] or x.shape[2] != y.shape[1]:
            raise ValueError(f"{self}: shapes {x.shape} and {y.shape} do not match")
        out = np.matmul(x, y).astype(node.outputs[0].type.dtype, copy=False)
        output_storage[0][0] = out

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]):
        (b, n, _), (_, _, m) = shapes
        return [(b, n, m)]

    def flops(
        self, node: Apply, input_shapes: list[tuple[int, ...]], output_shapes: list[tuple[int, ...]]
    ) -> float:
        return 2.0 * float(np.prod(output_shapes[0])) * input_shapes[0][2]

    def grad(self, inputs: list[Variable], gouts: list[Variable]):
        x, y = inputs
        (g,) = gouts
        gx = self(g, y.dimshuffle(0, 2, 1))
        gy = self(x.dimshuffle(0, 2, 1), g)
        return [
            cast(gx, x.dtype) if x.dtype in _FLOATS else None,
            cast(gy, y.dtype) if y.dtype in _FLOATS else None,
        ]


def batched_dot(a: TensorLike, b: TensorLike):
    """Theano's ``batched_dot``: ``dot(a[i], b[i])`` for every ``i`` of the first axis.

    1-d operands multiply the other's batch entries; 2-d and 3-d operands are matrices or
    vectors per batch entry.
    """
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        raise TypeError(f"batched_dot: operands need a batch axis, got {a.type} and {b.type}")
    if a.ndim == 1:
        return a.dimshuffle(0, *["x"] * (b.ndim - 1)) * b
    if b.ndim == 1:
        return a * b.dimshuffle(0, *["x"] * (a.ndim - 1))
    if a.ndim > 3 or b.ndim > 3:
        raise NotImplementedError(
            f"batched_dot of operands with more than 3 dimensions ({a.type}, {b.type})"
        )
    a3 = a.dimshuffle(0, "x", 1) if a.ndim == 2 else a
    b3 = b.dimshuffle(0, 1, "x") if b.ndim == 2 else b
    out = BatchedDot()(a3, b3)
    keep = [0] + ([1] if a.ndim == 3 else []) + ([2] if b.ndim == 3 else [])
    return out.dimshuffle(*keep)
