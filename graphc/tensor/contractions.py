"""``tensordot`` (as one matrix product between reshapes) and ``batched_dot`` (Theano's)."""

from __future__ import annotations

import numpy as np

from graphc.graph.basic import Apply, Op
from graphc.tensor.basic import _i64, reshape, shape_tuple
from graphc.tensor.blas import dot
from graphc.tensor.math import cast
from graphc.tensor.type import TensorType
from graphc.tensor.variable import as_tensor_variable

__all__ = ["BatchedDot", "batched_dot", "tensordot"]

_FLOATS = ("float32", "float64")


def _axes_lists(a, b, axes) -> tuple[list[int], list[int]]:
    if isinstance(axes, int | np.integer):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: axes={n} is out of range for {a.type} and {b.type}")
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    try:
        ax_a, ax_b = axes
    except (TypeError, ValueError):
        msg = f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}"
        raise TypeError(msg) from None
    ax_a = [ax_a] if isinstance(ax_a, int | np.integer) else list(ax_a)
    ax_b = [ax_b] if isinstance(ax_b, int | np.integer) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise ValueError(f"tensordot: {len(ax_a)} axes of a but {len(ax_b)} of b")
    for ax, v in ((ax_a, a), (ax_b, b)):
        for k in ax:
            if not -v.ndim <= k < v.ndim:
                raise ValueError(f"tensordot: axis {k} is out of range for {v.type}")
    ax_a, ax_b = [int(k) % a.ndim for k in ax_a], [int(k) % b.ndim for k in ax_b]
    if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
        raise ValueError(f"tensordot: repeated axis in {axes!r}")
    for i, j in zip(ax_a, ax_b):
        sa, sb = a.type.shape[i], b.type.shape[j]
        if sa is not None and sb is not None and sa != sb:
            raise ValueError(f"tensordot: summed axes {i} of a and {j} of b differ ({sa} vs {sb})")
    return ax_a, ax_b


def _prod(items):
    out = _i64(1)
    for s in items:
        out = out * s
    return out


def tensordot(a, b, axes=2):
    """numpy ``tensordot``: sum over ``axes`` (an int n: a's last n and b's first n axes, or a
    pair of axis lists); one matrix product between two reshapes, so gradients come from
    ``dot``'s."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    ax_a, ax_b = _axes_lists(a, b, axes)
    free_a = [k for k in range(a.ndim) if k not in ax_a]
    free_b = [k for k in range(b.ndim) if k not in ax_b]
    sa, sb = shape_tuple(a), shape_tuple(b)
    a2 = reshape(
        a.dimshuffle(*free_a, *ax_a), [_prod(sa[k] for k in free_a), _prod(sa[k] for k in ax_a)]
    )
    b2 = reshape(
        b.dimshuffle(*ax_b, *free_b), [_prod(sb[k] for k in ax_b), _prod(sb[k] for k in free_b)]
    )
    out_shape = [sa[k] for k in free_a] + [sb[k] for k in free_b]
    return reshape(dot(a2, b2), out_shape, ndim=len(out_shape))


class BatchedDot(Op):
    """``out[i] = x[i] @ y[i]`` for 3-d ``x`` (B, n, k) and ``y`` (B, k, m)."""

    __props__ = ()

    def make_node(self, x, y) -> Apply:
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

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape[0] != y.shape[0] or x.shape[2] != y.shape[1]:
            raise ValueError(f"{self}: shapes {x.shape} and {y.shape} do not match")
        out = np.matmul(x, y).astype(node.outputs[0].type.dtype, copy=False)
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, shapes):
        (b, n, _), (_, _, m) = shapes
        return [(b, n, m)]

    def flops(self, node, input_shapes, output_shapes) -> float:
        return 2.0 * float(np.prod(output_shapes[0])) * input_shapes[0][2]

    def grad(self, inputs, gouts):
        x, y = inputs
        (g,) = gouts
        gx = self(g, y.dimshuffle(0, 2, 1))
        gy = self(x.dimshuffle(0, 2, 1), g)
        return [
            cast(gx, x.dtype) if x.dtype in _FLOATS else None,
            cast(gy, y.dtype) if y.dtype in _FLOATS else None,
        ]


def batched_dot(a, b):
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
