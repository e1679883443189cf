"""Small helpers shared by the rewrite modules."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Constant
from graphc.tensor.blas import Dot22, Gemm, Gemv
from graphc.tensor.elemwise import DimShuffle, Elemwise
from graphc.tensor.math import cast
from graphc.tensor.type import TensorType
from graphc.tensor.variable import TensorConstant

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from graphc.graph.basic import Apply, Variable
    from graphc.scalar.basic import ScalarOp


def scalar_op(node: Apply | None) -> ScalarOp | None:
    """The scalar Op of an Elemwise node (None for other nodes)."""
    if node is not None and isinstance(node.op, Elemwise):
        return node.op.scalar_op
    return None


def owner_is(var, cls: type[ScalarOp]):
    """``var``'s owner when it is an Elemwise of a ``cls`` scalar Op, else None."""
    node = var.owner
    return node if isinstance(scalar_op(node), cls) else None


def scalar_const(var):
    """The value of a constant whose every static axis has size 1 (broadcasts like a
    scalar), looking through broadcasting DimShuffles; else None."""
    while var.owner is not None and isinstance(var.owner.op, DimShuffle):
        if not all(s == 1 for s in var.type.shape):
            return None
        var = var.owner.inputs[0]
    if not isinstance(var, Constant) or not isinstance(var.type, TensorType):
        return None
    if not all(s == 1 for s in var.type.shape):
        return None
    return np.asarray(var.data).reshape(())[()]


def is_const(var: Variable, value) -> bool:
    v = scalar_const(var)
    return v is not None and bool(v == value)


def fit(old, new):
    """``new`` adjusted to stand in for ``old``: cast to its dtype; None when the static
    broadcast patterns differ (the replacement would change the shape)."""
    if new is None or old.type.ndim != new.type.ndim:
        return None
    if any(a == 1 and b != 1 for a, b in zip(new.type.shape, old.type.shape)):
        return None
    if new.type.dtype != old.type.dtype:
        new = cast(new, old.type.dtype)
    return new


def make_const(value, dtype: DTypeLike | None = None, ndim: int | None = None):
    """A TensorConstant of exactly ``value``'s shape (or ``ndim`` size-1 axes)."""
    arr = np.array(value, dtype=dtype)
    if ndim is not None:
        arr = arr.reshape((1,) * ndim)
    arr.setflags(write=False)
    shape = tuple(1 if s == 1 else None for s in arr.shape)
    return TensorConstant(TensorType(str(arr.dtype), shape), arr)


def const_like(value, var):
    """A constant of ``var``'s dtype and ndim (all axes broadcastable) holding ``value``."""
    return make_const(value, var.type.dtype, var.type.ndim)


def size_key(var, axis: int, memo: dict):
    """A key equal for two (variable, axis) pairs only when their runtime sizes are equal:
    the static size, or the input axis the size comes from (through Elemwise, DimShuffle,
    Dot22 and Gemv); else unique to ``(var, axis)``."""
    k = (id(var), axis)
    if k in memo:
        return memo[k]
    static = var.type.shape[axis]
    if static is not None:
        key: tuple = ("static", static)
    else:
        key = ("var", id(var), axis)
        node = var.owner
        if node is not None:
            op = node.op
            if isinstance(op, Elemwise):
                ins = [node.inputs[j] for j in op.output_inputs(node, var.index)]
                keys = {size_key(i, axis, memo) for i in ins if i.type.shape[axis] != 1}
                if len(keys) == 1:
                    key = keys.pop()
            elif isinstance(op, DimShuffle) and op.new_order[axis] != "x":
                key = size_key(node.inputs[0], int(op.new_order[axis]), memo)
            elif isinstance(op, Dot22 | Gemm | Gemv) and not getattr(op, "broadcast", False):
                a, b = (
                    (node.inputs[0], node.inputs[1])
                    if isinstance(op, Dot22)
                    else (node.inputs[2], node.inputs[3])
                )
                if isinstance(op, Gemv) or axis == 0:
                    key = size_key(a, 0, memo)
                else:
                    key = size_key(b, 1, memo)
    memo[k] = key
    return key
