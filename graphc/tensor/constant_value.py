"""The constant value of an expression: ``get_scalar_constant_value`` and its per-Op rules.

Each Op whose output can fold to a constant scalar has a rule in ``CONSTANT_RULES``; the
module that defines the Op registers it (``tensor/basic.py`` for MakeVector, Alloc and
SpecifyShape, ``tensor/subtensor.py`` for Subtensor), so this module needs none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.graph.basic import Constant, Variable
from graphc.graph.rules import RuleTable
from graphc.scalar import basic as ps
from graphc.tensor.elemwise import DimShuffle, Elemwise
from graphc.tensor.shape import Shape_i

if TYPE_CHECKING:
    from graphc.graph.basic import Apply
    from graphc.tensor.variable import TensorLike


class NotScalarConstantError(Exception):
    """The expression is not a constant scalar (``get_scalar_constant_value`` failed)."""


# How each Op's output folds to a constant scalar: ``rule(node, v, elemwise)`` returns the
# value, None when it does not fold, or raises NotScalarConstantError. The rules of Ops
# defined after this module (MakeVector, Alloc, Subtensor...) are registered by theirs.
CONSTANT_RULES = RuleTable("constant value")


def get_scalar_constant_value(v: Variable, elemwise: bool = True):
    """The numpy scalar value of ``v`` when it is a constant expression, else raise
    NotScalarConstantError.

    Follows casts, ``second``/fill, DimShuffles, Shape_i / shape entries of statically known
    sizes, MakeVector/Subtensor of constants, Alloc, SpecifyShape and (with ``elemwise``)
    Elemwise nodes whose inputs are all constant.
    """
    if isinstance(v, bool | int | float | np.number | np.bool_):
        return np.asarray(v)[()]
    if isinstance(v, np.ndarray):
        return _scalar_of(v, v)
    if not isinstance(v, Variable):
        raise NotScalarConstantError(f"{v!r} is not a constant scalar")
    if isinstance(v, Constant):
        return _scalar_of(np.asarray(v.data), v)
    node = v.owner
    if node is None:
        raise NotScalarConstantError(f"{v} is a free variable, not a constant")
    rule = CONSTANT_RULES.get(node.op)
    value = None if rule is None else rule(node, v, elemwise)
    if value is None:
        raise NotScalarConstantError(f"{v} (computed by {node.op}) is not a constant scalar")
    return value


@CONSTANT_RULES.register(Shape_i)
def _shape_i_constant(node: Apply, v: Variable, elemwise: bool):
    s = node.inputs[0].type.shape[node.op.i]
    return None if s is None else np.int64(s)


@CONSTANT_RULES.register(DimShuffle)
def first_input_constant(node: Apply, v: Variable, elemwise: bool):
    """The rule of Ops whose output has their first input's value."""
    return get_scalar_constant_value(node.inputs[0], elemwise)


@CONSTANT_RULES.register(Elemwise)
def _elemwise_constant(node: Apply, v: Variable, elemwise: bool):
    op = node.op
    if isinstance(op.scalar_op, ps.Second):
        return _cast_to(get_scalar_constant_value(node.inputs[1], elemwise), v)
    if isinstance(op.scalar_op, ps.Cast | ps.Identity):
        return _cast_to(get_scalar_constant_value(node.inputs[0], elemwise), v)
    if not elemwise:
        return None
    vals = [get_scalar_constant_value(i, elemwise) for i in node.inputs]
    with np.errstate(all="ignore"):
        out = op.scalar_op.impl(*[np.asarray(x) for x in vals])
    if isinstance(out, tuple):
        out = out[v.index]
    return _cast_to(out, v)


def _scalar_of(arr: np.ndarray, v):
    if arr.size == 0:
        raise NotScalarConstantError(f"{v} is an empty constant")
    flat = arr.reshape(-1)
    if arr.ndim == 0 or bool(np.all(flat == flat[0])):
        return flat[0].copy() if arr.ndim == 0 else flat[0]
    raise NotScalarConstantError(f"{v} is a constant array with distinct values")


def _cast_to(value, v: Variable):
    dt = getattr(v.type, "dtype", None)
    arr = np.asarray(value)
    return (arr.astype(dt) if dt is not None else arr)[()]


def _static_int(v: TensorLike) -> int | None:
    try:
        return int(get_scalar_constant_value(v))
    except NotScalarConstantError:
        return None


def get_constant_or_none(v: TensorLike):
    try:
        return get_scalar_constant_value(v)
    except NotScalarConstantError:
        return None
