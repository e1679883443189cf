"""Gradients of Elemwise nodes (one rule per scalar Op) and of DimShuffle, written with
tensor operations; registered in ``tensor/elemwise.py``'s ``GRAD_RULES``, which cannot
import the reductions and element-wise math built on its Ops."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from graphc.scalar import basic as ps
from graphc.tensor import math as tm
from graphc.tensor.elemwise import GRAD_RULES, DimShuffle, Elemwise
from graphc.tensor.variable import constant

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from graphc.graph.basic import Apply, Op, Variable
    from graphc.tensor.variable import TensorLike, TensorVariable


def _c(value: float, like: Variable):
    return constant(np.asarray(value, dtype=like.dtype))


def _rule(name: str):
    def register(fn: Callable[..., Any]):
        _RULES[name] = fn
        return fn

    return register


_RULES: dict = {}


@_rule("add")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    return [g] * len(x)


@_rule("sub")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    return [g, -g]


@_rule("mul")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    out = []
    for i in range(len(x)):
        others = [x[j] for j in range(len(x)) if j != i]
        out.append(g * tm.mul(*others) if len(others) > 1 else g * others[0])
    return out


@_rule("true_div")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    return [g / b, -g * a / tm.sqr(b)]


@_rule("pow")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    return [g * b * a ** (b - 1), g * z * tm.log(a)]


@_rule("mod")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    return [g, -g * tm.floor(a / b)]


_RULES["neg"] = lambda x, z, g: [-g]
_RULES["abs"] = lambda x, z, g: [g * tm.sgn(x[0])]
_RULES["exp"] = lambda x, z, g: [g * z]
_RULES["exp2"] = lambda x, z, g: [g * z * _c(np.log(2.0), z)]
_RULES["expm1"] = lambda x, z, g: [g * (z + _c(1, z))]
_RULES["log"] = lambda x, z, g: [g / x[0]]
_RULES["log2"] = lambda x, z, g: [g / (x[0] * _c(np.log(2.0), z))]
_RULES["log10"] = lambda x, z, g: [g / (x[0] * _c(np.log(10.0), z))]
_RULES["log1p"] = lambda x, z, g: [g / (x[0] + _c(1, z))]
_RULES["sqrt"] = lambda x, z, g: [g * _c(0.5, z) / z]
_RULES["sqr"] = lambda x, z, g: [g * _c(2, z) * x[0]]
_RULES["sin"] = lambda x, z, g: [g * tm.cos(x[0])]
_RULES["cos"] = lambda x, z, g: [-g * tm.sin(x[0])]
_RULES["tan"] = lambda x, z, g: [g * (_c(1, z) + tm.sqr(z))]
_RULES["arcsin"] = lambda x, z, g: [g / tm.sqrt(_c(1, z) - tm.sqr(x[0]))]
_RULES["arccos"] = lambda x, z, g: [-g / tm.sqrt(_c(1, z) - tm.sqr(x[0]))]
_RULES["arctan"] = lambda x, z, g: [g / (_c(1, z) + tm.sqr(x[0]))]
_RULES["sinh"] = lambda x, z, g: [g * tm.cosh(x[0])]
_RULES["cosh"] = lambda x, z, g: [g * tm.sinh(x[0])]
_RULES["tanh"] = lambda x, z, g: [g * (_c(1, z) - tm.sqr(z))]
_RULES["sigmoid"] = lambda x, z, g: [g * z * (_c(1, z) - z)]
_RULES["softplus"] = lambda x, z, g: [g * tm.sigmoid(x[0])]
_RULES["erf"] = lambda x, z, g: [g * _c(2 / np.sqrt(np.pi), z) * tm.exp(-tm.sqr(x[0]))]
_RULES["identity"] = lambda x, z, g: [g]
_RULES["second"] = lambda x, z, g: [None, g]


@_rule("arctan2")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    y, xx = x
    d = tm.sqr(xx) + tm.sqr(y)
    return [g * xx / d, -g * y / d]


@_rule("maximum")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    pick = tm.ge(a, b)
    return [g * tm.cast(pick, g.dtype), g * tm.cast(tm.invert(pick), g.dtype)]


@_rule("minimum")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, b = x
    pick = tm.le(a, b)
    return [g * tm.cast(pick, g.dtype), g * tm.cast(tm.invert(pick), g.dtype)]


@_rule("clip")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    a, lo, hi = x
    inside = tm.and_(tm.ge(a, lo), tm.le(a, hi))
    return [g * tm.cast(inside, g.dtype), g * tm.cast(tm.lt(a, lo), g.dtype),
            g * tm.cast(tm.gt(a, hi), g.dtype)]  # fmt: skip


@_rule("switch")
def _(x: list[TensorVariable], z: TensorVariable, g: TensorVariable):
    c, a, b = x
    zero = _c(0, g)
    return [None, tm.switch(c, g, zero), tm.switch(c, zero, g)]


_ZERO_GRAD = {"sgn", "floor", "ceil", "round_half_to_even", "int_div"}
_NO_GRAD = {"eq", "neq", "lt", "gt", "le", "ge", "and", "or", "xor", "invert"}


@GRAD_RULES.register(DimShuffle)
def dimshuffle_grad(op: Op, inputs: list[Variable], gouts: list[Variable]):
    """Sum the gradient over the axes ``op`` added, then undo its permutation."""
    (g,) = gouts
    if op.augment:
        g = tm.sum(g, axis=op.augment)  # now axis j is input axis shuffle[j]
    order = ["x" if i in op.drop else op.shuffle.index(i) for i in range(op.input_ndim)]
    return [DimShuffle(len(op.shuffle), order)(g)]


@GRAD_RULES.register(Elemwise)
def elemwise_grad(op: Op, inputs: list[Variable], gouts: list[Variable]):
    """Input gradients of ``op(*inputs)`` given the output gradient (one output)."""
    (g,) = gouts
    z = op(*inputs)
    sop = op.scalar_op
    name = sop.name
    if isinstance(sop, ps.Cast):
        x = inputs[0]
        return [tm.cast(g, x.dtype) if x.dtype in ps.FLOAT_DTYPES else None]
    if name in _NO_GRAD:
        return [None] * len(inputs)
    if name in _ZERO_GRAD:
        return [tm.second(i, _c(0, i)) if i.dtype in ps.FLOAT_DTYPES else None for i in inputs]
    rule = _RULES.get(name)
    if rule is None:
        raise NotImplementedError(f"gradient of Elemwise{{{name}}} is not implemented")
    grads = rule(list(inputs), z, g)
    out = []
    for x, gx in zip(inputs, grads):
        if gx is None or x.dtype not in ps.FLOAT_DTYPES:
            out.append(None)
            continue
        out.append(tm.cast(reduce_to(gx, x), x.dtype))
    return out


def reduce_to(g: TensorLike, x: Variable):
    """Sum ``g`` over the axes along which ``x`` was broadcast (static size 1)."""
    axes = tuple(
        i for i, (xs, gs) in enumerate(zip(x.type.shape, g.type.shape)) if xs == 1 and gs != 1
    )
    if g.ndim > x.ndim:
        lead = tuple(range(g.ndim - x.ndim))
        g = tm.sum(g, axis=lead)
    if axes:
        g = tm.sum(g, axis=axes, keepdims=True)
    return g


def elemwise_rop(node: Apply, eval_points: list[Variable | None]):
    """Directional derivative of an Elemwise node's (single) output: the sum over inputs of
    the partial derivative times the input's tangent. Each rule above is linear in its output
    gradient and element-wise before ``reduce_to``, so given a tangent in place of the output
    gradient its entry for input ``i`` is that input's term."""
    op = node.op
    (z,) = node.outputs
    if z.dtype not in ps.FLOAT_DTYPES:
        return [None]
    sop = op.scalar_op
    name = sop.name
    inputs = list(node.inputs)
    if isinstance(sop, ps.Cast):
        return [None if eval_points[0] is None else tm.cast(eval_points[0], z.dtype)]
    if name in _NO_GRAD or name in _ZERO_GRAD:
        return [None]
    rule = _RULES.get(name)
    if rule is None:
        return NotImplemented  # Rop tries the gradient, and names the Op if that fails too
    terms = []
    for i, v in enumerate(eval_points):
        if v is None or inputs[i].dtype not in ps.FLOAT_DTYPES:
            continue
        t = rule(inputs, z, tm.cast(v, z.dtype))[i]
        if t is not None:
            terms.append(t)
    if not terms:
        return [None]
    r = tm.cast(terms[0] if len(terms) == 1 else tm.add(*terms), z.dtype)
    # the terms may all miss an axis their tangents broadcast along (declared size 1, as
    # for grad): give the sum the output's shape
    if any(rs == 1 and zs != 1 for rs, zs in zip(r.type.shape, z.type.shape)):
        r = tm.second(z, r)
    return [r]
